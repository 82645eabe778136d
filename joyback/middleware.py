"""Machine-to-machine endpoints are answered without the browser middleware."""

from django.conf import settings
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from django.utils import translation

from joyback.machine import is_machine_endpoint


def _machine_paths(patterns, prefix: str = "") -> list[str]:
    """The paths of the views declared @machine_endpoint (fixed paths only: a machine's URL is)."""
    found = []
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            found += _machine_paths(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern) and is_machine_endpoint(pattern.callback):
            found.append("/" + route)
    return found


class MachineEndpointsMiddleware:
    """The provider webhooks and POST /api/v1/events, declared @machine_endpoint where they are
    defined, are called by Meta's and TikTok's servers, the PSP and brands' backends, authenticated
    by a signature or an API key: they have no session, user, CSRF token, language, messages or
    frames. Their view is called straight from here, after SecurityMiddleware (and whitenoise), so
    the busiest paths skip the session, locale, CSRF, auth, message and frame middleware and the walk
    through every page pattern (measured: twice the CPU per request through the whole chain).
    Everything else goes down the full chain."""

    def __init__(self, get_response):
        self.get_response = get_response
        self._views = None

    def _machine_views(self) -> dict:
        # Found on first use: the URLconf may import views that import settings-dependent code.
        if self._views is None:
            self._views = {path: resolve(path) for path in _machine_paths(get_resolver().url_patterns)}
        return self._views

    def __call__(self, request):
        match = self._machine_views().get(request.path_info)
        if match is None:
            return self.get_response(request)
        request.resolver_match = match
        translation.activate(settings.LANGUAGE_CODE)  # not the previous request's language
        response = match.func(request, *match.args, **match.kwargs)
        if callable(getattr(response, "render", None)):
            response = response.render()  # as Django's handler renders a view's deferred response
        if not response.streaming and not response.has_header("Content-Length"):
            response.headers["Content-Length"] = str(len(response.content))
        return response
