"""Each brand sends from its own WhatsApp Business Account: the owner connects it as Meta's
Embedded Signup ends (the code exchanged for the business's token, the account and its number read
from Meta), its templates are synced from that account alone, and a brand with none sends nothing."""

import json
from pathlib import Path
from urllib.parse import unquote

import pytest
from django.urls import reverse
from django.utils import timezone, translation

from payouts import notifications
from payouts.audience.broadcasts import (
    BroadcastRefused,
    broadcast_create,
    broadcasts_send_due,
    templates_sendable,
    templates_sync,
    whatsapp_account_connect,
)
from payouts.models import Broadcast, BroadcastRecipient, WhatsAppAccount, WhatsAppTemplate
from tests.payouts.audience_helpers import audience_person, waba_connect
from verification.providers import whatsapp
from verification.sandbox import whatsapp as sandbox

pytestmark = pytest.mark.django_db
META = Path(__file__).parents[1] / "verification" / "vendor" / "meta"


@pytest.fixture(autouse=True)
def english():
    """The refusals are read in English here, whatever language an earlier test left active."""
    with translation.override("en"):
        yield


@pytest.fixture
def club(make_live_campaign):
    return make_live_campaign(slug="club", package="whatsapp_reward")


@pytest.fixture
def herd(make_live_campaign, bison):
    return make_live_campaign(slug="herd", package="whatsapp_reward", brand=bison)


def _meta(name):
    return json.loads((META / name).read_text())


class _Answer:
    def __init__(self, body, status=200):
        self.status_code, self._body, self.text = status, body, json.dumps(body)

    def json(self):
        return self._body


def _client(calls, answer):
    class Client:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def get(self, url, params=None, headers=None):
            calls.append(("GET", url, params or {}, headers or {}))
            return answer

        def post(self, url, json=None, headers=None):
            calls.append(("POST", url, json, headers or {}))
            return answer

    return Client


def test_the_code_is_exchanged_as_meta_documents_and_its_token_read(monkeypatch, settings):
    settings.WHATSAPP_API_BASE = "https://graph.facebook.com"
    calls = []
    monkeypatch.setattr(whatsapp, "http_client", _client(calls, _Answer(_meta("oauth_access_token.json"))))

    token = whatsapp.signup_code_exchange(code="AQBx-code")

    [(method, url, params, headers)] = calls
    assert (method, url) == ("GET", "https://graph.facebook.com/v21.0/oauth/access_token")
    assert params == {
        "client_id": settings.WHATSAPP_APP_ID,
        "client_secret": settings.WHATSAPP_APP_SECRET,
        "code": "AQBx-code",
    }
    assert "Authorization" not in headers
    assert token == _meta("oauth_access_token.json")["access_token"]


def test_metas_expired_code_error_is_read_with_its_subcode(monkeypatch):
    monkeypatch.setattr(whatsapp, "http_client", _client([], _Answer(_meta("oauth_code_expired.json"), 400)))
    with pytest.raises(whatsapp.WhatsAppError) as refused:
        whatsapp.signup_code_exchange(code="old")
    assert (refused.value.code, refused.value.subcode) == (100, 36007)


def test_debug_token_gives_the_waba_from_granular_scopes(monkeypatch, settings):
    calls = []
    monkeypatch.setattr(whatsapp, "http_client", _client(calls, _Answer(_meta("debug_token.json"))))
    assert whatsapp.token_wabas(token="EAAx") == ["102290129340398"]
    [(_method, url, params, headers)] = calls
    assert url.endswith("/debug_token") and params == {"input_token": "EAAx"}
    assert headers["Authorization"] == f"Bearer {settings.WHATSAPP_APP_ID}|{settings.WHATSAPP_APP_SECRET}"
    invalid = {"data": {"is_valid": False, "scopes": [], "error": {"code": 190}}}
    monkeypatch.setattr(whatsapp, "http_client", _client([], _Answer(invalid)))
    assert whatsapp.token_wabas(token="EAAx") == []


def test_phone_numbers_and_subscribed_apps_in_metas_shapes(monkeypatch):
    calls = []
    monkeypatch.setattr(whatsapp, "http_client", _client(calls, _Answer(_meta("phone_numbers.json"))))
    [number] = whatsapp.waba_phone_numbers(waba_id="102290129340398", token="EAAx")
    assert number == whatsapp.PhoneNumber("106540352242922", "+1 631-555-5555", "Jasper's Market")
    assert calls[0][1].endswith("/v21.0/102290129340398/phone_numbers")
    assert calls[0][3]["Authorization"] == "Bearer EAAx"
    monkeypatch.setattr(whatsapp, "http_client", _client(calls, _Answer(_meta("subscribed_apps.json"))))
    whatsapp.waba_subscribe(waba_id="102290129340398", token="EAAx")
    assert calls[-1][:2] == ("POST", calls[0][1].replace("phone_numbers", "subscribed_apps"))


def test_the_sandbox_answers_in_metas_shapes():
    """The sandbox's answers carry the keys Meta's published examples carry."""
    token = whatsapp.signup_code_exchange(code=sandbox.signup_code("Alpaca Coffee"))
    [waba] = whatsapp.token_wabas(token=token)
    [number] = whatsapp.waba_phone_numbers(waba_id=waba, token=token)
    assert (
        waba == sandbox.business_waba("Alpaca Coffee")["waba_id"] and number.verified_name == "Alpaca Coffee"
    )
    whatsapp.waba_subscribe(waba_id=waba, token=token)


def test_an_expired_or_used_code_is_refused_as_meta_refuses_it_and_nothing_is_saved(club, alice, monkeypatch):
    code = sandbox.signup_code("Alpaca Coffee")
    monkeypatch.setattr(sandbox, "CODE_MAX_AGE", -1)
    with pytest.raises(BroadcastRefused, match="expired or was used"):
        whatsapp_account_connect(brand=club.brand, user=alice, code=code)
    monkeypatch.undo()
    whatsapp_account_connect(brand=club.brand, user=alice, code=code)
    with pytest.raises(BroadcastRefused, match="expired or was used"):
        whatsapp_account_connect(brand=club.brand, user=alice, code=code)
    with pytest.raises(BroadcastRefused, match="refused"):
        whatsapp_account_connect(brand=club.brand, user=alice, code="forged")
    assert WhatsAppAccount.objects.filter(brand=club.brand).count() == 1


def test_each_brand_has_its_own_account_templates_and_number(
    club, herd, alice, bob, monkeypatch, django_capture_on_commit_callbacks
):
    mine = waba_connect(brand=club.brand, user=alice)
    theirs = waba_connect(brand=herd.brand, user=bob)
    assert mine.waba_id != theirs.waba_id and mine.phone_number_id != theirs.phone_number_id
    assert WhatsAppAccount.objects.get(pk=mine.pk).access_token.startswith("EAA")
    templates_sync(brand=club.brand)
    templates_sync(brand=herd.brand)
    ids = {brand: set(WhatsAppTemplate.objects.filter(brand=brand).values_list("template_id", flat=True))
           for brand in (club.brand, herd.brand)}  # fmt: skip
    assert ids[club.brand] and not ids[club.brand] & ids[herd.brand]
    # A token opens its own account only, as Meta's does.
    with pytest.raises(whatsapp.WhatsAppError):
        whatsapp.templates_list(waba_id=mine.waba_id, token=theirs.access_token)

    audience_person(campaign=club, wa_id="4915100000001")
    sent = []
    real = notifications.whatsapp.template_send
    monkeypatch.setattr(
        notifications.whatsapp, "template_send", lambda **message: sent.append(message) or real(**message)
    )
    broadcast_create(brand=club.brand, user=alice, template_name="joyback_news",
                     parameters=["Alpaca", "hi"], send_at=timezone.now())  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        broadcasts_send_due()
    [message] = sent
    assert message["sender"] == whatsapp.Sender(mine.phone_number_id, mine.access_token)


def test_a_brand_without_an_account_is_asked_to_connect_and_sends_nothing(client, alice, club):
    audience_person(campaign=club, wa_id="4915100000001")
    client.force_login(alice)
    url = reverse("payouts:broadcasts", args=["alpaca"])

    page = client.get(url).content.decode()
    assert "Connect your WhatsApp Business Account" in page and 'data-testid="broadcast-form"' not in page
    assert templates_sendable(brand=club.brand) == {}
    response = client.post(url, {"template": "joyback_news", "parameters": "A\nB", "confirm": "1"})
    assert response.status_code == 400
    assert "Connect your WhatsApp Business Account" in response.content.decode()
    with pytest.raises(BroadcastRefused, match="Connect your WhatsApp Business Account"):
        broadcast_create(brand=club.brand, user=alice, template_name="joyback_news",
                         parameters=["A", "B"], send_at=timezone.now())  # fmt: skip
    with pytest.raises(BroadcastRefused, match="Connect your WhatsApp Business Account"):
        templates_sync(brand=club.brand)
    assert not Broadcast.objects.exists() and not BroadcastRecipient.objects.exists()


def test_a_disconnected_brands_planned_send_waits_and_nothing_leaves(
    club, alice, django_capture_on_commit_callbacks
):
    waba_connect(brand=club.brand, user=alice)
    templates_sync(brand=club.brand)
    audience_person(campaign=club, wa_id="4915100000001")
    broadcast_create(brand=club.brand, user=alice, template_name="joyback_news",
                     parameters=["A", "B"], send_at=timezone.now())  # fmt: skip
    WhatsAppAccount.objects.update(disconnected_at=timezone.now())
    with django_capture_on_commit_callbacks(execute=True):
        assert broadcasts_send_due() == 0
    assert not BroadcastRecipient.objects.filter(status="queued").exists()
    assert not sandbox.SandboxWhatsAppMessage.objects.exists()


def test_another_brands_template_id_is_refused_with_404_and_nothing_sent(client, alice, bob, club, herd):
    waba_connect(brand=club.brand, user=alice)
    waba_connect(brand=herd.brand, user=bob)
    templates_sync(brand=club.brand)
    templates_sync(brand=herd.brand)
    audience_person(campaign=herd, wa_id="4915100000002")
    foreign = WhatsAppTemplate.objects.get(brand=club.brand, name="joyback_news", language="en_US")
    own = WhatsAppTemplate.objects.get(brand=herd.brand, name="joyback_news", language="en_US")
    client.force_login(bob)
    url = reverse("payouts:broadcasts", args=["bison"])

    data = {"template": str(foreign.pk), "parameters": "Bison\nhi", "confirm": "1"}
    assert client.post(url, data).status_code == 404
    assert client.get(url, {"template": str(foreign.pk), "parameters": "Bison\nhi"}).status_code == 404
    assert not Broadcast.objects.exists()
    assert client.post(url, {**data, "template": str(own.pk)}).status_code == 302
    assert Broadcast.objects.get().brand == herd.brand


def test_only_the_owner_connects_with_a_second_factor(client, alice, fiona, club, settings):
    settings.SANDBOX = True
    url = reverse("payouts:whatsapp_account", args=["alpaca"])
    client.force_login(fiona)
    assert client.post(url, {"code": sandbox.signup_code("Alpaca Coffee")}).status_code == 403
    assert not WhatsAppAccount.objects.exists()
    client.force_login(alice)
    page = client.get(url).content.decode()
    assert reverse("verification:sandbox_whatsapp_signup") in page
    signup = client.post(
        reverse("verification:sandbox_whatsapp_signup") + "?next=" + url, {"business": "Alpaca Coffee"}
    )
    assert signup.status_code == 302 and "code=" in signup["Location"]
    page = client.get(signup["Location"]).content.decode()
    assert "Finish connecting" in page
    code = signup["Location"].split("code=", 1)[1]
    assert client.post(url, {"code": unquote(code)}).status_code == 302
    account = WhatsAppAccount.objects.get()
    assert (account.brand.slug, account.connected_by, account.verified_name) == (
        "alpaca",
        alice,
        "Alpaca Coffee",
    )
    assert account.display_number in client.get(url).content.decode()
    assert client.post(url, {"action": "disconnect"}).status_code == 302
    assert WhatsAppAccount.objects.get().disconnected_at is not None


def test_another_brand_gets_404_on_the_account_page(client, bob, bison, club):
    client.force_login(bob)
    assert client.get(reverse("payouts:whatsapp_account", args=["alpaca"])).status_code == 404
    assert (
        client.post(
            reverse("payouts:whatsapp_account", args=["alpaca"]), {"action": "disconnect"}
        ).status_code
        == 404
    )


def test_the_page_of_a_connected_brand_offers_to_replace_its_account_and_says_the_old_one_goes(
    client, alice, club, settings
):
    settings.SANDBOX = True
    old = waba_connect(brand=club.brand, user=alice)
    client.force_login(alice)
    url = reverse("payouts:whatsapp_account", args=["alpaca"])

    page = client.get(url).content.decode()
    assert "Replace the connected account" in page and "Connect another account" not in page
    assert f"connecting another one disconnects {old.verified_name} ({old.display_number})" in page
    german = client.get(url, HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert (
        "Verbundenes Konto ersetzen" in german
        and f"wird {old.verified_name} ({old.display_number}) getrennt" in german
    )

    new = waba_connect(brand=club.brand, user=alice)
    assert WhatsAppAccount.objects.get(pk=old.pk).disconnected_at is not None
    assert WhatsAppAccount.objects.get(disconnected_at__isnull=True) == new
