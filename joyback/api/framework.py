"""The REST framework pieces every API view shares: key authentication, scopes, the per-key rate
limit, the JSON error format and Idempotency-Key handling (ApiView)."""

import functools
import logging
import threading
import time

from django.conf import settings
from django.core.cache import cache
from django.http import Http404, HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from rest_framework import exceptions, status
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import BasePermission
from rest_framework.renderers import JSONRenderer
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
    idempotency_replay_cached,
    request_fingerprint,
)
from joyback.api.versions import api_version_set
from joyback.limits import json_loads

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


def key_rate_allow(api_key: ApiKey) -> tuple[bool, int]:
    """A fixed window per key in the shared cache (Redis in production): atomic add/incr. Whether
    the request may go on, and the seconds until the window starts again."""
    limit = settings.API_REQUESTS_PER_MINUTE
    now = time.time()
    window_start = int(now // RATE_WINDOW) * RATE_WINDOW
    wait = max(1, round(window_start + RATE_WINDOW - now))
    bucket = f"api-rate:{api_key.pk}:{window_start}"
    # One cache operation per request in the usual case: the window's counter exists already.
    try:
        return cache.incr(bucket) <= limit, wait
    except ValueError:
        pass
    if cache.add(bucket, 1, timeout=RATE_WINDOW + 1):
        return limit >= 1, wait
    try:
        return cache.incr(bucket) <= limit, wait
    except ValueError:  # the window expired in between: start it again
        cache.add(bucket, 1, timeout=RATE_WINDOW + 1)
        return True, wait


RATE_WINDOW = 60


class KeyRateThrottle(BaseThrottle):
    def allow_request(self, request, view):
        api_key = request.auth
        if not isinstance(api_key, ApiKey):
            return True
        allowed, self.seconds = key_rate_allow(api_key)
        return allowed

    def wait(self):
        return self.seconds


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
    _idempotency_record = None

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if request.method == "POST":
            self._idempotency_start(request)

    def _idempotency_start(self, request):
        key = idempotency_key_header(request)
        if not key:
            return
        fingerprint = request_fingerprint(method=request.method, path=request.path, body=request.body)
        outcome = idempotency_begin(api_key=request.auth, key=key, fingerprint=fingerprint)
        idempotency_refuse(outcome)
        self._idempotency_record = outcome.record_id

    def handle_exception(self, exc):
        if isinstance(exc, Replay):
            return exc.response
        return super().handle_exception(exc)

    def finalize_response(self, request, response, *args, **kwargs):
        livemode_mark(getattr(response, "data", None), request.auth)
        return super().finalize_response(request, response, *args, **kwargs)

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
        return response


def livemode_mark(data, api_key) -> None:
    """Every answer says whether it is test or live data (`livemode`), as does each object of a
    list; errors are left as they are."""
    if not isinstance(data, dict) or not isinstance(api_key, ApiKey) or list(data) == ["error"]:
        return
    data["livemode"] = api_key.livemode
    for item in data.get("data") if isinstance(data.get("data"), list) else ():
        if isinstance(item, dict):
            item["livemode"] = api_key.livemode


def idempotency_key_header(request) -> str:
    key = request.META.get("HTTP_IDEMPOTENCY_KEY", "")
    if len(key) > 255:
        raise ApiError(
            "idempotency_key_invalid",
            _("An Idempotency-Key has at most 255 characters."),
            field="Idempotency-Key",
        )
    return key


def idempotency_refuse(outcome: IdempotencyOutcome) -> None:
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


# The lean path, for the API's busiest endpoint (POST /events): the same authentication, scope,
# rate limit, JSON errors and Idempotency-Key semantics as ApiView, as plain functions without
# DRF's request, negotiation and rendering (a third of the request's time on a busy server).


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


def api_error_response(exc: exceptions.APIException) -> HttpResponse:
    """What ApiView would answer for this refusal: the JSON error, with its headers."""
    if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        exc.auth_header = ApiKeyAuthentication().authenticate_header(None)
        exc.status_code = status.HTTP_401_UNAUTHORIZED
    answer = exception_handler(exc, {})
    response = HttpResponse(
        JSONRenderer().render(answer.data), status=answer.status_code, content_type="application/json"
    )
    for name in ("WWW-Authenticate", "Retry-After"):
        if answer.has_header(name):
            response[name] = answer[name]
    return response


def json_body(request):
    """The parsed JSON body, refused as DRF's JSONParser refuses it (415, or 400 parse_error)."""
    media_type = request.META.get("CONTENT_TYPE", "").partition(";")[0].strip().lower()
    if media_type != "application/json":
        raise exceptions.UnsupportedMediaType(media_type)
    try:
        return json_loads(request.body, parse_constant=_refuse_constant)
    except ValueError as exc:
        raise exceptions.ParseError(f"JSON parse error - {exc}") from exc


_thread_serializers = threading.local()


def input_validate(serializer_class, data) -> dict:
    """serializer_class(data=data).is_valid(raise_exception=True).validated_data, with one
    serializer per thread and class reused. DRF deep-copies every declared field into each new
    serializer, most of a small input's validation time; validating keeps no state in the fields,
    only in the serializer's own result attributes, which are cleared here."""
    serializers = _thread_serializers.__dict__
    serializer = serializers.get(serializer_class)
    if serializer is None:
        serializer = serializers[serializer_class] = serializer_class(data=data)
    serializer.initial_data = data
    for result in ("_validated_data", "_errors", "_data"):
        serializer.__dict__.pop(result, None)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def _refuse_constant(name):
    raise ValueError(f"{name} is not valid JSON")


class InlineIdempotency:
    """The Idempotency-Key of an endpoint that stores its answer within its own write, so that a
    new request is one statement: the write is tried first and stores the answer under the key
    (for_write); only when the key exists already is it looked up (taken), which raises its
    replay, 409 or 422, or gives the write an expired key to take afresh. A replay read lately is
    answered from the cache. A refusal before the write is stored under the key like any answer."""

    def __init__(self, request, api_key: ApiKey):
        self.api_key = api_key
        self.key = idempotency_key_header(request)
        self.record_id = None
        if not self.key:
            return
        self.fingerprint = request_fingerprint(method=request.method, path=request.path, body=request.body)
        cached = idempotency_replay_cached(api_key=api_key, key=self.key, fingerprint=self.fingerprint)
        if cached is not None:
            idempotency_refuse(cached)

    def for_write(self) -> dict:
        if self.record_id is not None:
            return {"idempotency_record_id": self.record_id}
        return {"idempotency": (self.key, self.fingerprint)} if self.key else {}

    def taken(self) -> dict:
        """The write found the key taken: raise the answer it decides, or (for a key past its
        lifetime, now ours) return what the write passes again."""
        outcome = idempotency_lookup(api_key=self.api_key, key=self.key, fingerprint=self.fingerprint)
        idempotency_refuse(outcome or IdempotencyOutcome(conflict="in_flight"))
        self.record_id = outcome.record_id
        return self.for_write()

    def refused(self, response: HttpResponse) -> HttpResponse:
        """Keep a refusal before the write like any answer (a 5xx is not kept: retry freely)."""
        if not self.key:
            return response
        answer = {"status": response.status_code, "body": response.content.decode()}
        if self.record_id is None and idempotency_answer_store(
            api_key=self.api_key, key=self.key, fingerprint=self.fingerprint, **answer
        ):
            return response
        self.taken()
        idempotency_finish(record_id=self.record_id, **answer)
        return response

    def failed(self) -> None:
        if self.record_id is not None:
            idempotency_release(record_id=self.record_id)


def api_lean(view):
    """Wrap a lean view: Replay and APIException become their answers."""

    @functools.wraps(view)
    def wrapped(*args, **kwargs):
        try:
            return view(*args, **kwargs)
        except Replay as replay:
            return replay.response
        except exceptions.APIException as exc:
            return api_error_response(exc)

    return wrapped
