"""The standing worker behind the webhooks: what a webhook stored is processed once, crash or race."""

import json
import threading
import time
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from verification.models import ActionClaim, OptinCode, Provider, ProviderEvent
from verification.providers.whatsapp import signature
from verification.sandbox.whatsapp import message_envelope
from verification.services import provider_events
from verification.services.participants import participant_create
from verification.services.provider_events import (
    optin_code_get_or_create,
    provider_events_process,
    provider_events_store,
)

WEBHOOK = "/v/webhooks/whatsapp/"


def deliver(client, payload):
    body = json.dumps(payload).encode()
    return client.post(
        WEBHOOK,
        body,
        content_type="application/json",
        headers={"X-Hub-Signature-256": signature(body=body, app_secret="sbx-meta-app-secret")},
    )


def message(message_id: str) -> dict:
    """A stored inbound message without an opt-in code."""
    return {"message_id": message_id, "wa_id": "491", "text": "hi", "timestamp": "1", "profile_name": "Pat"}


@pytest.fixture
def club(make_live_campaign):
    return make_live_campaign(slug="club", package="whatsapp_reward")


@pytest.mark.django_db
def test_the_webhook_stores_and_answers_and_the_worker_pays_once(client, club):
    person = participant_create(brand=club.brand)
    code = optin_code_get_or_create(campaign=club, participant=person).code

    response = deliver(client, message_envelope(wa_id="4915123456789", name="Pat", text=f"JOY {code}"))

    assert response.status_code == 200
    event = ProviderEvent.objects.get()
    assert event.processed_at is None and not ActionClaim.objects.exists()  # stored, committed, waiting

    assert provider_events_process() == 1
    assert provider_events_process() == 0  # nothing left: a second sweep does nothing

    event.refresh_from_db()
    assert event.processed_at is not None and event.outcome == "rewarded"
    assert ActionClaim.objects.get().status == "approved"
    assert OptinCode.objects.get(code=code).outcome == "rewarded"


@pytest.mark.django_db
def test_one_delivery_with_two_messages_is_stored_in_one_go(client, club):
    payload = message_envelope(wa_id="4915123456789", name="Pat", text="hello", message_id="wamid.A")
    second = message_envelope(wa_id="4915123456789", name="Pat", text="again", message_id="wamid.B")
    payload["entry"][0]["changes"][0]["value"]["messages"] += second["entry"][0]["changes"][0]["value"][
        "messages"
    ]

    assert deliver(client, payload).status_code == 200
    assert deliver(client, payload).status_code == 200  # Meta's redelivery: nothing new

    assert sorted(ProviderEvent.objects.values_list("event_id", flat=True)) == ["wamid.A", "wamid.B"]
    assert provider_events_process() == 2
    assert set(ProviderEvent.objects.values_list("outcome", flat=True)) == {"no_code"}


@pytest.mark.django_db
def test_a_refused_delivery_leaves_nothing_for_the_worker(client, club):
    body = json.dumps(message_envelope(wa_id="4915123456789", name="Pat", text="JOY ABCDEF")).encode()

    response = client.post(
        WEBHOOK, body, content_type="application/json", headers={"X-Hub-Signature-256": "sha256=00"}
    )

    assert response.status_code == 403
    assert provider_events_process() == 0 and not ProviderEvent.objects.exists()


@pytest.mark.django_db
def test_an_event_whose_worker_died_is_taken_again_after_its_lease(club):
    (event_id,) = provider_events_store(
        provider=Provider.WHATSAPP, events=[("wamid.LOST", message("wamid.LOST"))]
    )
    # A worker claimed it, then died before finishing: its lease is still running.
    ProviderEvent.objects.filter(pk=event_id).update(
        claimed_until=timezone.now() + timedelta(minutes=4), attempts=1
    )
    assert provider_events_process() == 0

    ProviderEvent.objects.filter(pk=event_id).update(claimed_until=timezone.now() - timedelta(seconds=1))
    assert provider_events_process() == 1

    event = ProviderEvent.objects.get(pk=event_id)
    assert (event.outcome, event.attempts, event.claimed_until) == ("no_code", 2, None)


@pytest.mark.django_db
def test_a_failing_event_is_tried_again_then_left_for_a_person(club, monkeypatch, caplog):
    def broken(*, event_id):
        raise RuntimeError("the provider's payload changed shape")

    monkeypatch.setitem(provider_events.EVENT_PROCESSORS, Provider.WHATSAPP, broken)
    (event_id,) = provider_events_store(provider=Provider.WHATSAPP, events=[("wamid.BAD", {})])

    for _attempt in range(provider_events.EVENT_MAX_ATTEMPTS):
        assert provider_events_process() == 1
        ProviderEvent.objects.filter(pk=event_id).update(claimed_until=timezone.now() - timedelta(seconds=1))
    assert provider_events_process() == 0  # given up: it stays unprocessed, visible in the admin

    event = ProviderEvent.objects.get(pk=event_id)
    assert event.processed_at is None and event.attempts == provider_events.EVENT_MAX_ATTEMPTS
    assert "could not be processed" in caplog.text


@pytest.mark.django_db
def test_the_worker_command_processes_what_waits(club):
    provider_events_store(provider=Provider.WHATSAPP, events=[("wamid.CMD", message("wamid.CMD"))])

    call_command("work", "--once")

    assert ProviderEvent.objects.get().outcome == "no_code"


@pytest.mark.django_db
def test_the_cluster_sweep_is_scheduled():
    from django_q.models import Schedule

    from joyback.queue import standing_work_sweep

    schedule = Schedule.objects.get(name="standing-work")
    assert (schedule.func, schedule.minutes, schedule.repeats) == ("joyback.queue.standing_work_sweep", 1, -1)
    assert standing_work_sweep(seconds=1) == 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_racing_workers_process_each_stored_event_exactly_once(monkeypatch):
    processed = []
    lock = threading.Lock()

    def slow(*, event_id):
        time.sleep(0.005)  # long enough for the other workers to look at the same rows
        with lock:
            processed.append(event_id)
        return "counted"

    monkeypatch.setitem(provider_events.EVENT_PROCESSORS, Provider.WHATSAPP, slow)
    stored = provider_events_store(
        provider=Provider.WHATSAPP, events=[(f"wamid.R{n}", {"n": n}) for n in range(60)]
    )
    barrier = threading.Barrier(4)

    def worker():
        try:
            barrier.wait()
            while provider_events_process(limit=3):
                pass
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(processed) == sorted(stored)  # every event, none twice
    assert not ProviderEvent.objects.filter(processed_at__isnull=True).exists()
    assert set(ProviderEvent.objects.values_list("attempts", flat=True)) == {1}
