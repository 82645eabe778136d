from django.urls import include, path, re_path

from verification import brand_tables, consent_views, content_views, shop_views, views
from verification.sandbox import shop_hosts
from verification.sandbox import shops as sandbox_shops
from verification.sandbox import whatsapp as sandbox_whatsapp
from verification.sandbox.tiktok import business as tiktok_business
from verification.sandbox.tiktok import commercial_content as tiktok_commercial
from verification.sandbox.tiktok import content_posting as tiktok_posting
from verification.sandbox.tiktok import display_api as tiktok_display
from verification.sandbox.tiktok import oauth as tiktok_oauth
from verification.sandbox.tiktok import oembed as tiktok_oembed
from verification.sandbox.tiktok import studio as tiktok_studio

app_name = "verification"

# Grouped by their first segment (a plain prefix is a string comparison), as in campaigns.urls.
claim_flow = [
    path("c/<slug:slug>/steps/", views.steps, name="steps"),
    path("c/<slug:slug>/tiktok/", views.tiktok_start, name="tiktok_start"),
    path("c/<slug:slug>/whatsapp/", views.whatsapp_start, name="whatsapp_start"),
    path("c/<slug:slug>/share/", views.share_submit_view, name="share_submit"),
    path("c/<slug:slug>/share/post/", views.tiktok_post_view, name="tiktok_post"),
    path("c/<slug:slug>/share/post/new/", views.tiktok_post_compose_view, name="tiktok_post_compose"),
    path("c/<slug:slug>/share/post/caption/", views.tiktok_post_caption_view, name="tiktok_post_caption"),
    path("c/<slug:slug>/share/recheck/", views.share_recheck_view, name="share_recheck"),
    path("c/<slug:slug>/share/close-window/", views.share_window_close_view, name="share_window_close"),
    path("c/<slug:slug>/share/read-views/", content_views.reach_read_now_view, name="reach_read_now"),
    path("c/<slug:slug>/r/<str:code>/", views.referral_link, name="referral_link"),
    path("tiktok/callback/", views.tiktok_callback, name="tiktok_callback"),
    path("status/<str:token>/actions/", views.status_actions, name="status_actions"),
    path(
        "status/<str:token>/licences/<int:grant_id>/revoke/",
        content_views.licence_revoke_view,
        name="licence_revoke",
    ),
    path(
        "status/<str:token>/consents/<str:channel>/withdraw/",
        consent_views.status_consent_withdraw,
        name="status_consent_withdraw",
    ),
    path("unsubscribe/<str:token>/", consent_views.unsubscribe, name="unsubscribe"),
    path("shops/shopify/callback/", shop_views.shopify_callback, name="shopify_callback"),
    path("shops/woocommerce/callback/", shop_views.woocommerce_callback, name="woocommerce_callback"),
    path("shops/woocommerce/return/", shop_views.woocommerce_return, name="woocommerce_return"),
    path("shops/<str:public_id>/webhook/", shop_views.shop_webhook, name="shop_webhook"),
    path(
        "shops/<str:public_id>/claim/<str:order_id>/<str:signature>/",
        shop_views.shop_claim,
        name="shop_claim",
    ),
]

brand_pages = [
    path("claims/", brand_tables.claims, name="claims"),
    path("claims/csv/", brand_tables.claims_csv, name="claims_csv"),
    path("people/", brand_tables.people, name="people"),
    path("people/csv/", brand_tables.people_csv, name="people_csv"),
    path("overview/reach/", brand_tables.overview_reach, name="overview_reach"),
    path("overview/referrals/", brand_tables.overview_referrals, name="overview_referrals"),
    path("review/", views.review_queue, name="review_queue"),
    path("review/<int:claim_id>/", views.review_decide, name="review_decide"),
    path("campaigns/<int:campaign_id>/funnel/", views.funnel, name="funnel"),
    path("campaigns/<int:campaign_id>/claims/", views.recent_claims, name="recent_claims"),
    path("content/", content_views.library, name="content_library"),
    path("content/export.csv", content_views.library_csv, name="content_library_csv"),
    path("content/<int:share_id>/", content_views.library_item, name="content_library_item"),
    path("shops/", shop_views.shops, name="shops"),
    path("shops/<int:shop_id>/", shop_views.shop_detail, name="shop_detail"),
    path("shops/<int:shop_id>/disconnect/", shop_views.shop_disconnect_view, name="shop_disconnect"),
]

# The sandbox providers, at TikTok's and Meta's paths under /sandbox/ (with or without the slash).
sandbox = [
    re_path(r"^tiktok/v2/auth/authorize/?$", tiktok_oauth.authorize, name="sandbox_tiktok_authorize"),
    re_path(r"^tiktok/v2/oauth/token/?$", tiktok_oauth.token, name="sandbox_tiktok_token"),
    re_path(r"^tiktok/v2/user/info/?$", tiktok_display.user_info, name="sandbox_tiktok_user_info"),
    re_path(r"^tiktok/v2/video/query/?$", tiktok_display.video_query, name="sandbox_tiktok_video_query"),
    re_path(r"^tiktok/v2/video/list/?$", tiktok_display.video_list, name="sandbox_tiktok_video_list"),
    re_path(
        r"^tiktok/short/(?P<host>v[mt]\.tiktok\.com)/(?P<code>[A-Za-z0-9]{1,30})/?$",
        tiktok_display.short_link,
        name="sandbox_tiktok_short_link",
    ),
    re_path(
        r"^tiktok/v2/research/adlib/commercial_content/query/?$",
        tiktok_commercial.query,
        name="sandbox_tiktok_commercial_content",
    ),
    re_path(
        r"^tiktok/v2/post/publish/creator_info/query/?$",
        tiktok_posting.creator_info,
        name="sandbox_tiktok_creator_info",
    ),
    re_path(
        r"^tiktok/v2/post/publish/video/init/?$", tiktok_posting.video_init, name="sandbox_tiktok_video_init"
    ),
    re_path(
        r"^tiktok/v2/post/publish/status/fetch/?$", tiktok_posting.status_fetch, name="sandbox_tiktok_status"
    ),
    path("tiktok/upload/video/", tiktok_posting.upload, name="sandbox_tiktok_upload"),
    path("tiktok/avatar/<str:open_id>.svg", tiktok_posting.avatar, name="sandbox_tiktok_avatar"),
    re_path(r"^tiktok/oembed/?$", tiktok_oembed.oembed, name="sandbox_tiktok_oembed"),
    re_path(
        r"^tiktok/business/open_api/v1\.3/tt_video/info/?$",
        tiktok_business.ad_code_info,
        name="sandbox_tiktok_ad_code_info",
    ),
    path("tiktok/studio/", tiktok_studio.studio, name="sandbox_tiktok_studio"),
    path("whatsapp/phone/", sandbox_whatsapp.phone, name="sandbox_whatsapp_phone"),
    path("whatsapp/inbox/", sandbox_whatsapp.inbox, name="sandbox_whatsapp_inbox"),
    path(
        "whatsapp/graph/v21.0/<str:waba_id>/message_templates",
        sandbox_whatsapp.graph_templates,
        name="sandbox_whatsapp_templates",
    ),
    path("shops/<str:public_id>/", sandbox_shops.shop_page, name="sandbox_shop"),
    re_path(
        r"^shop-hosts/(?P<domain>[a-z0-9.-]+)/admin/oauth/authorize/?$",
        shop_hosts.shopify_authorize,
        name="sandbox_shopify_authorize",
    ),
    re_path(
        r"^shop-hosts/(?P<domain>[a-z0-9.-]+)/admin/oauth/access_token/?$",
        shop_hosts.shopify_access_token,
        name="sandbox_shopify_access_token",
    ),
    re_path(
        r"^shop-hosts/(?P<domain>[a-z0-9.-]+)/wc-auth/v1/authorize/?$",
        shop_hosts.woocommerce_authorize,
        name="sandbox_woocommerce_authorize",
    ),
    re_path(
        r"^shop-hosts/(?P<domain>[a-z0-9.-]+)/wp-json/wc/v3/orders/?$",
        shop_hosts.woocommerce_orders,
        name="sandbox_woocommerce_orders",
    ),
    path(
        "whatsapp/graph/v21.0/<str:phone_number_id>/messages",
        sandbox_whatsapp.graph_messages,
        name="sandbox_whatsapp_messages",
    ),
    path("whatsapp/signup/", sandbox_whatsapp.signup, name="sandbox_whatsapp_signup"),
    path(
        "whatsapp/graph/v21.0/oauth/access_token",
        sandbox_whatsapp.graph_oauth_access_token,
        name="sandbox_whatsapp_oauth_access_token",
    ),
    path(
        "whatsapp/graph/v21.0/debug_token",
        sandbox_whatsapp.graph_debug_token,
        name="sandbox_whatsapp_debug_token",
    ),
    path(
        "whatsapp/graph/v21.0/<str:waba_id>/phone_numbers",
        sandbox_whatsapp.graph_phone_numbers,
        name="sandbox_whatsapp_phone_numbers",
    ),
    path(
        "whatsapp/graph/v21.0/<str:waba_id>/subscribed_apps",
        sandbox_whatsapp.graph_subscribed_apps,
        name="sandbox_whatsapp_subscribed_apps",
    ),
    path(
        "whatsapp/graph/v21.0/<str:phone_number_id>",
        sandbox_whatsapp.graph_phone_number,
        name="sandbox_whatsapp_phone_number",
    ),
]

# Called by TikTok's and Meta's servers: the machine handler answers them (config.machine_urls).
machine_urlpatterns = [
    path("v/webhooks/tiktok/", views.tiktok_webhook, name="tiktok_webhook"),
    path("v/webhooks/whatsapp/", views.whatsapp_webhook, name="whatsapp_webhook"),
]

urlpatterns = [
    path("v/", include(claim_flow)),
    path("brands/<slug:brand_slug>/", include(brand_pages)),
    path("sandbox/", include(sandbox)),
    *machine_urlpatterns,
]
