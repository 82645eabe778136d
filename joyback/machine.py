"""Endpoints that machines call: declared where they are defined, answered by their own handler.

A view Meta's or TikTok's servers, the PSP or a brand's backend call is decorated @machine_endpoint
and its path is mounted in settings.MACHINE_URLCONF (config.machine_urls) as well as in the site's
URLconf. The WSGI and ASGI applications (config.wsgi, config.asgi) hand a request for a path
mounted there to a handler with its own short middleware list, settings.MACHINE_MIDDLEWARE, and
every other request to Django's own handler with settings.MIDDLEWARE.
"""

import functools

import django
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.asgi import get_script_prefix as asgi_script_prefix
from django.core.handlers.exception import convert_exception_to_response
from django.core.handlers.wsgi import WSGIHandler, get_path_info
from django.urls import URLResolver, get_resolver
from django.urls.resolvers import RoutePattern
from django.utils import translation
from django.utils.module_loading import import_string
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt


def machine_endpoint(view):
    """For a view that is called by a machine, authenticated by a signature or an API key, never by
    a browser: no CSRF check and no frame header even where it is reached through the browser's
    middleware (the test client, a URLconf that mounts it elsewhere). Mount it in
    config.machine_urls too; tests/test_middleware.py fails for a decorated view that is not."""
    view = csrf_exempt(xframe_options_exempt(view))
    view.machine_endpoint = True
    return view


def is_machine_endpoint(view) -> bool:
    return getattr(view, "machine_endpoint", False)


@functools.cache
def _machine_paths(urlconf: str) -> dict:
    """Each path the machine URLconf mounts, with its ResolverMatch: found once, so that picking a
    handler is one dict lookup, for the pages too. A machine is given one fixed URL, so a pattern
    with a converter or a regular expression is refused."""
    found = {}

    def walk(patterns, prefix):
        for pattern in patterns:
            if not isinstance(pattern.pattern, RoutePattern) or pattern.pattern.converters:
                raise ImproperlyConfigured(f"{urlconf}: {pattern.pattern} is not a fixed path")
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route)
            else:
                found["/" + route] = get_resolver(urlconf).resolve("/" + route)

    walk(get_resolver(urlconf).url_patterns, "")
    return found


def machine_match(path_info: str):
    """The machine endpoint a path names (a ResolverMatch), or None for every other path."""
    return _machine_paths(settings.MACHINE_URLCONF).get(path_info)


def machine_environ(environ) -> bool:
    """Whether a WSGI request is for a machine endpoint."""
    return machine_match(get_path_info(environ) or "/") is not None


def machine_answer_middleware(get_response):
    """Last of settings.MACHINE_MIDDLEWARE: what a machine's answer still needs of the browser's
    middleware. The site's language, never the one the previous request on this thread left active
    (LocaleMiddleware activates a browser's and leaves it), and a Content-Length, which
    CommonMiddleware sets, so that a server never has to send the answer chunked."""

    def middleware(request):
        translation.activate(settings.LANGUAGE_CODE)
        response = get_response(request)
        if not response.streaming and not response.has_header("Content-Length"):
            response.headers["Content-Length"] = str(len(response.content))
        return response

    return middleware


class MachineChain:
    """Django's handler with settings.MACHINE_MIDDLEWARE instead of settings.MIDDLEWARE, resolving in
    settings.MACHINE_URLCONF. The thread's URLconf stays the site's, so reverse() in a view and the
    404 and 500 answers are the same as through the browser's handler."""

    def load_middleware(self, is_async=False):
        # As BaseHandler.load_middleware, which reads settings.MIDDLEWARE only.
        self._view_middleware, self._template_response_middleware, self._exception_middleware = [], [], []
        get_response = self._get_response_async if is_async else self._get_response
        handler, handler_is_async = convert_exception_to_response(get_response), is_async
        for middleware_path in reversed(settings.MACHINE_MIDDLEWARE):
            middleware = import_string(middleware_path)
            middleware_is_async = getattr(middleware, "async_capable", False) and (
                handler_is_async or not getattr(middleware, "sync_capable", True)
            )
            instance = middleware(self.adapt_method_mode(middleware_is_async, handler, handler_is_async))
            if hasattr(instance, "process_view"):
                self._view_middleware.insert(0, self.adapt_method_mode(is_async, instance.process_view))
            if hasattr(instance, "process_template_response"):
                self._template_response_middleware.append(
                    self.adapt_method_mode(is_async, instance.process_template_response)
                )
            if hasattr(instance, "process_exception"):
                self._exception_middleware.append(self.adapt_method_mode(False, instance.process_exception))
            handler, handler_is_async = convert_exception_to_response(instance), middleware_is_async
        self._middleware_chain = self.adapt_method_mode(is_async, handler, handler_is_async)

    def resolve_request(self, request):
        match = machine_match(request.path_info) or get_resolver(settings.MACHINE_URLCONF).resolve(
            request.path_info
        )
        request.resolver_match = match
        return match


class MachineWSGIHandler(MachineChain, WSGIHandler):
    pass


class MachineASGIHandler(MachineChain, ASGIHandler):
    pass


class MachineRouterWSGI:
    """The WSGI application: a machine endpoint's request to the machine handler, the rest to
    Django's, as Channels' URLRouter picks an application by path."""

    def __init__(self):
        self.browser = WSGIHandler()
        self.machine = MachineWSGIHandler()
        _machine_paths(settings.MACHINE_URLCONF)  # now: a worker starts with them, or not at all

    def __call__(self, environ, start_response):
        handler = self.machine if machine_environ(environ) else self.browser
        return handler(environ, start_response)


class MachineRouterASGI:
    """The ASGI application, routing as MachineRouterWSGI does."""

    def __init__(self):
        self.browser = ASGIHandler()
        self.machine = MachineASGIHandler()
        _machine_paths(settings.MACHINE_URLCONF)  # now: a worker starts with them, or not at all

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            prefix = asgi_script_prefix(scope)
            path_info = scope["path"].removeprefix(prefix) if prefix else scope["path"]
            if machine_match(path_info) is not None:
                return await self.machine(scope, receive, send)
        return await self.browser(scope, receive, send)


def wsgi_application() -> MachineRouterWSGI:
    """What config.wsgi serves: django.core.wsgi.get_wsgi_application(), routed."""
    django.setup(set_prefix=False)
    return MachineRouterWSGI()


def asgi_application() -> MachineRouterASGI:
    django.setup(set_prefix=False)
    return MachineRouterASGI()
