"""Pat opts in on WhatsApp and the brand may message Pat again: the consent ledger keeps the exact
words Pat was shown, the brand, the channel, the time and the message as proof; Pat stops from any
channel, every stop is a new row, and the reward stays."""

import json
from pathlib import Path

import pytest
from django.db import IntegrityError, InternalError, ProgrammingError, connection, transaction
from django.test import Client
from django.urls import reverse

from campaigns.models import ConsentWording
from campaigns.services.consent import consent_wording_save
from campaigns.services.refusals import CampaignError
from verification.models import ActionClaim, ConsentRecord, OptinCode, Participant
from verification.providers.whatsapp import inbound_messages, signature
from verification.sandbox.whatsapp import message_envelope
from verification.selectors import consent_in_force, consents_current
from verification.services.consent import opt_out_word
from verification.services.provider_events import provider_events_process

pytestmark = pytest.mark.django_db

WEBHOOK = "/v/webhooks/whatsapp/"
VENDOR = Path(__file__).parent / "vendor" / "meta"


def deliver(client, payload, *, body=None):
    body = body if body is not None else json.dumps(payload).encode()
    response = client.post(
        WEBHOOK,
        body,
        content_type="application/json",
        headers={"X-Hub-Signature-256": signature(body=body, app_secret="sbx-meta-app-secret")},
    )
    provider_events_process()
    return response


@pytest.fixture
def club(make_live_campaign):
    return make_live_campaign(slug="club", package="whatsapp_reward")


def opt_in(client, campaign, wa_id="4915123456789", language="en"):
    client.post(reverse("verification:whatsapp_start", args=[campaign.slug]), HTTP_ACCEPT_LANGUAGE=language)
    code = OptinCode.objects.latest("pk")
    deliver(
        client,
        message_envelope(wa_id=wa_id, name="Pat", text=f"JOY {code.code}", message_id=f"wamid.{code.code}"),
    )
    return code


def test_the_opt_in_records_the_words_shown_with_the_message_as_proof(client, club):
    page = client.post(reverse("verification:whatsapp_start", args=[club.slug]), follow=True)
    steps = client.get(reverse("verification:steps", args=[club.slug])).content.decode()
    code = OptinCode.objects.get()
    assert "Alpaca Coffee sends me news and offers on WhatsApp" in steps and page.status_code == 200

    deliver(
        client,
        message_envelope(wa_id="4915123456789", name="Pat", text=f"JOY {code.code}", message_id="wamid.P1"),
    )

    record = ConsentRecord.objects.get()
    assert (record.channel, record.action, record.source, record.proof) == (
        "whatsapp",
        "given",
        "whatsapp_message",
        "wamid.P1",
    )
    assert record.text == code.consent_text and "Alpaca Coffee" in record.text and "WhatsApp" in record.text
    assert (record.brand_name, record.campaign, record.identity.subject) == (
        "Alpaca Coffee",
        club,
        "4915123456789",
    )
    assert consent_in_force(participant_id=record.participant_id, channel="whatsapp")


def test_the_brands_own_wording_in_the_persons_language_is_the_one_recorded(client, club, alice):
    consent_wording_save(
        campaign=club, channel="whatsapp", language="de", user=alice,
        text="Ja, Alpaca Coffee darf mir Neuigkeiten per WhatsApp schicken.",
    )  # fmt: skip
    newer = consent_wording_save(
        campaign=club, channel="whatsapp", language="de", user=alice,
        text="Ja, Alpaca Coffee darf mir Angebote per WhatsApp schicken. Abmelden jederzeit.",
    )  # fmt: skip
    opt_in(client, club, language="de")

    record = ConsentRecord.objects.get()
    assert (record.wording, record.wording_version, record.language) == (newer, 2, "de")
    assert record.text == newer.text


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Yes, send me news on WhatsApp.", "must name your brand"),
        ("Yes, Alpaca Coffee may send me news.", "must say the messages come by WhatsApp"),
        ("", "Write the consent wording"),
    ],
)
def test_wording_that_does_not_name_the_brand_and_the_channel_is_refused(club, alice, text, problem):
    with pytest.raises(CampaignError, match=problem):
        consent_wording_save(campaign=club, channel="whatsapp", language="en", text=text, user=alice)
    assert not ConsentWording.objects.exists()


@pytest.mark.parametrize(
    "word", ["STOP", "stop.", "Baja", "Darme de baja", "Abmelden", "STOPP", "退订", " 取消订阅 "]
)
def test_a_stop_word_in_any_of_the_four_languages_ends_sending_and_keeps_the_reward(client, club, word):
    opt_in(client, club)
    claim = ActionClaim.objects.get()

    deliver(client, message_envelope(wa_id="4915123456789", name="Pat", text=word, message_id="wamid.STOP"))

    rows = list(ConsentRecord.objects.order_by("pk").values_list("action", "source", "proof"))
    assert rows[-1] == ("withdrawn", "whatsapp_stop", "wamid.STOP")
    assert not consent_in_force(participant_id=claim.participant_id, channel="whatsapp")
    claim.refresh_from_db()
    assert (claim.status, claim.amount) == ("approved", 2_00)  # the reward stays


def test_words_that_only_contain_stop_are_no_opt_out():
    assert not opt_out_word("don't stop the music")
    assert not opt_out_word("JOY ABC234")
    assert opt_out_word("Stop promotions")


def test_metas_stop_button_ends_sending(client, club):
    opt_in(client, club, wa_id="16505551234")
    participant_id = ConsentRecord.objects.get().participant_id

    deliver(client, json.loads((VENDOR / "button_reply.json").read_text()))

    assert ConsentRecord.objects.latest("pk").source == "whatsapp_button"
    assert not consent_in_force(participant_id=participant_id, channel="whatsapp")


def test_the_marketing_preference_webhook_ends_sending_once(client, club):
    opt_in(client, club, wa_id="16505551234")
    preference = json.loads((VENDOR / "user_preferences.json").read_text())

    deliver(client, preference)
    deliver(client, preference)  # Meta delivers again: recorded once

    assert ConsentRecord.objects.filter(source="whatsapp_preference").count() == 1
    assert not consents_current(brand=club.brand).exists()


def test_the_vendored_button_example_reads_as_a_button_answering_our_message():
    [message] = inbound_messages(json.loads((VENDOR / "button_reply.json").read_text()))
    assert (message.kind, message.text, message.wa_id) == ("button", "Stop promotions", "16505551234")
    assert message.context_id.startswith("wamid.HBgLMTQxMjU1NTA4MjkV")


def test_a_stop_ends_every_brands_consent_for_that_number(client, club, bison, make_live_campaign):
    opt_in(client, club)
    other = make_live_campaign(slug="bison-club", package="whatsapp_reward", brand=bison)
    opt_in(Client(), other)
    assert consents_current(brand=bison).count() == 1

    deliver(client, message_envelope(wa_id="4915123456789", name="Pat", text="STOP", message_id="wamid.S"))

    assert consents_current(brand=club.brand).count() == consents_current(brand=bison).count() == 0


@pytest.mark.postgres
def test_the_ledger_refuses_update_and_delete(client, club):
    opt_in(client, club)
    record = ConsentRecord.objects.get()
    for statement in (
        f"UPDATE verification_consentrecord SET text = 'edited' WHERE id = {record.pk}",
        f"DELETE FROM verification_consentrecord WHERE id = {record.pk}",
    ):
        with (
            pytest.raises((InternalError, IntegrityError, ProgrammingError)),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(statement)
    assert ConsentRecord.objects.get().text == record.text


def test_the_status_page_stops_messages_and_says_the_reward_stays(client, club):
    opt_in(client, club)
    participant = Participant.objects.get()
    actions = client.get(reverse("verification:status_actions", args=[participant.token])).content.decode()
    assert "Stop these messages" in actions and "Alpaca Coffee sends me news" in actions

    client.post(
        reverse("verification:status_consent_withdraw", args=[participant.token, "whatsapp"]), {"shown": "1"}
    )

    assert ConsentRecord.objects.latest("pk").source == "status_page"
    assert ActionClaim.objects.get().status == "approved"
    after = client.get(reverse("verification:status_actions", args=[participant.token])).content.decode()
    assert "Stopped on" in after


def test_a_wrong_token_or_channel_on_the_status_page_is_404(client, club):
    opt_in(client, club)
    participant = Participant.objects.get()
    assert (
        client.post(reverse("verification:status_consent_withdraw", args=["nope", "whatsapp"])).status_code
        == 404
    )
    assert (
        client.post(
            reverse("verification:status_consent_withdraw", args=[participant.token, "fax"])
        ).status_code
        == 404
    )
    assert consent_in_force(participant_id=participant.pk, channel="whatsapp")


def test_the_one_click_unsubscribe_works_without_sign_in_or_csrf(club):
    from verification.consent_views import (  # deferred: the test reads them here alone
        unsubscribe_headers,
        unsubscribe_token,
    )

    identity = _email_consent(club)
    headers = unsubscribe_headers(participant_id=identity.participant_id, site_url="https://joyback.example")
    assert headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    url = headers["List-Unsubscribe"].strip("<>").removeprefix("https://joyback.example")
    mail_client = Client(enforce_csrf_checks=True)

    assert mail_client.get(url).status_code == 200  # a link scanner's GET changes nothing
    assert consent_in_force(participant_id=identity.participant_id, channel="email")
    response = mail_client.post(url, {"List-Unsubscribe": "One-Click"})

    assert response.status_code == 200
    assert not consent_in_force(participant_id=identity.participant_id, channel="email")
    assert ConsentRecord.objects.latest("pk").source == "email_unsubscribe"
    forged = unsubscribe_token(participant_id=identity.participant_id)[:-3] + "xyz"
    assert mail_client.post(reverse("verification:unsubscribe", args=[forged])).status_code == 404


def _email_consent(campaign):
    from verification.services.consent import consent_record_give  # deferred: the test's own setup
    from verification.services.participants import identity_attach, participant_create  # deferred: as above

    person = participant_create(brand=campaign.brand)
    identity = identity_attach(
        participant=person, provider="email", subject="pat@example.com", display_name=""
    )
    with transaction.atomic():
        consent_record_give(
            identity=identity, channel="email", campaign=campaign, text="Alpaca Coffee news by email",
            language="en", wording=None, source="form", proof="form-1",
        )  # fmt: skip
    return identity


def test_erasure_ends_every_consent_and_keeps_the_record(client, club):
    from payouts.privacy import participant_erase  # deferred: erasure is payouts'

    opt_in(client, club)
    participant = Participant.objects.get()
    participant_erase(participant=participant)

    latest = ConsentRecord.objects.latest("pk")
    assert (latest.action, latest.source) == ("withdrawn", "erasure")
    assert latest.identity.subject.startswith("erased:") and ConsentRecord.objects.count() == 2
    assert not consents_current(brand=club.brand).exists()
