"""The composition root: every app's pages and APIs are mounted here and nowhere else."""

from django.contrib import admin
from django.urls import include, path

from joyback import views

admin.site.site_header = "JoyBack admin"
admin.site.site_title = "JoyBack admin"

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz/", views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("accounts/", include("allauth.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("", include("campaigns.urls")),
    path("", include("verification.urls")),
    path("", include("payouts.urls")),
]
