from django.urls import path

from payouts import views

app_name = "payouts"

urlpatterns = [
    path("p/c/<slug:slug>/payee/", views.payee, name="payee"),
    path("p/iban/", views.iban_feedback, name="iban_feedback"),
    path("p/status/<str:token>/", views.status_payout, name="status_payout"),
    path("c/<slug:slug>/status/<str:token>/", views.status_page, name="status_page"),
    path(
        "brands/<slug:brand_slug>/campaigns/<int:campaign_id>/payouts/",
        views.campaign_payouts,
        name="campaign_payouts",
    ),
]
