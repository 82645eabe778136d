"""Connecting a shop takes the owner's second factor and the shop's own proof: Shopify's OAuth install
of our app on that shop, or a REST API key the WooCommerce store's admin approved. A domain claimed
without proof (an owner connected victim-store.myshopify.com with a secret of their choosing) is
taken over by the shop's proven owner, and the brand that claimed it is told."""

import time
from urllib.parse import parse_qs, urlsplit

import pytest
from allauth.mfa.models import Authenticator
from django.conf import settings
from django.test import Client

from tests.conftest import SignedInClient
from verification.connectors import shop_connect
from verification.models import ShopConnection, ShopInstall
from verification.providers.shop_auth import shopify_query_hmac
from verification.sandbox.shop_hosts import shopify_callback_params
from verification.sandbox.shops import SandboxShop

pytestmark = pytest.mark.django_db

SECRET = "shpss_webhook_secret_1"
VICTIM = "victim-store.myshopify.com"


@pytest.fixture
def cashback(make_live_campaign):
    campaign = make_live_campaign(slug="cashback-week", package="cashback", budget=100_00)
    campaign.rules.filter(trigger="purchase").update(cashback_basis_points=500, return_window_days=14)
    return campaign


@pytest.fixture
def owner(client, alice):
    client.force_login(alice)  # with the authenticator the personas have set up
    return client


def start(client, cashback, *, kind="shopify", domain=VICTIM, brand="alpaca"):
    data = {"kind": kind, "domain": domain, "webhook_secret": SECRET, "campaign": cashback.pk}
    return client.post(f"/brands/{brand}/shops/", data)


def query(url: str) -> dict:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}


def install_shopify(client, cashback, domain=VICTIM):
    """The owner starts, the shop's install page is approved, Shopify sends them back."""
    authorize = start(client, cashback, domain=domain)["Location"]
    approved = client.post(authorize.split("?")[0], {**query(authorize), "decision": "approve"})
    return client.get(approved["Location"])


def install_woocommerce(client, cashback, domain="shop.alpaca.example"):
    authorize = start(client, cashback, kind="woocommerce", domain=domain)["Location"]
    approved = client.post(authorize.split("?")[0], {**query(authorize), "decision": "approve"})
    return client.get(approved["Location"]) if approved.status_code == 302 else approved


def test_an_owner_without_a_second_factor_cannot_connect_a_shop(client, alice, cashback):
    Authenticator.objects.filter(user=alice).delete()
    client.force_login(alice)  # a password only: what the attacker had

    response = start(client, cashback)

    assert response.status_code == 403 and b"two-factor" in response.content.lower()
    assert not ShopConnection.objects.exists() and not ShopInstall.objects.exists()


def test_a_stale_sign_in_is_asked_for_the_password_again(owner, cashback):
    session = owner.session
    session["account_authentication_methods"] = [{"method": "password", "at": time.time() - 3600}]
    session.save()

    response = start(owner, cashback)

    assert response.status_code == 302 and "reauthenticate" in response["Location"]
    assert not ShopInstall.objects.exists()


def test_asking_to_connect_sends_the_owner_to_install_the_app_on_that_shop(owner, cashback):
    response = start(owner, cashback)

    assert response.status_code == 302
    location = urlsplit(response["Location"])
    assert location.path == f"/sandbox/shop-hosts/{VICTIM}/admin/oauth/authorize"
    asked = query(response["Location"])
    install = ShopInstall.objects.get()
    assert asked == {
        "client_id": settings.SHOPIFY_API_KEY,
        "scope": "read_orders",
        "redirect_uri": "http://testserver/v/shops/shopify/callback/",
        "state": install.state,
    }
    assert not ShopConnection.objects.exists()  # nothing is connected before the shop says so


def test_installing_the_app_on_the_shop_connects_it_proven(owner, cashback):
    response = install_shopify(owner, cashback)
    replayed = owner.get(response.wsgi_request.get_full_path())
    assert replayed.status_code == 400  # the callback once more: its state and code are spent

    shop = ShopConnection.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/brands/alpaca/shops/{shop.pk}/"
    assert (shop.domain, shop.proof, shop.webhook_secret) == (VICTIM, "shopify_oauth", SECRET)
    assert shop.proven_at is not None and shop.api_credentials.startswith("shpat_")


def forged_callback(client, install, **changes):
    params = shopify_callback_params(
        domain=install.domain, code="made-up", state=install.state, secret="guess"
    )
    return client.get("/v/shops/shopify/callback/", {**params, **changes})


def test_a_callback_shopify_did_not_sign_connects_nothing(owner, cashback):
    start(owner, cashback)
    install = ShopInstall.objects.get()

    response = forged_callback(owner, install)

    assert response.status_code == 400 and b"was not connected" in response.content
    assert not ShopConnection.objects.exists()
    install.refresh_from_db()
    assert install.outcome == "proof_refused"
    # Its state is spent: even a callback Shopify signed connects nothing now.
    signed = shopify_callback_params(
        domain=VICTIM, code="any", state=install.state, secret=settings.SHOPIFY_API_SECRET
    )
    assert owner.get("/v/shops/shopify/callback/", signed).status_code == 400


@pytest.mark.parametrize("shop", ["other-store.myshopify.com", "victim-store.myshopify.com.evil.example"])
def test_a_signed_callback_for_another_shop_connects_nothing(owner, cashback, shop):
    start(owner, cashback)
    install = ShopInstall.objects.get()
    params = {
        "code": "c0de",
        "host": "aG9zdA",
        "shop": shop,
        "state": install.state,
        "timestamp": "1764515526",
    }
    params["hmac"] = shopify_query_hmac(params=params, secret=settings.SHOPIFY_API_SECRET)

    response = owner.get("/v/shops/shopify/callback/", params)

    assert response.status_code == 400 and not ShopConnection.objects.exists()


def test_a_code_the_shop_did_not_issue_connects_nothing(owner, cashback):
    start(owner, cashback)
    install = ShopInstall.objects.get()
    params = shopify_callback_params(
        domain=VICTIM, code="never-issued", state=install.state, secret=settings.SHOPIFY_API_SECRET
    )

    response = owner.get("/v/shops/shopify/callback/", params)

    assert response.status_code == 400 and not ShopConnection.objects.exists()


def test_another_brands_owner_cannot_complete_an_install(owner, cashback, bob, bison):
    authorize = start(owner, cashback)["Location"]
    approved = owner.post(authorize.split("?")[0], {**query(authorize), "decision": "approve"})
    other = SignedInClient()
    other.force_login(bob)

    response = other.get(approved["Location"])

    assert response.status_code == 400 and not ShopConnection.objects.exists()


def test_a_woocommerce_store_connects_with_a_key_its_admin_approved(owner, cashback):
    response = install_woocommerce(owner, cashback)

    shop = ShopConnection.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/brands/alpaca/shops/{shop.pk}/"
    assert (shop.kind, shop.domain, shop.proof) == ("woocommerce", "shop.alpaca.example", "woocommerce_key")
    assert '"consumer_key": "ck_' in shop.api_credentials


def test_asking_to_connect_a_store_sends_the_owner_to_its_key_approval(owner, cashback):
    response = start(owner, cashback, kind="woocommerce", domain="shop.alpaca.example")

    assert (
        urlsplit(response["Location"]).path == "/sandbox/shop-hosts/shop.alpaca.example/wc-auth/v1/authorize"
    )
    assert query(response["Location"]) == {
        "app_name": "JoyBack",
        "scope": "read",
        "user_id": ShopInstall.objects.get().state,
        "return_url": "http://testserver/v/shops/woocommerce/return/",
        "callback_url": "http://testserver/v/shops/woocommerce/callback/",
    }


def test_a_key_posted_to_the_callback_that_the_store_did_not_make_connects_nothing(owner, cashback):
    start(owner, cashback, kind="woocommerce", domain="shop.alpaca.example")
    install = ShopInstall.objects.get()
    made_up = {
        "key_id": 1,
        "user_id": install.state,
        "consumer_key": "ck_" + "0" * 40,
        "consumer_secret": "cs_" + "0" * 40,
        "key_permissions": "read",
    }

    response = Client().post("/v/shops/woocommerce/callback/", made_up, content_type="application/json")

    assert response.status_code == 400 and not ShopConnection.objects.exists()
    returned = owner.get("/v/shops/woocommerce/return/", {"success": 1, "user_id": install.state})
    assert returned["Location"] == "/brands/alpaca/shops/" and not ShopConnection.objects.exists()


def test_another_owner_cannot_use_an_installs_return_link(owner, cashback, bob, bison):
    install_woocommerce(owner, cashback)
    state = ShopInstall.objects.get().state
    other = SignedInClient()
    other.force_login(bob)

    response = other.get("/v/shops/woocommerce/return/", {"success": 1, "user_id": state})

    assert response.status_code == 400


def test_the_shops_proven_owner_takes_over_a_domain_claimed_without_proof(
    owner, alice, bob, bison, cashback, make_live_campaign, mailoutbox, django_capture_on_commit_callbacks
):
    bisons = make_live_campaign(slug="bikes-back", package="cashback", brand=bison)
    claimed = shop_connect(
        brand=bison, kind="shopify", domain=VICTIM, webhook_secret="chosen", campaign=bisons
    )
    assert start(owner, cashback).status_code == 302  # not "connected already": the claim is unproven
    ShopInstall.objects.all().delete()

    with django_capture_on_commit_callbacks(execute=True):
        install_shopify(owner, cashback)

    claimed.refresh_from_db()
    assert claimed.disconnected_at is not None and claimed.retired_reason == "taken_over"
    proven = ShopConnection.objects.get(disconnected_at__isnull=True)
    assert (proven.brand, proven.domain) == (alice.memberships.get().brand, VICTIM)
    (told,) = mailoutbox
    assert told.to == [bob.email] and VICTIM in told.subject
    status, _ = SandboxShop(claimed, client=Client()).order_paid(
        order_id=1, amount=40_00, currency="EUR", email="x@example.com", secret="chosen"
    )
    assert status == 404  # the claimer's signed purchases are refused from now on
    bob_client = SignedInClient()
    bob_client.force_login(bob)
    assert "was retired" in bob_client.get("/brands/bison/shops/").content.decode()


def test_a_connection_made_without_proof_tells_its_owner_to_prove_it(owner, cashback):
    claimed = shop_connect(
        brand=cashback.brand, kind="shopify", domain=VICTIM, webhook_secret=SECRET, campaign=cashback
    )
    assert 'data-testid="shop-unproven"' in owner.get(f"/brands/alpaca/shops/{claimed.pk}/").content.decode()

    install_shopify(owner, cashback)  # the brand proves its own shop: the same connection goes on

    claimed.refresh_from_db()
    assert claimed.proven_at is not None and claimed.disconnected_at is None
    assert ShopConnection.objects.count() == 1
    assert "shop-unproven" not in owner.get(f"/brands/alpaca/shops/{claimed.pk}/").content.decode()


def test_a_proven_connection_cannot_be_taken_over(owner, cashback, bob, bison, make_live_campaign):
    install_shopify(owner, cashback)
    bisons = make_live_campaign(slug="bikes-back", package="cashback", brand=bison)
    other = SignedInClient()
    other.force_login(bob)

    response = start(other, bisons, brand="bison")

    assert response.status_code == 400 and "connected already" in response.content.decode()
    assert ShopConnection.objects.get().brand.slug == "alpaca"


@pytest.mark.parametrize("body", ["not json", '{"user_id": "x"}', "[]"])
def test_a_callback_body_that_is_not_a_woocommerce_key_is_refused_and_nothing_changes(owner, cashback, body):
    start(owner, cashback, kind="woocommerce", domain="shop.alpaca.example")

    response = Client().post("/v/shops/woocommerce/callback/", body, content_type="application/json")

    assert response.status_code == 400 and b"WooCommerce posts" in response.content
    assert not ShopConnection.objects.exists() and ShopInstall.objects.get().outcome == ""
