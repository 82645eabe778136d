"""Endpoints that machines call, declared where they are defined."""

import functools

from django.conf import settings
from django.utils import translation
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt


def machine_endpoint(view):
    """For a view that Meta's or TikTok's servers, the PSP or a brand's backend call, authenticated by
    a signature or an API key, never by a browser: no CSRF check and no frame header, and answered in
    the site's language whatever Accept-Language says (a machine reads codes, and every answer must be
    the same bytes for the same request). The session, user and messages cost nothing here, as such
    a view reads none of them."""

    @functools.wraps(view)
    def wrapped(request, *args, **kwargs):
        with translation.override(settings.LANGUAGE_CODE):
            response = view(request, *args, **kwargs)
            if callable(getattr(response, "render", None)):
                response = response.render()  # in this language, not the one the browser chain picked
        response.headers.setdefault("Content-Language", settings.LANGUAGE_CODE)
        return response

    return csrf_exempt(xframe_options_exempt(wrapped))
