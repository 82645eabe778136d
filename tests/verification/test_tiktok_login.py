"""Pat connects TikTok: the OAuth v2 code flow against the sandbox TikTok, through the real adapter."""

import json
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.urls import reverse

from joyback.ledger.models import Transaction
from verification.models import ActionClaim, Identity

pytestmark = pytest.mark.django_db


def authorize(client, slug, display_name="Pat Creator", decision="approve", empty_account=False):
    """Start on the landing page, approve on the sandbox TikTok; returns the callback URL."""
    start = client.post(reverse("verification:tiktok_start", args=[slug]))
    assert start.status_code == 302
    authorize_url = start["Location"]
    assert authorize_url.startswith("/sandbox/tiktok/v2/auth/authorize/?")
    form = {"display_name": display_name, "decision": decision} | (
        {"empty_account": "1"} if empty_account else {}
    )
    consent = client.post(authorize_url, form)
    assert consent.status_code == 302
    return consent["Location"]


def test_connecting_tiktok_verifies_the_identity_and_pays_the_login_reward(client, summer):
    callback = authorize(client, summer.slug)
    query = parse_qs(urlsplit(callback).query)
    assert query["scopes"] == ["user.info.basic,user.info.stats,video.list"]
    assert "*" in query["code"][0] and "!" in query["code"][0]  # passed on exactly as decoded

    response = client.get(callback)

    assert response.status_code == 302 and response["Location"].endswith("/c/summer-glow/#steps")
    identity = Identity.objects.get(provider="tiktok")
    assert identity.display_name == "Pat Creator"
    claim = ActionClaim.objects.get()
    assert (claim.status, claim.amount, claim.rule.trigger) == ("approved", 1_00, "tiktok_login")
    assert Transaction.objects.get(pk=claim.ledger_transaction_id).reason == "reward"


def test_the_same_tiktok_account_is_rewarded_once(client, summer):
    client.get(authorize(client, summer.slug))

    second_browser = type(client)()
    response = second_browser.get(authorize(second_browser, summer.slug), follow=True)

    assert ActionClaim.objects.count() == 1
    assert "already claimed this reward" in response.content.decode()


def test_a_callback_with_a_forged_state_is_refused(client, summer):
    callback = authorize(client, summer.slug)
    forged = callback.replace("state=", "state=x")

    response = client.get(forged)

    assert response.status_code == 403
    assert not ActionClaim.objects.exists()


def test_cancelling_on_tiktok_changes_nothing(client, summer):
    response = client.get(authorize(client, summer.slug, decision="deny"), follow=True)

    assert "cancelled" in response.content.decode()
    assert not Identity.objects.exists()


def test_a_paused_campaign_sends_people_back_without_signing_in(client, summer):
    from campaigns.services.campaigns import campaign_transition

    campaign_transition(campaign=summer, to="paused")

    response = client.post(reverse("verification:tiktok_start", args=[summer.slug]))

    assert response["Location"] == reverse("campaign_landing", args=[summer.slug])


class TestSandboxTokenEndpoint:
    """The sandbox answers like TikTok: flat bodies, errors with HTTP 200, single-use codes."""

    def code(self, client, summer):
        return parse_qs(urlsplit(authorize(client, summer.slug)).query)["code"][0]

    def exchange(self, client, code, **overrides):
        form = {
            "client_key": "sbx-joyback",
            "client_secret": "sbx-tiktok-secret",
            "code": code,
            "grant_type": "authorization_code",
            "redirect_uri": "http://testserver/v/tiktok/callback/",
        } | overrides
        return client.post(
            "/sandbox/tiktok/v2/oauth/token/",
            urlencode(form),
            content_type="application/x-www-form-urlencoded",
        )

    def test_a_code_exchanges_once_for_tokens(self, client, summer):
        code = self.code(client, summer)

        first = self.exchange(client, code).json()
        second = self.exchange(client, code)

        assert set(first) == {
            "access_token",
            "expires_in",
            "open_id",
            "refresh_expires_in",
            "refresh_token",
            "scope",
            "token_type",
        }
        assert first["access_token"].startswith("act.") and first["refresh_token"].startswith("rft.")
        assert second.status_code == 200 and second.json()["error"] == "invalid_grant"

    def test_a_wrong_secret_or_redirect_is_an_error_body(self, client, summer):
        assert (
            self.exchange(client, self.code(client, summer), client_secret="x").json()["error"]
            == "invalid_client"
        )
        wrong = self.exchange(client, self.code(client, summer), redirect_uri="http://testserver/elsewhere/")
        assert wrong.json()["error"] == "invalid_request"

    def test_multipart_and_json_bodies_are_refused(self, client, summer):
        assert (
            client.post("/sandbox/tiktok/v2/oauth/token/", {"code": "x"}).json()["error"] == "invalid_request"
        )
        response = client.post(
            "/sandbox/tiktok/v2/oauth/token/", json.dumps({"code": "x"}), content_type="application/json"
        )
        assert response.json()["error"] == "invalid_request"

    def test_user_info_needs_fields_and_a_valid_token(self, client, summer):
        token = self.exchange(client, self.code(client, summer)).json()["access_token"]
        auth = {"Authorization": f"Bearer {token}"}

        ok = client.get("/sandbox/tiktok/v2/user/info/?fields=open_id,display_name", headers=auth).json()
        assert ok["error"]["code"] == "ok" and set(ok["data"]["user"]) == {"open_id", "display_name"}
        no_fields = client.get("/sandbox/tiktok/v2/user/info/", headers=auth)
        assert no_fields.status_code == 400 and no_fields.json()["error"]["code"] == "invalid_params"
        email = client.get("/sandbox/tiktok/v2/user/info/?fields=email", headers=auth)
        assert email.json()["error"]["code"] == "scope_permission_missed"
        bad = client.get(
            "/sandbox/tiktok/v2/user/info/?fields=open_id", headers={"Authorization": "Bearer act.x"}
        )
        assert bad.status_code == 401 and bad.json()["error"]["code"] == "access_token_invalid"
