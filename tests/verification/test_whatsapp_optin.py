"""Pat opts in on WhatsApp: a code on the page, a signed Meta webhook, one reward per number."""

import json

import pytest
from django.urls import reverse

from verification.models import ActionClaim, OptinCode, ProviderEvent
from verification.providers.whatsapp import signature
from verification.sandbox.whatsapp import message_envelope
from verification.services.provider_events import provider_events_process

pytestmark = pytest.mark.django_db

WEBHOOK = "/v/webhooks/whatsapp/"


@pytest.fixture
def deliver():
    """POST a payload as Meta would, then let the standing worker process what the webhook stored."""

    def post(client, payload, *, secret="sbx-meta-app-secret", body=None):
        body = body if body is not None else json.dumps(payload).encode()
        response = client.post(
            WEBHOOK,
            body,
            content_type="application/json",
            headers={"X-Hub-Signature-256": signature(body=body, app_secret=secret)},
        )
        provider_events_process()
        return response

    return post


@pytest.fixture
def club(make_live_campaign):
    return make_live_campaign(slug="club", package="whatsapp_reward")


def code_for(client, campaign) -> str:
    client.post(reverse("verification:whatsapp_start", args=[campaign.slug]))
    return OptinCode.objects.latest("pk").code


def test_the_handshake_echoes_the_challenge_only_for_our_token(client):
    ok = client.get(
        WEBHOOK,
        {"hub.mode": "subscribe", "hub.verify_token": "sbx-verify-token", "hub.challenge": "1158201444"},
    )
    assert ok.status_code == 200 and ok.content == b"1158201444"
    wrong = client.get(WEBHOOK, {"hub.mode": "subscribe", "hub.verify_token": "guess", "hub.challenge": "1"})
    assert wrong.status_code == 403


def test_an_opt_in_message_pays_the_reward(client, club, deliver):
    code = code_for(client, club)

    response = deliver(client, message_envelope(wa_id="4915123456789", name="Pat", text=f"JOY {code}"))

    assert response.status_code == 200
    claim = ActionClaim.objects.get()
    assert (claim.status, claim.identity.subject, claim.amount) == ("approved", "4915123456789", 2_00)
    steps = client.get(reverse("verification:steps", args=[club.slug])).content.decode()
    assert "your reward is confirmed" in steps


def test_a_redelivered_message_is_handled_once(client, club, deliver):
    code = code_for(client, club)
    payload = message_envelope(wa_id="4915123456789", name="Pat", text=f"JOY {code}", message_id="wamid.ONE")

    deliver(client, payload)
    deliver(client, payload)

    assert ProviderEvent.objects.count() == 1
    assert ActionClaim.objects.count() == 1


def test_a_bad_signature_is_refused_and_nothing_is_stored(client, club, deliver):
    code = code_for(client, club)

    response = deliver(client, message_envelope(wa_id="491", name="Pat", text=f"JOY {code}"), secret="wrong")

    assert response.status_code == 403
    assert not ProviderEvent.objects.exists() and not ActionClaim.objects.exists()


def test_the_signature_covers_the_exact_bytes_with_escaped_unicode(client, club, deliver):
    code = code_for(client, club)
    payload = message_envelope(wa_id="4915123456789", name="Zoë 🌞", text=f"JOY {code}")
    body = json.dumps(payload).encode()  # \\u00eb and surrogate pairs, as Meta sends them
    assert b"\\u00eb" in body

    assert deliver(client, payload, body=body).status_code == 200
    assert ActionClaim.objects.get().identity.display_name == "Zoë 🌞"


def test_one_number_is_rewarded_once_even_from_two_browsers(client, club, deliver):
    first = code_for(client, club)
    deliver(client, message_envelope(wa_id="4915123456789", name="Pat", text=f"JOY {first}"))

    other = type(client)()
    second = code_for(other, club)
    deliver(other, message_envelope(wa_id="4915123456789", name="Pat", text=f"JOY {second}"))

    assert ActionClaim.objects.count() == 1
    assert OptinCode.objects.get(code=second).outcome == "number_taken"
    steps = other.get(reverse("verification:steps", args=[club.slug])).content.decode()
    assert "already belongs to another claim" in steps


def test_the_sandbox_phone_delivers_a_signed_webhook(client, club, django_capture_on_commit_callbacks):
    code = code_for(client, club)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("verification:sandbox_whatsapp_phone") + f"?text=JOY+{code}&next=/c/club/",
            {"number": "+49 151 23456789", "name": "Pat", "text": f"JOY {code}"},
        )

    assert response.status_code == 302 and response["Location"] == "/c/club/"
    assert ActionClaim.objects.get().identity.subject == "4915123456789"


def test_the_sandbox_phone_refuses_a_bad_number(client, club):
    response = client.post(reverse("verification:sandbox_whatsapp_phone"), {"number": "12", "text": "JOY X"})

    assert response.status_code == 400
    assert "country code" in response.content.decode()


def test_a_message_with_an_unknown_code_is_stored_and_pays_nothing(client, club, deliver, caplog):
    response = deliver(client, message_envelope(wa_id="4915123456789", name="Pat", text="JOY ZZZZZZ"))

    assert response.status_code == 200
    assert ProviderEvent.objects.count() == 1
    assert not ActionClaim.objects.exists()
    assert "unknown_code" in caplog.text


def test_an_opt_in_for_a_paused_campaign_pays_nothing(client, club, deliver):
    from campaigns.services.campaigns import campaign_transition
    from joyback.ledger.models import Transaction

    code = code_for(client, club)
    campaign_transition(campaign=club, to="paused")
    before = Transaction.objects.count()

    deliver(client, message_envelope(wa_id="4915123456789", name="Pat", text=f"JOY {code}"))

    assert OptinCode.objects.get(code=code).outcome == "paused"
    assert not ActionClaim.objects.exists() and Transaction.objects.count() == before
    steps = client.get(reverse("verification:steps", args=[club.slug])).content.decode()
    assert "paused for the moment" in steps


@pytest.mark.parametrize("tamper", ["one_byte", "reserialized", "missing"])
def test_a_tampered_delivery_is_refused(client, club, deliver, tamper):
    payload = message_envelope(wa_id="4915123456789", name="Pat", text="JOY ABCDEF")
    body = json.dumps(payload).encode()
    header = signature(body=body, app_secret="sbx-meta-app-secret")
    if tamper == "one_byte":
        body = body.replace(b"4915123456789", b"4915123456780")
    elif tamper == "reserialized":
        body = json.dumps(payload, separators=(",", ":")).encode()
    else:
        header = ""

    response = client.post(
        WEBHOOK, body, content_type="application/json", headers={"X-Hub-Signature-256": header}
    )

    assert response.status_code == 403
    assert not ProviderEvent.objects.exists()


def test_malformed_json_with_a_valid_signature_is_a_400(client, club):
    body = b"{not json"
    headers = {"X-Hub-Signature-256": signature(body=body, app_secret="sbx-meta-app-secret")}

    assert client.post(WEBHOOK, body, content_type="application/json", headers=headers).status_code == 400
