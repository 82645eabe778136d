"""The OpenAPI schema: the committed docs/openapi.yaml is what the code says, and the API keeps
its promises against it (schemathesis: no 5xx, every answer as documented)."""

import re
from pathlib import Path

import pytest
import schemathesis
import yaml
from django.core.wsgi import get_wsgi_application
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from schemathesis import checks

from joyback.api.keys import api_key_create
from tests.conftest import fund

pytestmark = pytest.mark.django_db

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml"


def test_the_committed_schema_is_in_step_with_the_code():
    generated = SchemaGenerator().get_schema(request=None, public=True)
    committed = yaml.safe_load(COMMITTED.read_text())
    # Through YAML and back, so that both sides are plain data.
    assert yaml.safe_load(yaml.safe_dump(generated)) == committed, (
        "docs/openapi.yaml is stale: python manage.py spectacular --file docs/openapi.yaml"
    )


def test_the_schema_and_the_docs_page_are_served(client):
    schema = client.get("/api/v1/schema/?format=json")
    assert schema.status_code == 200 and schema.json()["info"]["title"] == "JoyBack Cashback API"
    docs = client.get("/api/v1/docs/")
    assert docs.status_code == 200
    page = docs.content.decode()
    assert "vendor/redoc/redoc.standalone.js" in page and "https://" not in page


def test_the_vendored_redoc_loads_nothing_from_another_site():
    """Its sidebar showed Redocly's logo from their CDN, which the Content-Security-Policy refuses
    (img-src 'self'), so the docs page logged an error: the copy we serve leaves the logo out."""
    redoc = (COMMITTED.parents[1] / "static" / "vendor" / "redoc" / "redoc.standalone.js").read_text()

    assert 'src:"http' not in redoc


schema = schemathesis.openapi.from_wsgi("/api/v1/schema/?format=json", get_wsgi_application())


@pytest.fixture
def keep_connection():
    """WSGI requests close the database connection when they finish, which would end the test's
    transaction: as Django's test client does, keep it open."""
    from django.core import signals
    from django.db import close_old_connections

    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def key_header(alpaca, shop, keep_connection):

    fund(alpaca, 1_000_00, "EUR", reference="FUZZ")
    secret = api_key_create(brand_id=alpaca.pk, name="fuzz", scopes=["read", "events", "payouts"]).secret
    return {"Authorization": f"Bearer {secret}"}


@schema.parametrize()
@settings(
    max_examples=15,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_the_api_keeps_to_its_schema(case, key_header, settings_api_unlimited):
    # Every request goes with a valid key, and a well-formed purchase may still be refused by the
    # brand's rules (another currency, a paused campaign): so the checks are "no 5xx, every answer
    # as documented", not whether schemathesis' made-up data is accepted.
    case.call_and_validate(
        headers=key_header,
        checks=[
            checks.not_a_server_error,
            checks.status_code_conformance,
            checks.content_type_conformance,
            checks.response_schema_conformance,
            checks.response_headers_conformance,
        ],
    )


@pytest.fixture
def settings_api_unlimited(settings):
    settings.API_REQUESTS_PER_MINUTE = 10**9


def test_the_committed_schema_is_a_valid_openapi_document():
    from openapi_spec_validator import validate

    validate(yaml.safe_load(COMMITTED.read_text()))  # raises with the first error it finds


def test_every_event_type_is_named_in_the_discriminator():
    # A client generator dispatches on this mapping: a key per value of "type", never null.
    committed = yaml.safe_load(COMMITTED.read_text())
    mapping = committed["components"]["schemas"]["EventRequest"]["discriminator"]["mapping"]
    assert set(mapping) == {"purchase", "action", "refund", "like", "comment"}
    assert mapping["refund"] == "#/components/schemas/RefundEventInputRequest"


def test_no_default_is_refused_by_its_own_schema():
    committed = yaml.safe_load(COMMITTED.read_text())
    for name, schema in committed["components"]["schemas"].items():
        for field, prop in schema.get("properties", {}).items():
            if isinstance(prop.get("default"), str):
                assert len(prop["default"]) >= prop.get("minLength", 0), f"{name}.{field}"


def test_a_body_the_server_requires_is_required_in_the_schema(client, alpaca):
    committed = yaml.safe_load(COMMITTED.read_text())
    secret = api_key_create(brand_id=alpaca.pk, name="k", scopes=["events", "payouts"]).secret
    for path, operations in committed["paths"].items():
        for method, operation in operations.items():
            if "requestBody" not in operation:
                continue
            assert operation["requestBody"].get("required") is True, f"{method} {path}"
            # ... because the server refuses the request without one.
            answer = client.generic(method.upper(), path, headers={"Authorization": f"Bearer {secret}"})
            assert answer.status_code in (400, 415), f"{method} {path}: {answer.status_code}"


def test_a_currency_the_schema_allows_has_the_form_the_server_takes_and_000_does_not():
    committed = yaml.safe_load(COMMITTED.read_text())
    schemas = committed["components"]["schemas"]
    for name in ("PurchaseEventInputRequest", "PayoutInputRequest"):
        pattern = re.compile(schemas[name]["properties"]["currency"]["pattern"])
        assert pattern.search("EUR") and pattern.search("JPY"), name
        assert not any(pattern.search(code) for code in ("000", "eur", "EU", "EURO", "")), name
