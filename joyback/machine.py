"""Endpoints that machines call, declared where they are defined (machine_endpoint), and the one
middleware that treats them differently: the language."""

from django.conf import settings
from django.middleware.locale import LocaleMiddleware as DjangoLocaleMiddleware
from django.utils import translation
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt


def machine_endpoint(view):
    """For a view that Meta's or TikTok's servers, the PSP or a brand's backend call, authenticated by
    a signature or an API key, never by a browser: no CSRF check and no frame header, and (by
    LocaleMiddleware below) answered in the site's language whatever Accept-Language says, with no
    Vary or Content-Language header: a machine reads codes, and the same request gets the same bytes.
    The session, user and messages middleware cost nothing here, as such a view reads none of them."""
    view = csrf_exempt(xframe_options_exempt(view))
    view.machine_endpoint = True
    return view


def _is_machine(view) -> bool:
    return getattr(view, "machine_endpoint", False)


class LocaleMiddleware(DjangoLocaleMiddleware):
    """Django's, except for views declared machine_endpoint, which it leaves in the site's language."""

    def process_view(self, request, view_func, view_args, view_kwargs):
        if _is_machine(view_func):
            translation.activate(settings.LANGUAGE_CODE)
            request.LANGUAGE_CODE = settings.LANGUAGE_CODE

    def process_response(self, request, response):
        match = getattr(request, "resolver_match", None)
        if match is not None and _is_machine(match.func):
            return response
        return super().process_response(request, response)
