"""Machine-to-machine endpoints are answered without the browser middleware."""

from django.conf import settings
from django.urls import resolve, reverse
from django.utils import translation


class MachineEndpointsMiddleware:
    """The provider webhooks and POST /api/v1/events (settings.MACHINE_URL_NAMES) are called by
    Meta's and TikTok's servers and by brands' backends, authenticated by a signature or an API key:
    they have no session, user, CSRF token, language, messages or frames. Their view is called
    straight from here, after SecurityMiddleware (and whitenoise), so the busiest paths skip the
    session, locale, CSRF, auth, message and frame middleware and the walk through every page
    pattern. Everything else goes down the full chain."""

    def __init__(self, get_response):
        self.get_response = get_response
        self._views = None

    def _machine_views(self) -> dict:
        # Reversed on first use: the URLconf may import views that import settings-dependent code.
        if self._views is None:
            paths = [reverse(name) for name in settings.MACHINE_URL_NAMES]
            self._views = {path: resolve(path) for path in paths}
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
