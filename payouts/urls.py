from django.urls import path

from payouts import reconciliation_views, views
from payouts.sandbox import bank as sandbox_bank

app_name = "payouts"

urlpatterns = [
    # The sandbox bank, at the PSP API's paths under /sandbox/bank/.
    path("sandbox/bank/v1/payments", sandbox_bank.payments, name="sandbox_bank_payments"),
    path(
        "sandbox/bank/v1/payments/<str:end_to_end_id>",
        sandbox_bank.payment_detail,
        name="sandbox_bank_payment",
    ),
    path("sandbox/bank/v1/payee-verifications", sandbox_bank.payee_verifications, name="sandbox_bank_vop"),
    path("sandbox/bank/v1/payment-files", sandbox_bank.payment_files, name="sandbox_bank_files"),
    path("sandbox/bank/v1/events", sandbox_bank.events, name="sandbox_bank_events"),
    path("p/c/<slug:slug>/payee/", views.payee, name="payee"),
    path("p/iban/", views.iban_feedback, name="iban_feedback"),
    path("p/status/<str:token>/", views.status_payout, name="status_payout"),
    path("p/status/<str:token>/vop/", views.status_vop_choose, name="status_vop_choose"),
    path("c/<slug:slug>/status/<str:token>/", views.status_page, name="status_page"),
    path("brands/<slug:brand_slug>/payouts/", views.payout_list, name="payout_list"),
    path("brands/<slug:brand_slug>/payouts/manual/", views.payout_manual, name="payout_manual"),
    path("brands/<slug:brand_slug>/payouts/<int:payout_id>/", views.payout_detail, name="payout_detail"),
    path(
        "brands/<slug:brand_slug>/payouts/<int:payout_id>/action/", views.payout_action, name="payout_action"
    ),
    path(
        "brands/<slug:brand_slug>/campaigns/<int:campaign_id>/payouts/",
        views.campaign_payouts,
        name="campaign_payouts",
    ),
    *reconciliation_views.urlpatterns_pages(),
]
