"""API keys: shown once, stored hashed, scoped, rotated with a grace period, revoked; rate limited."""

from datetime import timedelta

import pytest
from django.utils import timezone

from joyback.api.keys import api_key_create, api_key_revoke, api_key_rotate
from joyback.api.models import ApiKey
from tests.api.conftest import Api

pytestmark = pytest.mark.django_db


def test_the_secret_is_stored_only_as_a_hash(alpaca):
    issued = api_key_create(brand_id=alpaca.pk, name="shop", scopes=["read"])
    stored = ApiKey.objects.get(pk=issued.api_key.pk)
    assert issued.secret.startswith(stored.prefix + "_")
    assert issued.secret not in (stored.secret_hash, stored.prefix)
    assert len(stored.secret_hash) == 64


def test_a_request_without_a_key_is_refused_in_json(client, shop):
    response = client.get("/api/v1/claims")
    assert response.status_code == 401
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "not_authenticated"
    assert response["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize("header", ["Bearer jb_nope_nope", "Basic abc", "Bearer "])
def test_a_wrong_key_is_refused(client, alpaca, header):
    response = client.get("/api/v1/claims", headers={"Authorization": header})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"


def test_a_guessed_secret_with_a_real_prefix_is_refused(client, alpaca):
    issued = api_key_create(brand_id=alpaca.pk, name="shop", scopes=["read"])
    forged = issued.api_key.prefix + "_" + "x" * 43
    response = client.get("/api/v1/claims", headers={"Authorization": f"Bearer {forged}"})
    assert response.status_code == 401


def test_use_is_recorded(client, alpaca):
    issued = api_key_create(brand_id=alpaca.pk, name="shop", scopes=["read"])
    assert Api(client, issued.secret).get("claims").status_code == 200
    issued.api_key.refresh_from_db()
    assert issued.api_key.last_used_at is not None


def test_a_key_without_the_scope_is_forbidden(client, alpaca, shop):
    reader = Api(client, api_key_create(brand_id=alpaca.pk, name="ro", scopes=["read"]).secret)
    response = reader.post("events", {"type": "refund", "order_id": "A-1"})
    assert response.status_code == 403
    assert response.json()["error"] == {
        "code": "permission_denied",
        "message": "This API key lacks the events scope.",
        "field": None,
    }
    writer = Api(client, api_key_create(brand_id=alpaca.pk, name="wo", scopes=["events"]).secret)
    assert writer.get("claims").status_code == 403


def test_a_revoked_key_stops_at_once(client, alpaca):
    issued = api_key_create(brand_id=alpaca.pk, name="shop", scopes=["read"])
    api_key_revoke(api_key=issued.api_key)
    assert Api(client, issued.secret).get("claims").status_code == 401


def test_rotation_keeps_the_old_key_for_its_grace_period(client, alpaca, monkeypatch):
    old = api_key_create(brand_id=alpaca.pk, name="shop", scopes=["read", "events"])
    new = api_key_rotate(api_key=old.api_key, grace_hours=24)
    assert new.api_key.scopes == ["events", "read"] and new.api_key.name == "shop"
    assert Api(client, old.secret).get("claims").status_code == 200
    assert Api(client, new.secret).get("claims").status_code == 200
    later = timezone.now() + timedelta(hours=24, seconds=1)
    monkeypatch.setattr(timezone, "now", lambda: later)
    assert Api(client, old.secret).get("claims").status_code == 401
    assert Api(client, new.secret).get("claims").status_code == 200


def test_rotation_without_grace_stops_the_old_key_now(client, alpaca):
    old = api_key_create(brand_id=alpaca.pk, name="shop", scopes=["read"])
    api_key_rotate(api_key=old.api_key, grace_hours=0)
    assert Api(client, old.secret).get("claims").status_code == 401


def test_the_rate_limit_answers_429_with_retry_after(alpaca_api, settings):
    settings.API_REQUESTS_PER_MINUTE = 3
    codes = [alpaca_api.get("claims").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    response = alpaca_api.get("claims")
    assert response.json()["error"]["code"] == "throttled"
    assert 1 <= int(response["Retry-After"]) <= 60


def test_the_rate_limit_is_per_key(alpaca, make_api, settings):
    settings.API_REQUESTS_PER_MINUTE = 1
    first, second = make_api(alpaca), make_api(alpaca)
    assert first.get("claims").status_code == 200
    assert first.get("claims").status_code == 429
    assert second.get("claims").status_code == 200


def test_a_key_outliving_its_brand_finds_nothing_rather_than_failing(client, alpaca):
    # ApiKey.brand_id is no foreign key: a brand's removal leaves its keys' rows behind.
    api = Api(client, api_key_create(brand_id=alpaca.pk + 10_000, name="orphan", scopes=["read"]).secret)
    listed = api.get("campaigns")
    assert listed.status_code == 200 and listed.json() == {"data": [], "has_more": False, "livemode": True}
    assert api.get("campaigns/1").status_code == 404
