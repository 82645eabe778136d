"""The API's own pages: its OpenAPI schema and the documentation page that renders it."""

from csp.decorators import csp_update
from django.urls import path
from django.views.generic import TemplateView
from drf_spectacular.views import SpectacularAPIView

urlpatterns = [
    path(
        "schema/",
        SpectacularAPIView.as_view(authentication_classes=[], permission_classes=[]),
        name="api_schema",
    ),
    path(
        "docs/",
        # ReDoc styles itself with <style> elements and renders in a blob: worker: this page only.
        csp_update({"style-src": ["'unsafe-inline'"], "worker-src": ["blob:"]})(
            TemplateView.as_view(template_name="api/docs.html")
        ),
        name="api_docs",
    ),
]
