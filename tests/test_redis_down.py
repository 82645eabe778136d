"""Redis unreachable (REDIS_URL pointing at a closed port): the landing page, sign-in and the API keep
answering from the database, queued work waits in the database, and /healthz/ says what is down."""

import json
import os
import subprocess
import sys

import pytest
from django.urls import reverse
from django_q.conf import Conf
from django_q.models import Schedule

import joyback.cache
import joyback.queue
from joyback.api.keys import api_key_create
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db

CLOSED_PORT = "redis://127.0.0.1:1/0"


def production_caches(redis_url: str) -> dict:
    """CACHES as the production settings make them for this REDIS_URL."""
    environment = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    environment.update(
        JOYBACK_ENV="production",
        REDIS_URL=redis_url,
        SECRET_KEY="k" * 60,
        PAYEE_ENCRYPTION_KEYS="x" * 44,
        PAYEE_FINGERPRINT_KEY="f" * 44,
        # The rest production refuses to start without (config.variables).
        ALLOWED_HOSTS="joyback.example",
        SITE_URL="https://joyback.example",
        ADYEN_API_KEY="own-adyen-key",
        ADYEN_BALANCE_ACCOUNT_ID="BA1",
        ADYEN_HMAC_KEYS="a1b2c3d4" * 8,
        PAYOUT_DEBTOR_IBAN="DE89370400440532013000",
        INVOICE_ISSUER_ADDRESS="Example Street 1, 10115 Berlin",
        INVOICE_ISSUER_VAT_ID="DE811907980",
    )
    result = subprocess.run(
        [sys.executable, "-c", "import json, config.settings as s; print(json.dumps(s.CACHES))"],
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)


@pytest.fixture
def redis_down(settings, monkeypatch):
    """Settings as production with REDIS_URL set, and nothing listening there."""
    settings.REDIS_URL = CLOSED_PORT
    settings.CACHES = production_caches(CLOSED_PORT)
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
    monkeypatch.setattr(joyback.cache, "_down_until", 0.0)
    yield
    monkeypatch.setattr(joyback.cache, "_down_until", 0.0)


def test_the_landing_page_answers(client, summer, redis_down):
    assert client.get(f"/c/{summer.slug}/").status_code == 200
    assert client.get(f"/c/{summer.slug}/").status_code == 200  # and again, from the database cache


def test_a_member_signs_in(client, vic, redis_down):
    response = client.post(reverse("account_login"), {"login": vic.email, "password": PASSWORD})

    assert response.status_code == 302 and client.session["_auth_user_id"] == str(vic.pk)
    assert client.get(reverse("brand_home")).status_code in (200, 302)


def test_the_api_answers(client, alpaca, redis_down):
    secret = api_key_create(brand_id=alpaca.pk, name="shop", scopes=["read", "events"]).secret
    headers = {"Authorization": f"Bearer {secret}"}
    purchase = {
        "type": "purchase",
        "order_id": "A-1",
        "amount": 40_00,
        "currency": "EUR",
        "customer": {"email": "kim@example.com"},
    }

    listed = client.get("/api/v1/campaigns", headers=headers)
    again = client.get("/api/v1/balances", headers=headers)  # the key from the database cache now
    reported = client.post(
        "/api/v1/events",
        json.dumps(purchase),
        content_type="application/json",
        headers={**headers, "Idempotency-Key": "redis-down-1"},
    )

    assert listed.status_code == 200 and again.status_code == 200
    assert reported.status_code == 202, reported.content


def test_queued_work_waits_in_the_database_while_redis_is_down(
    redis_down, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(Conf, "SYNC", False)
    monkeypatch.setattr(Conf, "ORM", None)
    monkeypatch.setattr(Conf, "REDIS", CLOSED_PORT)
    monkeypatch.setattr(joyback.queue._local, "broker", None, raising=False)

    with django_capture_on_commit_callbacks(execute=True):
        joyback.queue.enqueue_on_commit(
            "payouts.tasks.status_link_send_task", 7, "https://x/", "Summer", "en"
        )

    schedule = Schedule.objects.get(name__startswith="redis-down:")
    assert schedule.func == "payouts.tasks.status_link_send_task"
    assert schedule.args == repr((7, "https://x/", "Summer", "en"))
    assert schedule.schedule_type == Schedule.ONCE and schedule.repeats == 1


def test_healthz_says_redis_is_down_and_the_rest_serves(client, redis_down, monitoring):
    ready = client.get("/healthz/ready")
    live = client.get("/healthz/live")

    assert live.status_code == 200
    assert ready.status_code == 200 and ready.json()["status"] == "degraded"
    assert ready.json()["down"] == ["redis"]
    assert client.get("/healthz/", **monitoring).json()["down"] == ["redis"]


def test_healthz_fails_when_the_payment_provider_does_not_answer(client, settings, monitoring):
    settings.SANDBOX, settings.PSP_API_BASE = False, "http://127.0.0.1:1/"

    response = client.get("/healthz/", **monitoring)

    assert response.status_code == 503 and response["Retry-After"]
    assert response.json()["down"] == ["payment_provider"]
    assert client.get("/healthz/live").status_code == 200
    # Every node reaches the provider alike: the load balancer keeps them all in rotation.
    assert client.get("/healthz/ready").status_code == 200


def test_healthz_is_ok_when_everything_answers(client, monitoring):
    response = client.get("/healthz/ready")

    assert response.status_code == 200 and response.json()["status"] == "ok"
    assert set(response.json()["checks"]) == {"database", "redis"}
    assert set(client.get("/healthz/", **monitoring).json()["checks"]) == {
        "database",
        "redis",
        "payment_provider",
        "worker_backlog",
    }
