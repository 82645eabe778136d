"""The signed provider webhooks and POST /api/v1/events (declared @machine_endpoint) skip the browser
middleware; every page still gets all of it."""

import json

import pytest
from django.urls import reverse

from verification.models import ProviderEvent
from verification.providers.whatsapp import signature
from verification.sandbox.whatsapp import message_envelope

pytestmark = pytest.mark.django_db

WEBHOOK = "/v/webhooks/whatsapp/"


def post(client, body, header):
    return client.post(
        WEBHOOK, body, content_type="application/json", headers={"X-Hub-Signature-256": header}
    )


def test_a_signed_delivery_is_stored_without_session_csrf_or_language(client):
    body = json.dumps(message_envelope(wa_id="4915123456789", name="Pat", text="hello")).encode()

    response = post(client, body, signature(body=body, app_secret="sbx-meta-app-secret"))

    assert response.status_code == 200 and response.content == b"ok"
    assert response["Content-Length"] == "2"
    assert not response.cookies  # no session or CSRF cookie for a machine
    assert "X-Frame-Options" not in response and "Vary" not in response
    assert ProviderEvent.objects.count() == 1


def test_the_signature_is_still_checked(client):
    body = json.dumps(message_envelope(wa_id="4915123456789", name="Pat", text="hello")).encode()

    assert post(client, body, "sha256=" + "0" * 64).status_code == 403
    assert (
        post(client, b"not json", signature(body=b"not json", app_secret="sbx-meta-app-secret")).status_code
        == 400
    )
    assert not ProviderEvent.objects.exists()


def test_the_verify_handshake_still_answers(client):
    params = {"hub.mode": "subscribe", "hub.verify_token": "sbx-verify-token", "hub.challenge": "42"}

    response = client.get(WEBHOOK, params)

    assert response.status_code == 200 and response.content == b"42"


def test_the_landing_page_keeps_the_full_chain(client, summer):
    response = client.get(reverse("campaign_landing", args=[summer.slug]), headers={"Accept-Language": "de"})

    assert response.status_code == 200
    assert response["X-Frame-Options"] == "DENY" and "Accept-Language" in response["Vary"]
    assert response["Content-Language"] == "de"


def test_the_views_declared_machine_endpoints_are_the_ones_that_skip_the_chain():
    from django.urls import get_resolver

    from joyback.middleware import _machine_paths

    assert sorted(_machine_paths(get_resolver().url_patterns)) == [
        "/api/v1/events",
        "/v/webhooks/tiktok/",
        "/v/webhooks/whatsapp/",
        "/webhooks/adyen/balance-platform/",
    ]


def test_an_api_refusal_on_the_machine_path_is_in_english_without_browser_headers(client):
    response = client.post(
        "/api/v1/events", "{}", content_type="application/json", headers={"Accept-Language": "de"}
    )

    assert response.status_code == 401 and response.json()["error"]["code"] == "not_authenticated"
    assert "Vary" not in response and "Content-Language" not in response and not response.cookies
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'
