"""The two ways an API endpoint is written: a DRF view (ApiView), or for the busiest endpoint a plain
function view (api_function_view) with the same key authentication, scopes, rate limit, JSON errors
and Idempotency-Key, without DRF's request, negotiation and rendering (a third of a request's time
on a busy server)."""

import functools
import threading

from rest_framework import exceptions
from rest_framework.views import APIView

from joyback.api.auth import ApiKeyAuthentication, HasScope, KeyRateThrottle
from joyback.api.exceptions import api_error_response
from joyback.api.idempotency import Replay, RequestIdempotency
from joyback.api.models import ApiKey
from joyback.limits import json_loads


class ApiView(APIView):
    """Base of every API endpoint: key auth, scope, rate limit, JSON errors, Idempotency-Key."""

    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [HasScope]
    throttle_classes = [KeyRateThrottle]
    scopes: dict = {}
    _idempotency = None

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if request.method == "POST":
            self._idempotency = RequestIdempotency(request, request.auth)
            self._idempotency.begin()

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
            if self._idempotency is not None:
                self._idempotency.release()
            raise
        if self._idempotency is not None:
            self._idempotency.finish(response)
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


def api_function_view(view):
    """A plain function view of the API: a replay and a refusal (APIException) become their answers,
    as ApiView gives them."""

    @functools.wraps(view)
    def wrapped(*args, **kwargs):
        try:
            return view(*args, **kwargs)
        except Replay as replay:
            return replay.response
        except exceptions.APIException as exc:
            return api_error_response(exc)

    return wrapped


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
    """serializer_class(data=data).is_valid(raise_exception=True).validated_data, through DRF's
    public run_validation() on one serializer per thread and class: a new serializer deep-copies
    every declared field, most of a small input's validation time, and run_validation() keeps no
    state in the serializer (the same errors are raised, as is_valid would raise them)."""
    serializers = _thread_serializers.__dict__
    serializer = serializers.get(serializer_class)
    if serializer is None:
        serializer = serializers[serializer_class] = serializer_class()
    return serializer.run_validation(data)


def _refuse_constant(name):
    raise ValueError(f"{name} is not valid JSON")
