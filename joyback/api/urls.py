"""The API's own pages: its OpenAPI schema and the documentation page that renders it."""

from django.urls import path
from django.views.generic import TemplateView
from drf_spectacular.views import SpectacularAPIView

urlpatterns = [
    path(
        "schema/",
        SpectacularAPIView.as_view(authentication_classes=[], permission_classes=[]),
        name="api_schema",
    ),
    path("docs/", TemplateView.as_view(template_name="api/docs.html"), name="api_docs"),
]
