from django.urls import include, path

from campaigns import consent_views, developers, invoice_views, mode_views, overview_views, team_views, views

# Grouped by their first segment (a plain prefix is a string comparison): a request is resolved
# without trying every brand page's pattern first.
campaign = "campaigns/<int:campaign_id>/"
dev = "developers/"

brand_pages = [
    path("", views.dashboard, name="brand_dashboard"),
    path("mode/", mode_views.brand_mode_switch, name="brand_mode"),
    path("overview/traffic/", overview_views.overview_traffic, name="brand_overview_traffic"),
    path("finance/", overview_views.finance, name="brand_finance"),
    path("finance/vat-number/", overview_views.brand_vat_id, name="brand_vat_id"),
    path("invoices/<int:invoice_id>.pdf", invoice_views.invoice_pdf_download, name="brand_invoice_pdf"),
    path("invoices/<int:invoice_id>.csv", invoice_views.invoice_csv_download, name="brand_invoice_csv"),
    path("topup/", views.brand_topup, name="brand_topup"),
    path("allowance/", views.brand_allowance, name="brand_allowance"),
    path("legal/", views.brand_legal_details, name="brand_legal_details"),
    path("accounts/<int:account_id>/", views.account_detail, name="brand_account"),
    path("team/", team_views.team, name="brand_team"),
    path("team/invite/", team_views.team_invite, name="brand_team_invite"),
    path(
        "team/invitations/<int:invitation_id>/withdraw/",
        team_views.team_invitation_revoke,
        name="brand_team_invitation_revoke",
    ),
    path(
        "team/members/<int:membership_id>/role/", team_views.team_member_role, name="brand_team_member_role"
    ),
    path(
        "team/members/<int:membership_id>/remove/",
        team_views.team_member_remove,
        name="brand_team_member_remove",
    ),
    path("campaigns/", views.campaign_list, name="campaign_list"),
    path("campaigns/new/", views.campaign_new, name="campaign_new"),
    path(campaign, views.campaign_detail, name="campaign_detail"),
    path(campaign + "edit/", views.campaign_edit, name="campaign_edit"),
    path(campaign + "rules/", views.campaign_rule_save, name="campaign_rule_save"),
    path(campaign + "rules/brief/", views.campaign_rule_brief_preview, name="campaign_rule_brief_preview"),
    path(campaign + "rules/<int:rule_id>/delete/", views.campaign_rule_delete, name="campaign_rule_delete"),
    path(campaign + "fund/", views.campaign_fund_view, name="campaign_fund"),
    path(campaign + "status/", views.campaign_status, name="campaign_status"),
    path(campaign + "dry-run/", views.campaign_dry_run_view, name="campaign_dry_run"),
    path(campaign + "copy-to-test/", views.campaign_copy_to_test_view, name="campaign_copy_to_test"),
    path(campaign + "licence/", views.campaign_licence_save, name="campaign_licence_save"),
    path(campaign + "consent/", consent_views.campaign_consent, name="campaign_consent"),
    path(dev, developers.developers, name="developers"),
    path(dev + "keys/", developers.api_key_new, name="api_key_new"),
    path(dev + "keys/<int:key_id>/rotate/", developers.api_key_rotate_view, name="api_key_rotate"),
    path(dev + "keys/<int:key_id>/revoke/", developers.api_key_revoke_view, name="api_key_revoke"),
    path(dev + "webhooks/", developers.webhook_endpoint_new, name="webhook_endpoint_new"),
    path(dev + "webhooks/<int:endpoint_id>/", developers.webhook_endpoint, name="webhook_endpoint"),
    path(
        dev + "webhooks/<int:endpoint_id>/edit/",
        developers.webhook_endpoint_edit,
        name="webhook_endpoint_edit",
    ),
    path(
        dev + "webhooks/<int:endpoint_id>/rotate/",
        developers.webhook_secret_rotate_view,
        name="webhook_secret_rotate",
    ),
    path(
        dev + "deliveries/<int:delivery_id>/redeliver/",
        developers.webhook_redeliver_view,
        name="webhook_redeliver",
    ),
]

urlpatterns = [
    path("c/<slug:slug>/", views.landing, name="campaign_landing"),
    path("invitations/<str:token>/", team_views.invitation_page, name="invitation_accept"),
    path(
        "brands/",
        include(
            [
                path("", views.brand_home, name="brand_home"),
                path("new/", views.brand_new, name="brand_new"),
                path("<slug:brand_slug>/", include(brand_pages)),
            ]
        ),
    ),
]
