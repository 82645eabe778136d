"""POST /events answers 202 once the event is stored; a worker makes the claim and the brand
follows it by GET /events/{id} or by webhook. The request itself writes once; a replay is one read."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from joyback.api.events import inbound_event_accept
from joyback.api.idempotency import IdempotencyConflict
from joyback.api.keys import api_key_revoke
from joyback.api.models import InboundEvent
from joyback.api.webhooks.endpoints import webhook_endpoint_create
from joyback.queue import standing_work_sweep
from tests.api.conftest import purchase
from tests.verification.test_claim_races import race
from verification.inbox import inbound_event_process
from verification.models import ActionClaim, Purchase

pytestmark = pytest.mark.django_db


def test_the_event_is_received_then_processed_into_a_claim(alpaca_api, shop):
    accepted = alpaca_api.post("events", purchase())

    assert accepted.status_code == 202
    body = accepted.json()
    assert set(body) == {"id", "type", "status", "livemode"}
    assert (body["type"], body["status"], body["livemode"]) == ("purchase", "received", True)
    waiting = alpaca_api.get(f"events/{body['id']}").json()
    assert (waiting["status"], waiting["claim"], waiting["processed_at"]) == ("received", None, None)
    assert not Purchase.objects.exists()

    inbound_event_process(event_id=body["id"])

    done = alpaca_api.get(f"events/{body['id']}").json()
    assert (done["status"], done["new_claim"], done["error"]) == ("processed", True, None)
    assert done["claim"]["id"] == ActionClaim.objects.get().pk and done["claim"]["order_id"] == "A-1001"
    inbound_event_process(event_id=body["id"])  # a task run twice changes nothing
    assert ActionClaim.objects.count() == 1


def test_the_brand_hears_of_processed_and_refused_events_by_webhook(
    alpaca, alpaca_api, shop, receiver, django_capture_on_commit_callbacks
):
    webhook_endpoint_create(
        brand_id=alpaca.pk, url="https://shop.example/hooks", event_types=["event.processed", "event.refused"]
    )
    with django_capture_on_commit_callbacks(execute=True):
        good = alpaca_api.post("events", purchase()).json()
        bad = alpaca_api.post("events", purchase(order_id="B-1", currency="USD")).json()

    bodies = {body["type"]: body["data"] for body in receiver.bodies()}
    assert bodies["event.processed"]["event_id"] == good["id"]
    assert bodies["event.processed"]["claim_id"] == ActionClaim.objects.get().pk
    assert bodies["event.refused"]["event_id"] == bad["id"]
    assert bodies["event.refused"]["error"]["code"] == "currency_mismatch"


def test_a_refund_processed_before_its_purchase_waits_for_it(alpaca_api, shop):
    """Workers may take tasks out of order: the refund processes the purchase reported before it."""
    bought = alpaca_api.post("events", purchase()).json()
    refund = alpaca_api.post("events", {"type": "refund", "order_id": "A-1001"}).json()

    inbound_event_process(event_id=refund["id"])
    inbound_event_process(event_id=bought["id"])

    assert alpaca_api.get(f"events/{refund['id']}").json()["claim"]["status"] == "rejected"
    assert alpaca_api.get(f"events/{bought['id']}").json()["status"] == "processed"
    assert Purchase.objects.get().status == "refunded"


def test_an_event_only_stored_is_processed_by_the_clusters_sweep(alpaca_api, shop):
    event = alpaca_api.post("events", purchase()).json()  # the inline worker never ran: no commit
    assert InboundEvent.objects.get(pk=event["id"]).status == "received"

    assert standing_work_sweep(seconds=5) == 1  # what the cluster runs each minute

    assert alpaca_api.get(f"events/{event['id']}").json()["status"] == "processed"
    assert Purchase.objects.count() == 1


def test_an_event_whose_processing_failed_is_tried_again_once_its_lease_ends(alpaca_api, shop, monkeypatch):
    from verification import inbox

    event = alpaca_api.post("events", purchase()).json()
    real = inbox.inbound_event_process
    monkeypatch.setattr(inbox, "inbound_event_process", lambda **kw: 1 / 0)
    assert inbox.inbound_events_process() == 1  # claimed, failed (logged), leased
    monkeypatch.setattr(inbox, "inbound_event_process", real)

    assert inbox.inbound_events_process() == 0  # still leased to the worker that failed
    later = timezone.now() + timedelta(minutes=6)
    monkeypatch.setattr(timezone, "now", lambda: later)
    assert inbox.inbound_events_process() == 1

    stored = InboundEvent.objects.get(pk=event["id"])
    assert (stored.status, stored.attempts) == ("processed", 2)


def test_a_request_writes_once_and_replays_are_answered_from_the_cache(alpaca_api, shop):
    alpaca_api.post("events", purchase(order_id="warm-up"), idempotency_key="warm-up")  # key now cached

    # Each list is read at once: the next request starts a new query log.
    with CaptureQueriesContext(connection) as fresh:
        first = alpaca_api.post("events", purchase(), idempotency_key="k-1")
    writes = [q["sql"].split()[0] for q in fresh.captured_queries if "SAVEPOINT" not in q["sql"]]
    with CaptureQueriesContext(connection) as replay:
        again = alpaca_api.post("events", purchase(), idempotency_key="k-1")
    first_replay = [q["sql"] for q in replay.captured_queries if "SAVEPOINT" not in q["sql"]]
    with CaptureQueriesContext(connection) as replay:
        third = alpaca_api.post("events", purchase(), idempotency_key="k-1")
    later_replay = list(replay.captured_queries)
    mismatch = alpaca_api.post("events", purchase(amount=999), idempotency_key="k-1")

    # The key's answer and the event, no look-up: one statement.
    assert writes == ["WITH"]
    # The first replay finds the key taken, reads its answer once; the next ones need no query.
    assert first_replay[-1].startswith("SELECT") and "api_idempotencykey" in first_replay[-1]
    assert later_replay == []
    assert again["Idempotent-Replayed"] == third["Idempotent-Replayed"] == "true"
    assert first.content == again.content == third.content
    assert mismatch.status_code == 422 and mismatch.json()["error"]["code"] == "idempotency_key_reused"
    assert InboundEvent.objects.count() == 2


def test_a_cached_replay_ends_with_its_keys_lifetime(alpaca_api, shop, monkeypatch):
    alpaca_api.post("events", purchase(), idempotency_key="k-1")
    assert alpaca_api.post("events", purchase(), idempotency_key="k-1")["Idempotent-Replayed"] == "true"
    later = timezone.now() + timedelta(hours=24, seconds=1)
    monkeypatch.setattr(timezone, "now", lambda: later)

    response = alpaca_api.post("events", purchase(order_id="A-2"), idempotency_key="k-1")

    assert response.status_code == 202 and "Idempotent-Replayed" not in response
    assert InboundEvent.objects.count() == 2


def test_a_revoked_key_stops_at_once_though_keys_are_cached(
    client, alpaca_api, shop, django_capture_on_commit_callbacks
):
    from joyback.api.models import ApiKey

    assert alpaca_api.get("claims").status_code == 200  # cached now
    with django_capture_on_commit_callbacks(execute=True):
        api_key_revoke(api_key=ApiKey.objects.get())
    assert alpaca_api.get("claims").status_code == 401


@pytest.fixture
def workers(monkeypatch):
    """Tasks go to the database broker for worker processes, as in production without Redis."""
    from django_q.conf import Conf

    monkeypatch.setattr(Conf, "SYNC", False)
    monkeypatch.setattr(Conf, "ORM", "default")


@pytest.mark.postgres
def test_with_workers_an_event_is_one_statement_and_the_standing_worker_claims_it(workers, alpaca_api, shop):
    from django.core.management import call_command
    from django_q.models import OrmQ

    alpaca_api.get("claims")  # the key is cached and its last use written

    with CaptureQueriesContext(connection) as keyed:
        accepted = alpaca_api.post("events", purchase(), idempotency_key="k-1")
    keyed_statements = [q["sql"].split()[0] for q in keyed.captured_queries]
    again = alpaca_api.post("events", purchase(), idempotency_key="k-1")
    with CaptureQueriesContext(connection) as unkeyed_request:
        unkeyed = alpaca_api.post("events", purchase(order_id="A-2"))

    assert accepted.status_code == again.status_code == unkeyed.status_code == 202
    assert keyed_statements == ["WITH"]  # the key's answer and the event: one statement, one commit
    assert [q["sql"].split()[0] for q in unkeyed_request.captured_queries] == ["INSERT"]
    assert InboundEvent.objects.count() == 2 and not OrmQ.objects.exists()  # no task row per event
    assert not Purchase.objects.exists()

    call_command("work", "--once")  # the standing worker

    assert Purchase.objects.count() == 2
    assert set(InboundEvent.objects.values_list("status", flat=True)) == {"processed"}


def test_a_key_taken_meanwhile_leaves_nothing_written(workers, alpaca, alpaca_api, shop):
    from django_q.models import OrmQ

    from joyback.api.models import ApiKey

    alpaca_api.post("events", purchase(), idempotency_key="k-1")
    with pytest.raises(IdempotencyConflict):
        inbound_event_accept(
            api_key=ApiKey.objects.get(),
            type="purchase",
            payload=purchase(order_id="A-2"),
            answer=lambda event: b"{}",
            idempotency=("k-1", "another body"),
        )
    assert InboundEvent.objects.count() == 1 and not OrmQ.objects.exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_requests_racing_with_one_key_store_one_event(workers, alpaca, shop):

    from django.test import Client
    from django_q.models import OrmQ

    from joyback.api.keys import api_key_create
    from tests.api.conftest import Api

    secret = api_key_create(brand_id=alpaca.pk, name="shop", scopes=["events"]).secret
    answers = race(8, lambda i: Api(Client(), secret).post("events", purchase(), idempotency_key="herd"))
    assert [answer.status_code for answer in answers] == [202] * 8
    assert len({answer.content for answer in answers}) == 1
    assert InboundEvent.objects.count() == 1 and not OrmQ.objects.exists()
