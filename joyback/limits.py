"""Limits on what a request may send: answered 400 or 413 with a clear message, never a 500."""

import json

from django.conf import settings
from django.http import HttpResponse, JsonResponse

# Deeper than any document we take (events, webhooks, statements' JSON): a body nested deeper is an
# attack on the parser, not data.
JSON_MAX_DEPTH = 32


class JsonTooDeep(ValueError):
    pass


def _depth_check(value, limit: int) -> None:
    # Iterative: the check itself must not recurse on what it is checking.
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            raise JsonTooDeep(f"the JSON is nested more than {limit} levels deep")
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)


def json_loads(body, *, max_depth: int = JSON_MAX_DEPTH, **kwargs):
    """json.loads that refuses a deeply nested body with a ValueError (as for any bad JSON). The
    parser itself gives up with a RecursionError near Python's recursion limit."""
    try:
        value = json.loads(body, **kwargs)
    except RecursionError as exc:
        raise JsonTooDeep(f"the JSON is nested more than {max_depth} levels deep") from exc
    _depth_check(value, max_depth)
    return value


class RequestSizeLimitMiddleware:
    """Refuses a body larger than it may be (_limit) by its Content-Length, before anything
    reads it: no upload is written to a temporary file, no form is parsed, for a CSRF check or any
    other. Early in both chains, the browser's and the machine endpoints'."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = -1
        if length < 0:
            return _refusal(request, 400, "bad_request", "The Content-Length header is not a number.")
        limit = _limit(request)
        if length > limit:
            return _refusal(
                request,
                413,
                "too_large",
                f"The request is larger than {_megabytes(limit)} MB, the most we accept.",
            )
        return self.get_response(request)


def _limit(request) -> int:
    """The whole REQUEST_MAX_BYTES for a file upload. Any other body Django refuses beyond
    DATA_UPLOAD_MAX_MEMORY_SIZE once a view reads it, as a 400 page even under /api/."""
    if request.META.get("CONTENT_TYPE", "").startswith("multipart/form-data"):
        return settings.REQUEST_MAX_BYTES
    return min(settings.REQUEST_MAX_BYTES, settings.DATA_UPLOAD_MAX_MEMORY_SIZE or settings.REQUEST_MAX_BYTES)


def _megabytes(size: int) -> str:
    megabytes = size / 2**20
    return f"{megabytes:.0f}" if megabytes >= 10 else f"{megabytes:.1f}".rstrip("0").rstrip(".")


def _refusal(request, status: int, code: str, message: str):
    if request.path.startswith("/api/"):
        return JsonResponse({"error": {"code": code, "message": message, "field": None}}, status=status)
    return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")
