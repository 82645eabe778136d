"""The API's one error format, {"error": {"code", "message", "field"}}, for DRF's exception handler,
Django's 404 and 500 under /api/, and plain function views."""

from django.http import Http404, HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from rest_framework import exceptions, status
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from joyback.api.auth import ApiKeyAuthentication


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


def api_unavailable(request, *, retry_after: int):
    """The database cannot be reached (a restart, a failover): try again shortly."""
    response = _json_error(
        503, "unavailable", _("The service is briefly unavailable; please try again shortly.")
    )
    response["Retry-After"] = str(retry_after)
    return response


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
