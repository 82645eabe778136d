"""Dated API versions: a key is pinned at creation, a request may ask for another version in the
JoyBack-Version header, and every answer says which version it was given in."""

import pytest

from joyback.api import versions
from joyback.api.keys import api_key_create
from joyback.api.models import ApiKey, InboundEvent
from tests.api.conftest import purchase

pytestmark = pytest.mark.django_db


@pytest.fixture
def older_version(monkeypatch):
    """A version before today's, as there will be once the API changes."""
    monkeypatch.setattr(versions, "VERSIONS", ("2026-06-01", versions.LATEST))
    return "2026-06-01"


def test_a_new_key_is_pinned_to_the_latest_version_and_answers_name_it(alpaca_api, alpaca, shop):
    assert ApiKey.objects.get().api_version == versions.LATEST
    answer = alpaca_api.get("campaigns")
    assert answer.status_code == 200 and answer["JoyBack-Version"] == versions.LATEST


def test_a_key_pinned_earlier_keeps_its_version(make_api, alpaca, shop, older_version):
    api = make_api(alpaca)
    ApiKey.objects.update(api_version=older_version)
    assert api.get("campaigns")["JoyBack-Version"] == older_version
    accepted = api.post("events", purchase())  # the lean path answers with it too
    assert accepted.status_code == 202 and accepted["JoyBack-Version"] == older_version


def test_a_request_overrides_its_keys_version_with_the_header(client, alpaca, shop, older_version):
    secret = api_key_create(brand_id=alpaca.pk, name="k", scopes=["read"]).secret
    answer = client.get(
        "/api/v1/campaigns",
        headers={"Authorization": f"Bearer {secret}", "JoyBack-Version": older_version},
    )
    assert answer.status_code == 200 and answer["JoyBack-Version"] == older_version


def test_an_unknown_version_is_refused_with_the_versions_there_are_and_nothing_is_stored(
    client, alpaca, shop
):
    secret = api_key_create(brand_id=alpaca.pk, name="k", scopes=["events"]).secret
    answer = client.post(
        "/api/v1/events",
        purchase(),
        content_type="application/json",
        headers={"Authorization": f"Bearer {secret}", "JoyBack-Version": "2019-01-01"},
    )
    assert answer.status_code == 400 and answer["JoyBack-Version"] == versions.LATEST
    assert answer.json()["error"] == {
        "code": "version_unknown",
        "message": f"JoyBack-Version is one of: {versions.LATEST}.",
        "field": "JoyBack-Version",
    }
    assert not InboundEvent.objects.exists()


def test_refusals_and_unknown_paths_name_the_version_too(client):
    assert client.get("/api/v1/campaigns")["JoyBack-Version"] == versions.LATEST  # 401
    assert client.get("/api/v1/nothing-here")["JoyBack-Version"] == versions.LATEST  # 404


def test_pages_outside_the_api_do_not_carry_it(client):
    assert not client.get("/").has_header("JoyBack-Version")


def test_every_version_is_in_the_changelog():
    from pathlib import Path

    changelog = (Path(__file__).resolve().parents[2] / "docs" / "api-changelog.md").read_text()
    for version in versions.VERSIONS:
        assert f"## {version}" in changelog


def test_an_empty_version_header_is_refused_not_taken_for_the_default(client, alpaca, shop):
    secret = api_key_create(brand_id=alpaca.pk, name="k", scopes=["events"]).secret
    answer = client.post(
        "/api/v1/events",
        purchase(),
        content_type="application/json",
        headers={"Authorization": f"Bearer {secret}", "JoyBack-Version": ""},
    )
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "version_unknown"
    assert not InboundEvent.objects.exists()
