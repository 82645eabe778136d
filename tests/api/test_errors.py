"""Every error is JSON with a stable code, a message and the field; bad input stores nothing."""

import json

import pytest

from joyback.api.models import InboundEvent
from tests.api.conftest import purchase
from verification.models import ActionClaim, Participant, Purchase

pytestmark = pytest.mark.django_db


def nothing_stored():
    return not (
        ActionClaim.objects.exists()
        or Purchase.objects.exists()
        or Participant.objects.exists()
        or InboundEvent.objects.exists()
    )


@pytest.mark.parametrize(
    ("body", "code", "field"),
    [
        (purchase(amount="40.00"), "invalid", "amount"),
        (purchase(amount=12.5), "invalid", "amount"),
        (purchase(amount=True), "invalid", "amount"),
        (purchase(amount=0), "min_value", "amount"),
        (purchase(currency="EURO"), "invalid_currency", "currency"),
        (purchase(currency="XYZ"), "invalid_currency", "currency"),
        (purchase(order_id=""), "blank", "order_id"),
        (purchase(customer={}), "customer_required", "customer"),
        (purchase(customer={"email": "not-an-email"}), "invalid", "customer.email"),
        (purchase(customer={"phone": "12"}), "invalid_phone", "customer.phone"),
        ({"type": "teleport"}, "invalid_type", "type"),
        ([1, 2], "invalid_type", "type"),
        ({**purchase(), "order_id": None}, "null", "order_id"),
    ],
)
def test_bad_input_is_refused_with_code_and_field_and_nothing_stored(alpaca_api, shop, body, code, field):
    response = alpaca_api.post("events", body)
    assert 400 <= response.status_code < 500, response.content
    assert response["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert (error["code"], error["field"]) == (code, field), error
    assert error["message"]
    assert nothing_stored()


@pytest.mark.parametrize(
    ("body", "code", "field"),
    [
        (purchase(currency="USD"), "currency_mismatch", "currency"),
        (purchase(campaign_id=999999), "campaign_unknown", "campaign_id"),
        ({"type": "refund", "order_id": "never-sold"}, "order_unknown", "order_id"),
    ],
)
def test_what_the_brands_campaigns_refuse_comes_with_the_processed_event(alpaca_api, shop, body, code, field):
    """Well-formed, but refused by the brand's campaigns and orders: the event is answered 202 and
    then refused by the worker, with the same code and field; no claim, no participant."""
    event = alpaca_api.report(body).json()
    assert event["status"] == "refused" and event["claim"] is None
    assert (event["error"]["code"], event["error"]["field"]) == (code, field)
    assert event["error"]["message"]
    assert not (ActionClaim.objects.exists() or Purchase.objects.exists() or Participant.objects.exists())


def test_a_body_that_is_not_json_is_a_parse_error(alpaca_api, shop):
    response = alpaca_api.post("events", None, raw="{not json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"
    assert nothing_stored()


def test_a_wrong_content_type_is_refused_in_json(client, alpaca_api, shop):
    response = client.post(
        "/api/v1/events",
        "order_id=1",
        content_type="application/x-www-form-urlencoded",
        headers={"Authorization": f"Bearer {alpaca_api.secret}"},
    )
    assert response.status_code == 415
    assert response.json()["error"]["code"] == "unsupported_media_type"


def test_a_method_the_endpoint_does_not_take_is_405_in_json(alpaca_api, shop):
    response = alpaca_api.client.delete(
        "/api/v1/events", headers={"Authorization": f"Bearer {alpaca_api.secret}"}
    )
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_an_unknown_address_under_the_api_is_404_in_json(client):
    response = client.get("/api/v1/nowhere")
    assert response.status_code == 404
    assert response.json() == {"error": {"code": "not_found", "message": "No such endpoint.", "field": None}}


def test_a_bad_page_size_is_refused(alpaca_api):
    response = alpaca_api.get("claims", limit=1000)
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "limit"


def test_a_server_error_under_the_api_is_json(client, alpaca_api, monkeypatch):
    import verification.api

    def explode(**kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(verification.api, "claims_for_brand", explode)
    client.raise_request_exception = False
    response = alpaca_api.get("claims")
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "server_error"


def test_one_requests_errors_never_reach_the_next(alpaca_api, shop):
    # The events endpoint reuses its input serializers between requests of a process.
    first = alpaca_api.post("events", purchase(amount=0))
    valid = alpaca_api.post("events", purchase(order_id="A-9"))
    second = alpaca_api.post("events", purchase(currency="XYZ"))

    assert first.json()["error"]["field"] == "amount"
    assert valid.status_code == 202
    assert second.json()["error"]["field"] == "currency"
    assert InboundEvent.objects.get().payload["order_id"] == "A-9"


DEEP = "[" * 100_000 + "]" * 100_000  # the 100,000-level nested body


@pytest.mark.parametrize("body", [DEEP, '{"a":' * 40 + "1" + "}" * 40])
def test_a_deeply_nested_body_is_a_parse_error_not_a_500(alpaca_api, shop, body):
    response = alpaca_api.post("events", None, raw=body)

    assert response.status_code == 400
    assert (
        response.json()["error"]["code"] == "parse_error" and "nested" in response.json()["error"]["message"]
    )
    assert nothing_stored()


def test_a_deeply_nested_body_to_a_drf_endpoint_is_a_parse_error(make_api, alpaca):
    from payouts.models import Payout

    response = make_api(alpaca, scopes=("payouts",)).post("payouts", None, raw=DEEP, idempotency_key="deep-1")

    assert response.status_code == 400 and response.json()["error"]["code"] == "parse_error"
    assert not Payout.objects.exists()


def test_an_event_larger_than_a_json_body_may_be_is_413_in_json(alpaca_api, shop, settings):
    # Within the request limit a statement upload needs, beyond what a body that is not a file may be.
    body = json.dumps({**purchase(), "note": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)})
    assert len(body) < settings.REQUEST_MAX_BYTES

    response = alpaca_api.post("events", None, raw=body)

    assert response.status_code == 413
    assert response.json()["error"]["code"] == "too_large"
    assert nothing_stored()
