"""The dashboard's developer pages: keys shown once, rotated and revoked by owners; webhook
endpoints with their delivery log and redeliver button; other roles only look."""

import re

import httpx
import pytest

from joyback.api.models import ApiKey, WebhookDelivery, WebhookEndpoint
from joyback.api.webhooks.delivery import webhook_event_emit
from joyback.api.webhooks.transport import webhook_transport_set

pytestmark = pytest.mark.django_db

SECRET_RE = re.compile(r'data-testid="new-secret">(jb_[^<]+)<')


def api_get(client, secret):
    return client.get("/api/v1/claims", headers={"Authorization": f"Bearer {secret}"})


def create_key(client, **data):
    return client.post("/brands/alpaca/developers/keys/", {"name": "Shop", "scopes": ["read"], **data})


def test_an_owner_creates_a_key_and_sees_it_once(client, alice, alpaca):
    client.force_login(alice)
    page = create_key(client)
    assert page.status_code == 200
    secret = SECRET_RE.search(page.content.decode()).group(1)
    assert api_get(client, secret).status_code == 200
    again = client.get("/brands/alpaca/developers/").content.decode()
    assert secret not in again and ApiKey.objects.get().prefix in again


def test_a_key_without_scopes_is_refused_and_nothing_made(client, alice, alpaca):
    client.force_login(alice)
    page = create_key(client, scopes=[])
    assert page.status_code == 400 and b"This field is required" in page.content
    assert not ApiKey.objects.exists()


def test_rotate_and_revoke_from_the_page(client, alice, alpaca):
    client.force_login(alice)
    old = SECRET_RE.search(create_key(client).content.decode()).group(1)
    key = ApiKey.objects.get()
    page = client.post(f"/brands/alpaca/developers/keys/{key.pk}/rotate/", {"grace_hours": "0"})
    new = SECRET_RE.search(page.content.decode()).group(1)
    assert api_get(client, old).status_code == 401 and api_get(client, new).status_code == 200
    replacement = ApiKey.objects.exclude(pk=key.pk).get()
    client.post(f"/brands/alpaca/developers/keys/{replacement.pk}/revoke/")
    assert api_get(client, new).status_code == 401


@pytest.mark.parametrize("persona", ["fiona", "vic"])
def test_finance_and_viewers_look_but_do_not_manage(client, request, alpaca, persona):
    from joyback.api.keys import api_key_create
    from joyback.api.webhooks.endpoints import webhook_endpoint_create

    user = request.getfixturevalue(persona)
    issued = api_key_create(brand_id=alpaca.pk, name="shop", scopes=["read"])
    endpoint = webhook_endpoint_create(
        brand_id=alpaca.pk, url="https://s.example/h", event_types=["reward.approved"]
    )
    client.force_login(user)
    page = client.get("/brands/alpaca/developers/").content.decode()
    assert issued.api_key.prefix in page and "New API key" not in page
    assert (
        endpoint.secret
        not in client.get(f"/brands/alpaca/developers/webhooks/{endpoint.pk}/").content.decode()
    )
    assert create_key(client).status_code == 403
    assert client.post(f"/brands/alpaca/developers/keys/{issued.api_key.pk}/revoke/").status_code == 403
    assert ApiKey.objects.count() == 1 and ApiKey.objects.get().revoked_at is None


def test_an_owner_adds_an_endpoint_and_redelivers_from_its_log(
    client, alice, alpaca, django_capture_on_commit_callbacks
):
    received = []
    webhook_transport_set(
        httpx.MockTransport(lambda request: received.append(request) or httpx.Response(500))
    )
    try:
        client.force_login(alice)
        response = client.post(
            "/brands/alpaca/developers/webhooks/",
            {"url": "https://shop.example/hooks", "event_types": ["reward.approved", "purchase.created"]},
        )
        endpoint = WebhookEndpoint.objects.get()
        assert response.status_code == 302 and response["Location"].endswith(f"/webhooks/{endpoint.pk}/")
        with django_capture_on_commit_callbacks(execute=True):
            webhook_event_emit(brand_id=alpaca.pk, type="reward.approved", data={"claim_id": 1})
        page = client.get(response["Location"]).content.decode()
        assert "reward.approved" in page and "HTTP 500" in page
        delivery = WebhookDelivery.objects.get()
        with django_capture_on_commit_callbacks(execute=True):
            client.post(f"/brands/alpaca/developers/deliveries/{delivery.pk}/redeliver/")
        assert len(received) == 2
        old = endpoint.secret
        client.post(f"/brands/alpaca/developers/webhooks/{endpoint.pk}/rotate/", {"grace_hours": "24"})
        endpoint.refresh_from_db()
        assert endpoint.secret != old and endpoint.previous_secret == old
    finally:
        webhook_transport_set(None)


def test_a_bad_endpoint_is_refused_and_nothing_made(client, alice, alpaca):
    client.force_login(alice)
    page = client.post("/brands/alpaca/developers/webhooks/", {"url": "ftp://x", "event_types": ["nope"]})
    assert page.status_code == 400
    assert not WebhookEndpoint.objects.exists()
