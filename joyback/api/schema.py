"""How the API describes itself in OpenAPI 3: bearer keys, the Idempotency-Key header and the one
error shape on every operation."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from joyback.api.versions import HEADER, VERSIONS


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "joyback.api.auth.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": "Authorization: Bearer jb_…"}


class ErrorSerializer(serializers.Serializer):
    class ErrorDetail(serializers.Serializer):
        code = serializers.CharField(help_text="Stable, for programs: e.g. invalid, not_found, throttled")
        message = serializers.CharField(help_text="For people")
        field = serializers.CharField(allow_null=True, help_text="The input it concerns, dotted; or null")

    error = ErrorDetail()

    class Meta:
        ref_name = "Error"


ERRORS = {
    "GET": ["400", "401", "403", "404", "429"],
    "POST": ["400", "401", "403", "404", "409", "415", "422", "429"],
}


class ApiSchema(AutoSchema):
    def get_override_parameters(self):
        parameters = [
            *super().get_override_parameters(),
            OpenApiParameter(
                HEADER,
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                enum=list(VERSIONS),
                description="The dated API version to answer in; without it, the version the key was "
                "pinned to when it was made. Every answer names its version in the same header.",
            ),
        ]
        if self.method == "POST":
            parameters = [
                *parameters,
                OpenApiParameter(
                    "Idempotency-Key",
                    OpenApiTypes.STR,
                    OpenApiParameter.HEADER,
                    description="Up to 255 characters, kept 24 hours, shared by all of the brand's API keys "
                    "(a retry after rotating the key replays too): the same key and body replay the first "
                    "answer; another body is 422; while the first is in flight, 409.",
                ),
            ]
        return parameters

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        for code in ERRORS.get(self.method, []):
            if code not in responses:
                responses[code] = self._get_response_for_code(ErrorSerializer, code)
        return responses


def defaults_within_bounds(result, generator, request, public):
    """Postprocessing hook: drop a string default its own schema refuses (an optional field with
    default "" and minLength 1: the API fills in "" when the field is left out, but a client
    generator or validator must not be told that "" is a value it may send)."""
    for schema in result.get("components", {}).get("schemas", {}).values():
        for prop in schema.get("properties", {}).values():
            default = prop.get("default")
            if isinstance(default, str) and len(default) < prop.get("minLength", 0):
                del prop["default"]
    return result
