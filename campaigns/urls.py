from django.urls import path

from campaigns import views

urlpatterns = [
    path("brands/", views.brand_home, name="brand_home"),
    path("brands/new/", views.brand_new, name="brand_new"),
    path("brands/<slug:brand_slug>/", views.dashboard, name="brand_dashboard"),
    path(
        "brands/<slug:brand_slug>/accounts/<int:account_id>/",
        views.account_detail,
        name="brand_account",
    ),
]
