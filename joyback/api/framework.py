"""The REST framework pieces every API view shares: key authentication, scopes, the per-key rate
limit, the JSON error format and Idempotency-Key handling (ApiView)."""

import logging
import time

from django.conf import settings
from django.core.cache import cache
from django.http import Http404, HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from rest_framework import exceptions, status
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.throttling import BaseThrottle
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from joyback.api.models import ApiKey
from joyback.api.services import (
    IdempotencyOutcome,
    api_key_authenticate,
    idempotency_answer_store,
    idempotency_begin,
    idempotency_finish,
    idempotency_lookup,
    idempotency_release,
    request_fingerprint,
)

logger = logging.getLogger(__name__)


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
        self.message = _("This API key lacks the %(scope)s scope.") % {"scope": needed}
        return needed is not None and needed in api_key.scopes


class KeyRateThrottle(BaseThrottle):
    """A fixed window per key in the shared cache (Redis in production): atomic add/incr."""

    window = 60

    def allow_request(self, request, view):
        api_key = request.auth
        if not isinstance(api_key, ApiKey):
            return True
        limit = settings.API_REQUESTS_PER_MINUTE
        now = time.time()
        window_start = int(now // self.window) * self.window
        self.remaining = window_start + self.window - now
        bucket = f"api-rate:{api_key.pk}:{window_start}"
        # One cache operation per request in the usual case: the window's counter exists already.
        try:
            return cache.incr(bucket) <= limit
        except ValueError:
            pass
        if cache.add(bucket, 1, timeout=self.window + 1):
            return limit >= 1
        try:
            return cache.incr(bucket) <= limit
        except ValueError:  # the window expired in between: start it again
            cache.add(bucket, 1, timeout=self.window + 1)
            return True

    def wait(self):
        return max(1, round(self.remaining))


def error_body(code: str, message: str, field: str | None = None) -> dict:
    return {"error": {"code": code, "message": str(message), "field": field}}


class ApiError(exceptions.APIException):
    """A refusal with a stable code, for the API's own rules (not field validation)."""

    status_code = status.HTTP_400_BAD_REQUEST

    def __init__(self, code: str, message: str, *, field: str | None = None, status_code: int = 400):
        super().__init__(detail=message, code=code)
        self.error_code, self.field, self.status_code = code, field, status_code


def _first_error(detail, path=()):
    """(field path, code, message) of the first error in a DRF error structure."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            inner = path if key in ("non_field_errors", "detail") else (*path, str(key))
            return _first_error(value, inner)
    if isinstance(detail, list):
        for index, value in enumerate(detail):
            if isinstance(value, dict | list) and value:
                return _first_error(value, (*path, str(index)) if isinstance(value, dict) else path)
            return _first_error(value, path)
    code = getattr(detail, "code", None) or "invalid"
    return (".".join(path) or None, code, str(detail))


def exception_handler(exc, context):
    """Every error the API gives: {"error": {"code", "message", "field"}}."""
    if isinstance(exc, ApiError):
        return Response(error_body(exc.error_code, exc.detail, exc.field), status=exc.status_code)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None  # a bug: Django's 500 handler answers in JSON under /api/
    if isinstance(exc, exceptions.ValidationError):
        field, code, message = _first_error(exc.detail)
        response.data = error_body(code, message, field)
        return response
    if isinstance(exc, Http404 | exceptions.NotFound):
        code, message = "not_found", _("No such object.")
    elif isinstance(exc, exceptions.APIException):
        codes = exc.get_codes()
        code, message = (codes if isinstance(codes, str) else exc.default_code), exc.detail
    else:
        code, message = "error", str(exc)
    response.data = error_body(code, message)
    return response


def _json_error(status_code: int, code: str, message: str) -> JsonResponse:
    return JsonResponse(error_body(code, message), status=status_code)


def api_not_found(request, exception=None):
    return _json_error(404, "not_found", _("No such endpoint."))


def api_server_error(request):
    return _json_error(500, "server_error", _("Something went wrong on our side; nothing was changed."))


class Replay(Exception):
    def __init__(self, response):
        self.response = response


class ApiView(APIView):
    """Base of every API endpoint: key auth, scope, rate limit, JSON errors, Idempotency-Key."""

    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [HasScope]
    throttle_classes = [KeyRateThrottle]
    scopes: dict = {}
    # True: the view stores its answer under the Idempotency-Key in its own write transaction
    # (idempotency_for_write), so a request commits once; errors before that are stored here.
    idempotency_inline = False
    _idempotency_record = None
    _idempotency_pending = None

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if request.method == "POST":
            self._idempotency_start(request)

    def _idempotency_start(self, request):
        key = request.META.get("HTTP_IDEMPOTENCY_KEY", "")
        if not key:
            return
        if len(key) > 255:
            raise ApiError(
                "idempotency_key_invalid",
                _("An Idempotency-Key has at most 255 characters."),
                field="Idempotency-Key",
            )
        fingerprint = request_fingerprint(method=request.method, path=request.path, body=request.body)
        if self.idempotency_inline:
            outcome = idempotency_lookup(api_key=request.auth, key=key, fingerprint=fingerprint)
            if outcome is None:
                self._idempotency_pending = (key, fingerprint)
                return
        else:
            outcome = idempotency_begin(api_key=request.auth, key=key, fingerprint=fingerprint)
        self._idempotency_refuse(outcome)
        self._idempotency_record = outcome.record_id

    def idempotency_for_write(self) -> dict:
        """What an inline view passes to its write: the key to store its answer under, or the
        record of an expired key it took afresh. The view answers for it from here on."""
        pending, record = self._idempotency_pending, self._idempotency_record
        self._idempotency_pending = self._idempotency_record = None
        if record is not None:
            return {"idempotency_record_id": record}
        return {"idempotency": pending} if pending else {}

    def idempotency_lost(self, request, write: dict):
        """The write found the key taken by a request that committed meanwhile: answer as its replay."""
        key, fingerprint = write["idempotency"]
        outcome = idempotency_lookup(api_key=request.auth, key=key, fingerprint=fingerprint)
        self._idempotency_refuse(outcome or IdempotencyOutcome(conflict="in_flight"))
        raise ApiError(
            "idempotency_in_flight",
            _("A request with this Idempotency-Key is still being processed; retry shortly."),
            field="Idempotency-Key",
            status_code=409,
        )

    def _idempotency_refuse(self, outcome):
        """Raise the answer an earlier request with this key decides (409, 422 or its replay)."""
        if outcome.conflict == "in_flight":
            raise ApiError(
                "idempotency_in_flight",
                _("A request with this Idempotency-Key is still being processed; retry shortly."),
                field="Idempotency-Key",
                status_code=409,
            )
        if outcome.conflict == "body_mismatch":
            raise ApiError(
                "idempotency_key_reused",
                _("This Idempotency-Key was used with a different request."),
                field="Idempotency-Key",
                status_code=422,
            )
        if outcome.replay is not None:
            record = outcome.replay
            # The stored bytes as they were sent the first time, without parsing and rendering again.
            replayed = HttpResponse(
                record.response_body, status=record.response_status, content_type="application/json"
            )
            replayed["Idempotent-Replayed"] = "true"
            raise Replay(replayed)

    def handle_exception(self, exc):
        if isinstance(exc, Replay):
            return exc.response
        return super().handle_exception(exc)

    def dispatch(self, request, *args, **kwargs):
        try:
            response = super().dispatch(request, *args, **kwargs)
        except Exception:
            if self._idempotency_record:
                idempotency_release(record_id=self._idempotency_record)
            raise
        if self._idempotency_record:
            if response.status_code >= 500:
                idempotency_release(record_id=self._idempotency_record)
            else:
                response.render()
                idempotency_finish(
                    record_id=self._idempotency_record,
                    status=response.status_code,
                    body=response.content.decode(),
                )
        elif self._idempotency_pending and 400 <= response.status_code < 500:
            # A refusal before the view's write: kept like any answer (a 5xx is not: retry freely).
            key, fingerprint = self._idempotency_pending
            response.render()
            idempotency_answer_store(
                api_key=self.request.auth,
                key=key,
                fingerprint=fingerprint,
                status=response.status_code,
                body=response.content.decode(),
            )
        return response
