from django.conf import settings
from rest_framework import exceptions
from rest_framework.parsers import JSONParser

from joyback.limits import json_loads


def _refuse_constant(name):
    raise ValueError(f"{name} is not valid JSON")


class JsonParser(JSONParser):
    """DRF's JSON parser, refusing a body nested deeper than any document we take (400, not 500)."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return json_loads(stream.read().decode(settings.DEFAULT_CHARSET), parse_constant=_refuse_constant)
        except ValueError as exc:
            raise exceptions.ParseError(f"JSON parse error - {exc}") from exc
