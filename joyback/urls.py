"""The composition root: every app's pages and APIs are mounted here and nowhere else."""

from django.contrib import admin
from django.urls import include, path
from django.views import defaults

from joyback import views
from joyback.api.framework import api_not_found, api_server_error

admin.site.site_header = "JoyBack admin"
admin.site.site_title = "JoyBack admin"

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz/", views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("accounts/", include("allauth.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    # Django tries patterns in order: verification's go first, since the provider webhooks are the
    # busiest paths and would otherwise be matched only after every page pattern before them.
    path("", include("verification.urls")),
    path("", include("campaigns.urls")),
    path("", include("compliance.urls")),
    path("", include("payouts.urls")),
    # The Cashback API: each app serves its own endpoints.
    path("api/v1/", include("joyback.api.urls")),
    path("api/v1/", include("campaigns.api")),
    path("api/v1/", include("verification.api")),
    path("api/v1/", include("payouts.reconciliation_views")),
]


def handler404(request, exception):
    """JSON under /api/ (API clients never get an HTML page), the usual page elsewhere."""
    if request.path.startswith("/api/"):
        return api_not_found(request, exception)
    return defaults.page_not_found(request, exception)


def handler500(request):
    if request.path.startswith("/api/"):
        return api_server_error(request)
    return defaults.server_error(request)
