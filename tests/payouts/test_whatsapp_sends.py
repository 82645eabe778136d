"""Alice sends a WhatsApp template to Alpaca Coffee's audience: the templates come from the
Business Management API, the plan shows the cost per country at Meta's rates, the tier's limit and
who is skipped; the send goes through the notifications at the tier's pace, and the statuses come
back by the signed webhook in Meta's format."""

import json
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone

from payouts.audience.broadcasts import (
    BroadcastRefused,
    broadcast_create,
    broadcast_plan,
    broadcasts_send_due,
    templates_sync,
)
from payouts.audience.rates import country_of, marketing_rate_micros
from payouts.audience.selectors import broadcast_results
from payouts.models import BroadcastRecipient, Notification, WhatsAppTemplate
from tests.payouts.audience_helpers import audience_person, audience_stop, waba_connect
from verification.models import ProviderEvent, SandboxWhatsAppMessage
from verification.providers import whatsapp
from verification.providers.whatsapp import signature, status_updates
from verification.sandbox import whatsapp as sandbox
from verification.services.provider_events import provider_events_process

pytestmark = pytest.mark.django_db
META = Path(__file__).parents[1] / "verification" / "vendor" / "meta"


@pytest.fixture
def club(make_live_campaign):
    return make_live_campaign(slug="club", package="whatsapp_reward")


@pytest.fixture
def synced(club):
    waba_connect(brand=club.brand)
    templates_sync(brand=club.brand)


@pytest.fixture
def send(django_capture_on_commit_callbacks):
    """Alice's send, made and sent as the schedule would (its messages go after commit), then the
    statuses the sandbox posted to the webhook processed."""

    def make(*, club, alice, parameters=("Alpaca Coffee", "new beans are in")):
        broadcast = broadcast_create(
            brand=club.brand, user=alice, template_name="joyback_news", parameters=list(parameters),
            send_at=timezone.now(),
        )  # fmt: skip
        with django_capture_on_commit_callbacks(execute=True):
            broadcasts_send_due()
        provider_events_process()
        return broadcast

    return make


def test_metas_template_list_example_reads_name_language_status_and_parameters(monkeypatch):
    class Answer:
        status_code = 200

        def json(self):
            return json.loads((META / "message_templates.json").read_text()) | {"paging": {}}

    class Client:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def get(self, url, params, headers):
            assert url.endswith("/message_templates") and headers["Authorization"].startswith("Bearer ")
            return Answer()

    monkeypatch.setattr(whatsapp, "http_client", Client)
    first, second = whatsapp.templates_list()
    assert (first.name, first.language, first.status, first.category, first.parameters) == (
        "reservation_confirmation",
        "en_US",
        "APPROVED",
        "UTILITY",
        4,
    )
    assert (second.status, second.parameters) == ("PENDING", 1)


def test_metas_status_examples_read_as_delivered_billable_and_failed_131049():
    [delivered] = status_updates(json.loads((META / "status_delivered.json").read_text()))
    [failed] = status_updates(json.loads((META / "status_failed.json").read_text()))
    assert (delivered.status, delivered.billable, delivered.pricing_category) == (
        "delivered",
        True,
        "marketing",
    )
    assert (failed.status, failed.error_code, failed.billable) == ("failed", 131049, None)


def test_the_sandbox_lists_templates_in_pages_and_only_approved_ones_are_offered(club, synced):
    assert WhatsAppTemplate.objects.filter(name="joyback_news").count() == 4
    assert set(WhatsAppTemplate.objects.values_list("status", flat=True)) == {
        "APPROVED",
        "PENDING",
        "REJECTED",
    }
    from payouts.audience.broadcasts import templates_sendable  # deferred: read here alone

    assert set(templates_sendable(brand=club.brand)) == {"joyback_news", "joyback_offer"}


def test_the_plan_prices_per_country_and_skips_who_must_be_skipped(club, alice, synced):
    audience_person(campaign=club, wa_id="4915100000001")  # Germany
    audience_person(campaign=club, wa_id="34612000002", language="es")  # Spain
    audience_person(campaign=club, wa_id="12025550103")  # +1
    audience_stop(audience_person(campaign=club, wa_id="4915100000004"))
    audience_person(campaign=club, wa_id="4915100000005", consented=False)

    plan = broadcast_plan(brand=club.brand, template_name="joyback_news")

    assert plan.by_country == {"DE": (1, 136_500), "ES": (1, 61_500)}
    assert sorted(reason for *_x, reason in plan.skipped) == ["no_consent", "opted_out", "us_number"]
    assert (plan.tier, plan.tier_limit, plan.tier_remaining) == ("TIER_250", 250, 250)
    assert {language for *_x, language, _m in plan.send} == {"en_US", "es"}


def test_rates_follow_metas_markets():
    assert country_of("4915112345678") == "DE" and country_of("8613812345678") == "CN"
    assert marketing_rate_micros("DE") == 136_500 and marketing_rate_micros("AT") == 59_200
    assert marketing_rate_micros("CN") == 73_200 and marketing_rate_micros("") == 60_400


def test_a_send_goes_through_notifications_and_its_statuses_come_back(club, alice, synced, send):
    pat = audience_person(campaign=club, wa_id="4915100000001")
    capped = audience_person(campaign=club, wa_id="4915100000049")

    broadcast = send(club=club, alice=alice)

    notes = Notification.objects.filter(kind="broadcast")
    assert notes.count() == 2 and all(note.provider_message_id.startswith("wamid.") for note in notes)
    sent = SandboxWhatsAppMessage.objects.get(wa_id=pat.subject)
    assert sent.body == "News from Alpaca Coffee: new beans are in"
    rows = {r.identity_id: r for r in BroadcastRecipient.objects.filter(broadcast=broadcast)}
    assert (rows[pat.pk].status, rows[pat.pk].billable) == ("delivered", True)
    assert (rows[capped.pk].status, rows[capped.pk].error_code) == ("failed", 131049)
    results = broadcast_results(broadcast=broadcast)
    assert (results["sent"], results["delivered"], results["failed"], results["cost"]) == (2, 1, 1, 136_500)


def _post(client, body: bytes) -> None:
    signed = signature(body=body, app_secret="sbx-meta-app-secret")
    client.post(
        "/v/webhooks/whatsapp/",
        body,
        content_type="application/json",
        headers={"X-Hub-Signature-256": signed},
    )
    provider_events_process()


def test_a_late_status_never_moves_a_message_back(club, alice, synced, client, send):
    pat = audience_person(campaign=club, wa_id="4915100000001")
    broadcast = send(club=club, alice=alice)
    recipient = BroadcastRecipient.objects.get(broadcast=broadcast, identity=pat)
    body = json.dumps(
        sandbox.status_envelope(wamid=recipient.wamid, wa_id=pat.subject, status="read")
    ).encode()
    _post(client, body)
    late = sandbox.status_envelope(wamid=recipient.wamid, wa_id=pat.subject, status="sent")
    late["entry"][0]["changes"][0]["value"]["statuses"][0]["timestamp"] = "1"
    body = json.dumps(late).encode()
    _post(client, body)

    recipient.refresh_from_db()
    assert recipient.status == "read" and recipient.read_at is not None


def test_a_stop_between_plan_and_send_withholds_the_message(club, alice, synced):
    pat = audience_person(campaign=club, wa_id="4915100000001")
    broadcast = broadcast_create(
        brand=club.brand, user=alice, template_name="joyback_news", parameters=["Alpaca", "x"],
        send_at=timezone.now(),
    )  # fmt: skip
    audience_stop(pat)

    broadcasts_send_due()

    recipient = BroadcastRecipient.objects.get(broadcast=broadcast)
    assert (recipient.status, recipient.skip_reason) == ("skipped", "opted_out")
    assert (
        not SandboxWhatsAppMessage.objects.exists()
        and not Notification.objects.filter(kind="broadcast").exists()
    )


def test_sends_keep_to_the_tiers_daily_limit(club, alice, synced, monkeypatch, send):
    monkeypatch.setattr(sandbox, "MESSAGING_TIER", "TIER_1K")
    monkeypatch.setattr(whatsapp, "TIER_LIMITS", {**whatsapp.TIER_LIMITS, "TIER_1K": 2})
    for index in range(3):
        audience_person(campaign=club, wa_id=f"491510000010{index}")

    broadcast = send(club=club, alice=alice)

    assert BroadcastRecipient.objects.filter(broadcast=broadcast, sent_at__isnull=False).count() == 2
    assert BroadcastRecipient.objects.filter(broadcast=broadcast, status="planned").count() == 1
    broadcast.refresh_from_db()
    assert broadcast.status == "sending"


@pytest.mark.parametrize(
    ("parameters", "problem"), [(["only one"], "takes 2 values"), ([], "takes 2 values")]
)
def test_a_send_with_the_wrong_values_is_refused_and_nothing_is_written(
    club, alice, synced, parameters, problem
):
    audience_person(campaign=club)
    with pytest.raises(BroadcastRefused, match=problem):
        broadcast_create(brand=club.brand, user=alice, template_name="joyback_news", parameters=parameters,
                         send_at=timezone.now())  # fmt: skip
    assert not BroadcastRecipient.objects.exists()


def test_the_sandbox_refuses_a_pending_template_and_a_wrong_parameter_count_as_meta_does(club):
    with pytest.raises(whatsapp.WhatsAppError, match="132001"):
        whatsapp.template_send(
            to="4915100000001", template="joyback_launch", language="en_US", parameters=["x"]
        )
    with pytest.raises(whatsapp.WhatsAppError, match="132000"):
        whatsapp.template_send(
            to="4915100000001", template="joyback_news", language="en_US", parameters=["x"]
        )
    published = json.loads((META / "graph_error_132000.json").read_text())["error"]
    assert {"message", "type", "code", "error_data", "fbtrace_id"} <= set(published)


def test_the_pages_plan_send_and_show_results(
    client, alice, club, synced, django_capture_on_commit_callbacks
):
    audience_person(campaign=club, wa_id="4915100000001")
    client.force_login(alice)
    url = reverse("payouts:broadcasts", args=["alpaca"])

    plan = client.get(url, {"template": "joyback_news", "parameters": "Alpaca\nhello"}).content.decode()
    assert "Before you send" in plan and "TIER_250" in plan and "DE" in plan
    response = client.post(url, {"template": "joyback_news", "parameters": "Alpaca\nhello", "confirm": "1"})
    assert response.status_code == 302
    with django_capture_on_commit_callbacks(execute=True):
        broadcasts_send_due()
    provider_events_process()
    result = client.get(response["Location"]).content.decode()
    assert 'data-testid="delivered">1<' in result


def test_inbound_events_for_statuses_are_stored_once_per_status(club, alice, synced, send):
    audience_person(campaign=club, wa_id="4915100000001")
    send(club=club, alice=alice)
    assert ProviderEvent.objects.filter(event_id__startswith="status:").count() == 2
