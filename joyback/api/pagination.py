"""Lists the API's way: newest first, `limit` and `starting_after` (an id), {"data", "has_more"}."""

from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response

from joyback.api.exceptions import ApiError

MAX_ID = 2**63 - 1

LIST_PARAMETERS = [
    OpenApiParameter("limit", {"type": "integer", "minimum": 1, "maximum": 100}, description="Default 20"),
    OpenApiParameter(
        "starting_after",
        {"type": "integer", "minimum": 1, "maximum": MAX_ID, "format": "int64"},
        description="The last id of the previous page",
    ),
]


def list_envelope(name: str, item_serializer) -> serializers.Serializer:
    return inline_serializer(
        name=name, fields={"data": item_serializer(many=True), "has_more": serializers.BooleanField()}
    )


def _int_param(request, name: str, *, default: int | None, low: int, high: int | None) -> int | None:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        value = None
    if value is None or value < low or (high is not None and value > high):
        bounds = f"{low}-{high}" if high is not None else f">= {low}"
        raise ApiError(
            "invalid",
            _("%(name)s must be a whole number (%(bounds)s).") % {"name": name, "bounds": bounds},
            field=name,
        )
    return value


def paginated(request, queryset, serializer_class) -> Response:
    limit = _int_param(request, "limit", default=20, low=1, high=100)
    after = _int_param(request, "starting_after", default=None, low=1, high=MAX_ID)
    if after is not None:
        queryset = queryset.filter(pk__lt=after)
    rows = list(queryset.order_by("-pk")[: limit + 1])
    return Response({"data": serializer_class(rows[:limit], many=True).data, "has_more": len(rows) > limit})
