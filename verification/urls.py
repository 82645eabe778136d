from django.urls import path, re_path

from verification import views
from verification.sandbox import tiktok as sandbox_tiktok
from verification.sandbox import whatsapp as sandbox_whatsapp

app_name = "verification"

urlpatterns = [
    path("v/c/<slug:slug>/steps/", views.steps, name="steps"),
    path("v/c/<slug:slug>/tiktok/", views.tiktok_start, name="tiktok_start"),
    path("v/c/<slug:slug>/whatsapp/", views.whatsapp_start, name="whatsapp_start"),
    path("v/c/<slug:slug>/share/", views.share_submit_view, name="share_submit"),
    path("v/c/<slug:slug>/share/recheck/", views.share_recheck_view, name="share_recheck"),
    path("v/tiktok/callback/", views.tiktok_callback, name="tiktok_callback"),
    path("v/webhooks/tiktok/", views.tiktok_webhook, name="tiktok_webhook"),
    path("v/webhooks/whatsapp/", views.whatsapp_webhook, name="whatsapp_webhook"),
    path("v/status/<str:token>/actions/", views.status_actions, name="status_actions"),
    path("brands/<slug:brand_slug>/review/", views.review_queue, name="review_queue"),
    path("brands/<slug:brand_slug>/review/<int:claim_id>/", views.review_decide, name="review_decide"),
    path("brands/<slug:brand_slug>/campaigns/<int:campaign_id>/funnel/", views.funnel, name="funnel"),
    path(
        "brands/<slug:brand_slug>/campaigns/<int:campaign_id>/claims/",
        views.recent_claims,
        name="recent_claims",
    ),
    # The sandbox providers, at TikTok's and Meta's paths under /sandbox/ (with or without the slash).
    re_path(
        r"^sandbox/tiktok/v2/auth/authorize/?$", sandbox_tiktok.authorize, name="sandbox_tiktok_authorize"
    ),
    re_path(r"^sandbox/tiktok/v2/oauth/token/?$", sandbox_tiktok.token, name="sandbox_tiktok_token"),
    re_path(r"^sandbox/tiktok/v2/user/info/?$", sandbox_tiktok.user_info, name="sandbox_tiktok_user_info"),
    re_path(
        r"^sandbox/tiktok/v2/video/query/?$", sandbox_tiktok.video_query, name="sandbox_tiktok_video_query"
    ),
    path("sandbox/tiktok/studio/", sandbox_tiktok.studio, name="sandbox_tiktok_studio"),
    path("sandbox/whatsapp/phone/", sandbox_whatsapp.phone, name="sandbox_whatsapp_phone"),
    path(
        "sandbox/whatsapp/graph/v21.0/<str:phone_number_id>/messages",
        sandbox_whatsapp.graph_messages,
        name="sandbox_whatsapp_messages",
    ),
]
