"""Idempotency-Key with Stripe's semantics: replay, 422 on another body, 409 while in flight.

POST /events stores its answer with the event in one statement; the other POSTs (payouts) hold
the key while they work: both are covered here (payouts also in test_payouts)."""

import json
import threading
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test import Client
from django.utils import timezone

from joyback.api.idempotency import idempotency_keys_expire
from joyback.api.keys import api_key_create, api_key_rotate
from joyback.api.models import IdempotencyKey, InboundEvent
from tests.api.conftest import Api, purchase
from tests.verification.test_claim_races import race
from verification.models import ActionClaim, Purchase

pytestmark = pytest.mark.django_db


def test_the_same_key_and_body_replays_the_first_answer(alpaca_api, shop):
    first = alpaca_api.post("events", purchase(), idempotency_key="k-1")
    again = alpaca_api.post("events", purchase(), idempotency_key="k-1")
    assert first.status_code == again.status_code == 202
    assert again.content == first.content and first.json()["status"] == "received"
    assert again["Idempotent-Replayed"] == "true"
    assert InboundEvent.objects.count() == 1


def test_the_same_key_with_the_body_spaced_differently_is_the_same_request(alpaca_api, shop):
    alpaca_api.post("events", purchase(), idempotency_key="k-1")
    spaced = json.dumps(purchase(), indent=4)
    assert alpaca_api.post("events", None, raw=spaced, idempotency_key="k-1")["Idempotent-Replayed"] == "true"


def test_the_same_key_with_another_body_is_422_and_changes_nothing(alpaca_api, shop):
    alpaca_api.post("events", purchase(), idempotency_key="k-1")
    response = alpaca_api.post("events", purchase(order_id="A-2"), idempotency_key="k-1")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "idempotency_key_reused"
    assert response.json()["error"]["field"] == "Idempotency-Key"
    assert [event.payload["order_id"] for event in InboundEvent.objects.all()] == ["A-1001"]


def test_a_refusal_is_replayed_too(alpaca_api, shop):
    first = alpaca_api.post("events", purchase(amount="12.50"), idempotency_key="k-bad")
    again = alpaca_api.post("events", purchase(amount="12.50"), idempotency_key="k-bad")
    assert first.status_code == again.status_code == 400
    assert again.json() == first.json() and again["Idempotent-Replayed"] == "true"
    other = alpaca_api.post("events", purchase(), idempotency_key="k-bad")
    assert other.status_code == 422
    assert not InboundEvent.objects.exists()


def test_the_same_key_while_the_first_is_in_flight_is_409(alpaca_api, shop):
    now = timezone.now()
    api_key = IdempotencyKey._meta.get_field("api_key").related_model.objects.get()
    from joyback.api.idempotency import request_fingerprint

    body = json.dumps(purchase()).encode()
    IdempotencyKey.objects.create(
        brand_id=api_key.brand_id,
        api_key=api_key,
        key="k-busy",
        request_hash=request_fingerprint(method="POST", path="/api/v1/events", body=body),
        created_at=now,
        locked_at=now,
    )
    response = alpaca_api.post("events", purchase(), idempotency_key="k-busy")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "idempotency_in_flight"
    assert not InboundEvent.objects.exists()


def test_a_first_request_that_died_does_not_hold_its_key_forever(alpaca_api, shop):
    test_the_same_key_while_the_first_is_in_flight_is_409(alpaca_api, shop)
    IdempotencyKey.objects.update(locked_at=timezone.now() - timedelta(minutes=5))
    assert alpaca_api.post("events", purchase(), idempotency_key="k-busy").status_code == 202
    assert alpaca_api.post("events", purchase(), idempotency_key="k-busy")["Idempotent-Replayed"] == "true"


def test_a_retry_after_rotating_the_key_gets_the_first_answer(alpaca, client, shop):
    """The client sent a purchase, got no answer, rotated its key, and retries with the new one:
    the key is the brand's, so the retry is the same request, not a second event."""
    issued = api_key_create(brand_id=alpaca.pk, name="shop", scopes=["events"])
    first = Api(client, issued.secret).post("events", purchase(), idempotency_key="order-A-1001")
    rotated = api_key_rotate(api_key=issued.api_key).secret
    assert Api(client, issued.secret).post("events", purchase()).status_code == 401  # the old key is gone

    again = Api(client, rotated).post("events", purchase(), idempotency_key="order-A-1001")
    assert first.status_code == again.status_code == 202
    assert again.content == first.content and again["Idempotent-Replayed"] == "true"
    assert InboundEvent.objects.count() == 1

    other = Api(client, rotated).post("events", purchase(order_id="A-2"), idempotency_key="order-A-1001")
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "idempotency_key_reused"
    assert InboundEvent.objects.count() == 1


def test_two_keys_of_one_brand_share_their_idempotency_keys(alpaca, make_api, shop):
    first, second = make_api(alpaca), make_api(alpaca)
    assert first.post("events", purchase(), idempotency_key="same").status_code == 202
    again = second.post("events", purchase(), idempotency_key="same")
    assert again["Idempotent-Replayed"] == "true"
    assert second.post("events", purchase(order_id="B-7"), idempotency_key="same").status_code == 422
    assert InboundEvent.objects.count() == 1


def test_another_brand_using_the_same_key_is_its_own_request(alpaca_api, bison_api, shop):
    """Brands never see each other's answers, nor block each other, through a shared key."""
    mine = alpaca_api.post("events", purchase(), idempotency_key="same")
    theirs = bison_api.post("events", purchase(order_id="B-7"), idempotency_key="same")
    assert mine.status_code == 202 and "Idempotent-Replayed" not in theirs
    assert theirs.content != mine.content
    assert IdempotencyKey.objects.filter(key="same").count() == 2


def test_keys_are_kept_a_day_and_then_forgotten(alpaca_api, shop):
    alpaca_api.post("events", purchase(), idempotency_key="k-old")
    assert idempotency_keys_expire(now=timezone.now() + timedelta(hours=47)) == 0
    assert IdempotencyKey.objects.count() == 1
    assert idempotency_keys_expire(now=timezone.now() + timedelta(hours=49)) == 1


def test_a_key_past_its_lifetime_may_be_used_for_a_new_request(alpaca_api, shop):
    alpaca_api.post("events", purchase(), idempotency_key="k-old")
    IdempotencyKey.objects.update(created_at=timezone.now() - timedelta(hours=25))
    response = alpaca_api.post("events", purchase(order_id="A-2"), idempotency_key="k-old")
    assert response.status_code == 202 and "Idempotent-Replayed" not in response
    assert (
        alpaca_api.post("events", purchase(order_id="A-2"), idempotency_key="k-old").content
        == response.content
    )


def test_a_server_error_releases_the_key_for_a_retry(client, alpaca_api, shop, monkeypatch):
    from django.db import OperationalError

    import joyback.api.sql

    def database_gone(*args, **kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    # The write fails: the one statement on PostgreSQL, the event after its key elsewhere.
    monkeypatch.setattr(joyback.api.sql, "prepared_fetchall", database_gone)
    monkeypatch.setattr(InboundEvent, "save", database_gone)
    client.raise_request_exception = False
    # A lost database is "try again shortly" (503 with Retry-After), never a key held for ever.
    gone = alpaca_api.post("events", purchase(), idempotency_key="k-5xx")
    assert gone.status_code == 503 and gone["Retry-After"]
    assert not IdempotencyKey.objects.exists() and not InboundEvent.objects.exists()
    monkeypatch.undo()
    assert alpaca_api.post("events", purchase(), idempotency_key="k-5xx").status_code == 202


def test_posts_without_a_key_are_not_recorded(alpaca_api, shop):
    alpaca_api.post("events", purchase())
    assert not IdempotencyKey.objects.exists()


def test_an_overlong_key_is_refused(alpaca_api, shop):
    response = alpaca_api.post("events", purchase(), idempotency_key="k" * 256)
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "Idempotency-Key"


def waiting_for_a_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE NOT granted")
        return cursor.fetchone()[0] > 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_requests_racing_with_the_same_key(alpaca, shop, monkeypatch):
    """The second arrives while the first is inside its transaction: it waits for the first's
    commit and answers its replay. One event, one purchase, one claim."""
    import joyback.api.sql

    secret = api_key_create(brand_id=alpaca.pk, name="shop", scopes=["events"]).secret
    inside, release = threading.Event(), threading.Event()
    real = joyback.api.sql.prepared_fetchall

    def slow(*args):
        # The first request's one statement, held uncommitted until the second is waiting on it.
        if inside.is_set():
            return real(*args)
        with transaction.atomic():
            rows = real(*args)
            inside.set()
            assert release.wait(10)
        return rows

    monkeypatch.setattr(joyback.api.sql, "prepared_fetchall", slow)
    answers = {}

    def call(name):
        try:
            answers[name] = Api(Client(), secret).post("events", purchase(), idempotency_key="race")
        finally:
            connection.close()

    first = threading.Thread(target=call, args=("first",))
    first.start()
    assert inside.wait(10)
    second = threading.Thread(target=call, args=("second",))
    second.start()
    for _attempt in range(200):  # the second blocks on the first's uncommitted key
        if waiting_for_a_lock():
            break
        threading.Event().wait(0.05)
    release.set()
    first.join(10)
    second.join(10)
    assert answers["first"].status_code == answers["second"].status_code == 202
    assert answers["second"].content == answers["first"].content
    assert answers["second"]["Idempotent-Replayed"] == "true"
    assert InboundEvent.objects.count() == 1
    assert Purchase.objects.count() == ActionClaim.objects.count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_many_requests_racing_with_the_same_key_make_one_claim(alpaca, shop):
    secret = api_key_create(brand_id=alpaca.pk, name="shop", scopes=["events"]).secret
    answers = race(8, lambda i: Api(Client(), secret).post("events", purchase(), idempotency_key="herd"))
    assert [answer.status_code for answer in answers] == [202] * 8
    assert len({answer.content for answer in answers}) == 1
    assert InboundEvent.objects.count() == 1
    assert Purchase.objects.count() == ActionClaim.objects.count() == 1
