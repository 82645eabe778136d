"""Dated API versions, as Stripe dates its own: a key is pinned at creation to the version of that
day, a request may ask for another in the JoyBack-Version header, and every answer under /api/
says which version it was given in. docs/api-changelog.md says what each version changed."""

from django.conf import settings
from django.http import JsonResponse
from django.utils import translation
from django.utils.translation import gettext as _

HEADER = "JoyBack-Version"
# Oldest first. A new version is added here, with its entry in docs/api-changelog.md, when a
# change would break a client written against the one before.
VERSIONS = ("2026-12-01",)
LATEST = VERSIONS[-1]


def api_version_set(request, version: str) -> None:
    """The version the request's key is pinned to (DRF's request wraps Django's)."""
    getattr(request, "_request", request).api_version = version


def api_version_middleware(get_response):
    """In both chains, the browser's and the machine endpoints', so that POST /api/v1/events is
    answered with the header too. An unknown version is refused before any work is done."""

    def middleware(request):
        if not request.path_info.startswith("/api/"):
            return get_response(request)
        sent = request.headers.get(HEADER)
        asked = (sent or "").strip()
        # A header sent empty is a client's bug (an unset variable), not a request for the default.
        if sent is not None and asked not in VERSIONS:
            with translation.override(settings.LANGUAGE_CODE):  # as the machine endpoints answer
                message = _("%(header)s is one of: %(versions)s.") % {
                    "header": HEADER,
                    "versions": ", ".join(VERSIONS),
                }
            response = JsonResponse(
                {
                    "error": {
                        "code": "version_unknown",
                        "message": message,
                        "field": HEADER,
                    }
                },
                status=400,
            )
            response[HEADER] = LATEST
            return response
        response = get_response(request)
        response[HEADER] = asked or getattr(request, "api_version", None) or LATEST
        return response

    return middleware
