"""Idempotency-Key with Stripe's semantics: replay, 422 on another body, 409 while in flight."""

import json
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from joyback.api.models import IdempotencyKey
from joyback.api.services import api_key_create, idempotency_keys_expire
from tests.api.conftest import Api, purchase
from verification.models import ActionClaim, Purchase

pytestmark = pytest.mark.django_db


def test_the_same_key_and_body_replays_the_first_answer(alpaca_api, shop):
    first = alpaca_api.post("events", purchase(), idempotency_key="k-1")
    again = alpaca_api.post("events", purchase(), idempotency_key="k-1")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert Purchase.objects.count() == 1


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
    assert list(Purchase.objects.values_list("order_id", flat=True)) == ["A-1001"]


def test_a_refusal_is_replayed_too(alpaca_api, shop):
    first = alpaca_api.post("events", purchase(currency="USD"), idempotency_key="k-usd")
    again = alpaca_api.post("events", purchase(currency="USD"), idempotency_key="k-usd")
    assert first.status_code == again.status_code == 422
    assert again.json() == first.json()


def test_the_same_key_while_the_first_is_in_flight_is_409(alpaca_api, shop):
    now = timezone.now()
    api_key = IdempotencyKey._meta.get_field("api_key").related_model.objects.get()
    from joyback.api.services import request_fingerprint

    body = json.dumps(purchase()).encode()
    IdempotencyKey.objects.create(
        api_key=api_key,
        key="k-busy",
        request_hash=request_fingerprint(method="POST", path="/api/v1/events", body=body),
        created_at=now,
        locked_at=now,
    )
    response = alpaca_api.post("events", purchase(), idempotency_key="k-busy")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "idempotency_in_flight"
    assert not Purchase.objects.exists()


def test_a_first_request_that_died_does_not_hold_its_key_forever(alpaca_api, shop):
    test_the_same_key_while_the_first_is_in_flight_is_409(alpaca_api, shop)
    IdempotencyKey.objects.update(locked_at=timezone.now() - timedelta(minutes=5))
    assert alpaca_api.post("events", purchase(), idempotency_key="k-busy").status_code == 201


def test_keys_are_scoped_per_api_key(alpaca, make_api, shop):
    first, second = make_api(alpaca), make_api(alpaca)
    assert first.post("events", purchase(), idempotency_key="same").status_code == 201
    # Another key, same Idempotency-Key, another body: not a conflict, its own request.
    response = second.post("events", purchase(order_id="B-7"), idempotency_key="same")
    assert response.status_code == 201


def test_keys_are_kept_a_day_and_then_forgotten(alpaca_api, shop):
    alpaca_api.post("events", purchase(), idempotency_key="k-old")
    assert idempotency_keys_expire(now=timezone.now() + timedelta(hours=47)) == 0
    assert IdempotencyKey.objects.count() == 1
    assert idempotency_keys_expire(now=timezone.now() + timedelta(hours=49)) == 1


def test_a_key_past_its_lifetime_may_be_used_for_a_new_request(alpaca_api, shop):
    alpaca_api.post("events", purchase(), idempotency_key="k-old")
    IdempotencyKey.objects.update(created_at=timezone.now() - timedelta(hours=25))
    response = alpaca_api.post("events", purchase(order_id="A-2"), idempotency_key="k-old")
    assert response.status_code == 201


def test_a_server_error_releases_the_key_for_a_retry(client, alpaca_api, shop, monkeypatch):
    import verification.api

    real = verification.api.purchase_record
    monkeypatch.setattr(verification.api, "purchase_record", lambda **kw: 1 / 0)
    client.raise_request_exception = False
    assert alpaca_api.post("events", purchase(), idempotency_key="k-5xx").status_code == 500
    assert not IdempotencyKey.objects.exists()
    monkeypatch.setattr(verification.api, "purchase_record", real)
    assert alpaca_api.post("events", purchase(), idempotency_key="k-5xx").status_code == 201


def test_posts_without_a_key_are_not_recorded(alpaca_api, shop):
    alpaca_api.post("events", purchase())
    assert not IdempotencyKey.objects.exists()


def test_an_overlong_key_is_refused(alpaca_api, shop):
    response = alpaca_api.post("events", purchase(), idempotency_key="k" * 256)
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "Idempotency-Key"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_requests_racing_with_the_same_key(alpaca, shop, monkeypatch):
    """The second arrives while the first is inside the service: it gets 409, the first 201, and
    afterwards the key replays the first answer. One purchase, one claim."""
    import verification.api

    secret = api_key_create(brand_id=alpaca.pk, name="shop", scopes=["events"]).secret
    inside, release = threading.Event(), threading.Event()
    real = verification.api.purchase_record

    def slow(**kwargs):
        inside.set()
        assert release.wait(10)
        return real(**kwargs)

    monkeypatch.setattr(verification.api, "purchase_record", slow)
    answers = {}

    def call(name):
        try:
            answers[name] = Api(Client(), secret).post("events", purchase(), idempotency_key="race")
        finally:
            connection.close()

    first = threading.Thread(target=call, args=("first",))
    first.start()
    assert inside.wait(10)
    call("second")
    release.set()
    first.join(10)
    assert answers["first"].status_code == 201
    assert answers["second"].status_code == 409
    replay = Api(Client(), secret).post("events", purchase(), idempotency_key="race")
    assert replay.status_code == 201 and replay.json() == answers["first"].json()
    assert Purchase.objects.count() == ActionClaim.objects.count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_many_requests_racing_with_the_same_key_make_one_claim(alpaca, shop):
    secret = api_key_create(brand_id=alpaca.pk, name="shop", scopes=["events"]).secret
    barrier = threading.Barrier(8)
    codes = []

    def call():
        try:
            barrier.wait(10)
            codes.append(Api(Client(), secret).post("events", purchase(), idempotency_key="herd").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert set(codes) <= {201, 409} and codes.count(201) >= 1
    assert Purchase.objects.count() == ActionClaim.objects.count() == 1
