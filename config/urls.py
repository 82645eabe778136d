"""The composition root: every app's pages and APIs are mounted here and nowhere else (the machine
endpoints also in config.machine_urls, for their own handler)."""

from django.contrib import admin
from django.urls import include, path
from django.views import defaults

from joyback import views
from joyback.api.exceptions import api_not_found, api_server_error
from joyback.metrics import metrics

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz/", views.healthz, name="healthz"),
    path("healthz/live", views.healthz_live, name="healthz_live"),
    path("healthz/ready", views.healthz_ready, name="healthz_ready"),
    # Browsers ask for /favicon.ico on pages (and files) that name no icon.
    path("favicon.ico", views.favicon),
    path("healthz/work/", views.healthz_work, name="healthz_work"),
    path("metrics", metrics, name="metrics"),
    path("admin/", admin.site.urls),
    path("accounts/", include("allauth.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    # The Cashback API, each app serving its own endpoints: one prefix, tried before the pages, so an
    # API call is resolved without walking every page pattern first.
    path(
        "api/v1/",
        include(
            [
                path("", include("joyback.api.urls")),
                path("", include("campaigns.api")),
                path("", include("verification.api")),
                path("", include("payouts.api")),
            ]
        ),
    ),
    # The apps share no path, so their order only decides how many patterns a request walks: the
    # busiest public pages first (landing, then the claim and status pages, then the steps).
    path("", include("campaigns.urls")),
    path("", include("payouts.urls")),
    path("", include("verification.urls")),
    path("", include("compliance.urls")),
]


def handler404(request, exception):
    """JSON under /api/ (API clients never get an HTML page), the usual page elsewhere."""
    if request.path.startswith("/api/"):
        return api_not_found(request, exception)
    return defaults.page_not_found(request, exception)


def handler500(request):
    """503 with Retry-After while the database cannot be reached; otherwise the 500 (JSON under /api/)."""
    if views.database_outage():
        return views.service_unavailable(request)
    if request.path.startswith("/api/"):
        return api_server_error(request)
    return defaults.server_error(request)
