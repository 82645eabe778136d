"""The Cashback API as a brand's developer meets it: a key, JSON over HTTP, signed webhooks."""

import json

import httpx
import pytest
from django.test import TestCase

from joyback.api.keys import api_key_create
from joyback.api.webhooks.transport import webhook_transport_set


class Api:
    """A brand's backend calling the API with one key."""

    def __init__(self, client, secret: str):
        self.client, self.secret = client, secret

    def _headers(self, idempotency_key=None):
        headers = {"Authorization": f"Bearer {self.secret}"}
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        return headers

    def get(self, path, **params):
        return self.client.get(f"/api/v1/{path}", params, headers=self._headers())

    def post(self, path, body, *, idempotency_key=None, raw=None):
        data = raw if raw is not None else json.dumps(body)
        return self.client.post(
            f"/api/v1/{path}", data, content_type="application/json", headers=self._headers(idempotency_key)
        )

    def report(self, body, *, idempotency_key=None):
        """POST an event, let the worker process it (the queue runs inline in tests), and return
        what GET /events/{id} then says; a request refused at once is returned as it is."""
        with TestCase.captureOnCommitCallbacks(execute=True):
            accepted = self.post("events", body, idempotency_key=idempotency_key)
        if accepted.status_code != 202:
            return accepted
        return self.get(f"events/{accepted.json()['id']}")


def reported(response) -> dict:
    """The claim of an event reported and processed."""
    event = response.json()
    assert event["status"] == "processed", event
    return event["claim"]


@pytest.fixture
def make_api(client):
    def make(brand, scopes=("read", "events")):
        return Api(client, api_key_create(brand_id=brand.pk, name="shop", scopes=scopes).secret)

    return make


@pytest.fixture
def alpaca_api(make_api, alpaca):
    return make_api(alpaca)


@pytest.fixture
def bison_api(make_api, bison):
    return make_api(bison)


@pytest.fixture
def shop(make_live_campaign):
    """Alpaca's live cashback campaign: 5 % back, at most 5 EUR a purchase, 14 days to return."""
    campaign = make_live_campaign(slug="cashback-week", package="cashback", budget=100_00)
    campaign.rules.filter(trigger="purchase").update(cashback_basis_points=500, return_window_days=14)
    return campaign


def purchase(order_id="A-1001", amount=40_00, **extra):
    return {
        "type": "purchase",
        "order_id": order_id,
        "amount": amount,
        "currency": "EUR",
        "customer": {"email": "kim@example.com"},
        **extra,
    }


class Receiver:
    """The brand's webhook endpoint: records what arrives and answers as told."""

    def __init__(self):
        self.requests: list[httpx.Request] = []
        self.answers: list[int] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        status = self.answers.pop(0) if self.answers else 200
        if status == 0:
            raise httpx.ConnectError("connection refused", request=request)
        return httpx.Response(status, text="ok")

    def bodies(self):
        return [json.loads(request.content) for request in self.requests]


@pytest.fixture
def receiver():
    received = Receiver()
    webhook_transport_set(httpx.MockTransport(received))
    yield received
    webhook_transport_set(None)
