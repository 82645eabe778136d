"""TikTok webhooks: Tiktok-Signature t=..,s=.. over "t.body", fresh, for our app, stored once."""

import json
import time

import pytest

from verification.models import ProviderEvent, TikTokToken
from verification.providers.tiktok import webhook_signature

pytestmark = pytest.mark.django_db

URL = "/v/webhooks/tiktok/"
SECRET = "sbx-tiktok-secret"


def event_body(event="authorization.removed", open_id="oid-1", client_key="sbx-joyback"):
    return json.dumps(
        {
            "client_key": client_key,
            "event": event,
            "create_time": int(time.time()),
            "user_openid": open_id,
            "content": json.dumps({"reason": 1}),
        }
    ).encode()


def post(client, body, header):
    return client.post(URL, body, content_type="application/json", headers={"Tiktok-Signature": header})


def signed(body, *, secret=SECRET, at=None):
    return webhook_signature(body=body, timestamp=at or int(time.time()), secret=secret)


def test_a_genuine_event_is_stored_once(client):
    body = event_body()

    first = post(client, body, signed(body))
    replay = post(client, body, signed(body))

    assert first.status_code == replay.status_code == 200
    assert ProviderEvent.objects.filter(provider="tiktok").count() == 1


@pytest.mark.parametrize(
    ("tamper", "status"),
    [
        ("one_byte", 401),
        ("wrong_secret", 401),
        ("reserialized", 401),
        ("old_timestamp", 400),
        ("future_timestamp", 400),
        ("no_header", 401),
        ("garbage_header", 401),
    ],
)
def test_a_forged_or_stale_event_is_refused_and_nothing_stored(client, tamper, status):
    body = event_body()
    header = signed(body)
    if tamper == "one_byte":
        body = body.replace(b"oid-1", b"oid-2")
    elif tamper == "wrong_secret":
        header = signed(body, secret="guess")
    elif tamper == "reserialized":
        body = json.dumps(json.loads(body), indent=1).encode()
    elif tamper == "old_timestamp":
        header = signed(body, at=int(time.time()) - 3600)
    elif tamper == "future_timestamp":
        header = signed(body, at=int(time.time()) + 3600)
    elif tamper == "no_header":
        header = ""
    else:
        header = "t=abc,s=zzz"

    response = post(client, body, header)

    assert response.status_code == status
    assert not ProviderEvent.objects.exists()


def test_an_event_for_another_app_is_refused(client):
    body = event_body(client_key="someone-else")

    assert post(client, body, signed(body)).status_code == 401
    assert not ProviderEvent.objects.exists()


def test_malformed_json_is_refused(client):
    body = b"{not json"

    assert post(client, body, signed(body)).status_code == 400


def test_authorization_removed_kills_the_stored_tokens(client, summer):
    from tests.verification.test_tiktok_login import authorize
    from verification.services.provider_events import provider_events_process

    client.get(authorize(client, summer.slug))
    token = TikTokToken.objects.get()
    body = event_body(open_id=token.identity.subject)

    post(client, body, signed(body))
    provider_events_process()  # the standing worker's next step

    token.refresh_from_db()
    assert token.revoked_at is not None


@pytest.mark.parametrize("secret", ["", None])
def test_without_the_client_secret_every_event_is_refused_even_one_signed_with_an_empty_key(
    client, settings, secret
):
    settings.TIKTOK_CLIENT_SECRET = secret
    body = event_body()

    response = post(client, body, signed(body, secret=""))

    assert response.status_code == 401
    assert not ProviderEvent.objects.exists()
