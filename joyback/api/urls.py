"""The API's own pages: its OpenAPI schema, the documentation page that renders it and the error
catalogue."""

import re

from csp.decorators import csp_update
from django.shortcuts import render
from django.urls import path
from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.views.generic import TemplateView
from drf_spectacular.views import SpectacularAPIView

from joyback.api.errors import CATALOGUE
from joyback.api.versions import VERSIONS


def _inline_code(text: str) -> str:
    """The catalogue's `code` spans, as the page shows them."""
    return mark_safe(re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(text)))  # noqa: S308 - escaped first


def errors_page(request):
    sections = [
        {
            "title": section.title,
            "codes": [
                {
                    "code": e.code,
                    "status": e.status,
                    "meaning": _inline_code(e.meaning),
                    "action": _inline_code(e.action),
                }
                for e in section.codes
            ],
        }
        for section in CATALOGUE
    ]
    return render(request, "api/errors.html", {"catalogue": sections, "versions": VERSIONS})


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
    path("docs/errors/", errors_page, name="api_errors"),
]
