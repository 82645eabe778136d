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


def request_bodies_required(result, generator, request, public):
    """Postprocessing hook: every operation that takes a body refuses a request without one (415 or
    400), so the document says the body is required, as strict as the server is."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            body = operation.get("requestBody") if isinstance(operation, dict) else None
            if body is not None:
                body["required"] = True
    return result


LIVEMODE = {
    "type": "boolean",
    "readOnly": True,
    "description": "false for test data (a jb_test_ key, the sandbox bank and providers), true for live.",
}


def _ref_name(schema) -> str | None:
    ref = (schema or {}).get("$ref", "")
    return ref.rsplit("/", 1)[-1] if ref.startswith("#/components/schemas/") else None


def _refs_within(value, found: set) -> None:
    if isinstance(value, dict):
        name = _ref_name(value)
        if name:
            found.add(name)
        for inner in value.values():
            _refs_within(inner, found)
    elif isinstance(value, list):
        for inner in value:
            _refs_within(inner, found)


def livemode_documented(result, generator, request, public):
    """Postprocessing hook: every successful answer, and each object of a list, carries `livemode`
    (joyback.api.views.livemode_mark). Required where the object is only ever an answer; where
    it is also nested in another object (which does not repeat it), optional."""
    schemas = result.get("components", {}).get("schemas", {})
    nested: set = set()
    for schema in schemas.values():
        _refs_within(schema, nested)
    answers: set = set()
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            for code, response in (
                (operation.get("responses") or {}).items() if isinstance(operation, dict) else ()
            ):
                if not str(code).startswith("2"):
                    continue
                for media in (response.get("content") or {}).values():
                    name = _ref_name(media.get("schema"))
                    if name:
                        answers.add(name)
                        items = schemas.get(name, {}).get("properties", {}).get("data", {}).get("items")
                        if _ref_name(items):
                            answers.add(_ref_name(items))
    for name in sorted(answers):
        schema = schemas.get(name)
        if not schema or "properties" not in schema:
            continue
        schema["properties"]["livemode"] = dict(LIVEMODE)
        if name not in nested:
            schema["required"] = sorted({*schema.get("required", []), "livemode"})
    return result
