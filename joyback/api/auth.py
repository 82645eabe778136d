"""Who calls the API and what they may do: the key in the Authorization header, its scopes and its
rate limit, for DRF views (the classes) and for plain function views (api_key_required)."""

from django.conf import settings
from django.utils.translation import gettext as _
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import BasePermission
from rest_framework.throttling import BaseThrottle

from joyback.api.keys import api_key_authenticate
from joyback.api.models import ApiKey
from joyback.api.versions import api_version_set
from joyback.ratelimit import rate_limit_window


class ApiClient:
    """request.user of an API request: the brand behind the key, not a person."""

    is_authenticated = True
    is_anonymous = False

    def __init__(self, api_key: ApiKey):
        self.api_key = api_key
        self.brand_id = api_key.brand_id
        self.pk = None

    def __str__(self):
        return f"API key {self.api_key.prefix}"


class ApiKeyAuthentication(BaseAuthentication):
    """Authorization: Bearer jb_<prefix>_<secret>."""

    def authenticate(self, request):
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header:
            return None
        scheme, _sep, secret = header.partition(" ")
        if scheme.lower() != "bearer" or not secret.strip():
            raise exceptions.AuthenticationFailed(_("Send the API key as: Authorization: Bearer <key>."))
        api_key = api_key_authenticate(secret=secret.strip())
        if api_key is None:
            raise exceptions.AuthenticationFailed(_("This API key is unknown, revoked or expired."))
        api_version_set(request, api_key.api_version)
        return ApiClient(api_key), api_key

    def authenticate_header(self, request):
        return 'Bearer realm="api"'


class HasScope(BasePermission):
    """The key must carry the view's scope for this method (view.scopes: {"GET": "read", ...})."""

    message = _("This API key does not have the scope this request needs.")

    def has_permission(self, request, view):
        api_key = request.auth
        if not isinstance(api_key, ApiKey):
            return False
        method = "GET" if request.method == "HEAD" else request.method
        if method == "OPTIONS" or not hasattr(view, method.lower()):
            return True  # OPTIONS says what the endpoint takes; an unknown method becomes a 405
        needed = getattr(view, "scopes", {}).get(method)
        self.message = scope_refusal(needed)
        return needed is not None and needed in api_key.scopes


def scope_refusal(scope) -> str:
    return _("This API key lacks the %(scope)s scope.") % {"scope": scope}


RATE_WINDOW = 60


def key_rate_allow(api_key: ApiKey) -> tuple[bool, int]:
    """Whether the key's request may go on, and the seconds until its window starts again."""
    return rate_limit_window(
        scope="api-key",
        key=str(api_key.pk),
        limit=settings.API_REQUESTS_PER_MINUTE,
        window_seconds=RATE_WINDOW,
    )


class KeyRateThrottle(BaseThrottle):
    def allow_request(self, request, view):
        api_key = request.auth
        if not isinstance(api_key, ApiKey):
            return True
        allowed, self.seconds = key_rate_allow(api_key)
        return allowed

    def wait(self):
        return self.seconds


def api_key_required(request, *, scope: str) -> ApiKey:
    """The request's API key, allowed this scope and within its rate limit; else the refusal."""
    authenticated = ApiKeyAuthentication().authenticate(request)
    if authenticated is None:
        raise exceptions.NotAuthenticated()
    api_key = authenticated[1]
    if scope not in api_key.scopes:
        raise exceptions.PermissionDenied(scope_refusal(scope))
    allowed, wait = key_rate_allow(api_key)
    if not allowed:
        raise exceptions.Throttled(wait=wait)
    return api_key
