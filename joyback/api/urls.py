"""The API's own pages: its OpenAPI schema, the documentation page that renders it and the error
catalogue."""

from django.shortcuts import render
from django.urls import path
from django.views.generic import TemplateView
from drf_spectacular.views import SpectacularAPIView

from joyback.api.errors import CATALOGUE
from joyback.api.versions import VERSIONS


def errors_page(request):
    return render(request, "api/errors.html", {"catalogue": CATALOGUE, "versions": VERSIONS})


urlpatterns = [
    path(
        "schema/",
        SpectacularAPIView.as_view(authentication_classes=[], permission_classes=[]),
        name="api_schema",
    ),
    path("docs/", TemplateView.as_view(template_name="api/docs.html"), name="api_docs"),
    path("docs/errors/", errors_page, name="api_errors"),
]
