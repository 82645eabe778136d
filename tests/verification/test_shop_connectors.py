"""Shop connectors: Alpaca's Shopify shop and WooCommerce store report orders by webhook, and
cashback follows them with no code: valid deliveries, tampered ones, duplicates and retries,
and refunds that arrive before the payment they take back."""

import itertools
import json
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from campaigns.selectors import campaign_budget
from tests.verification.test_claim_races import race
from tests.verification.test_shop_ownership import query
from verification.cashback import purchase_confirm
from verification.connectors import claim_signature, shop_connect
from verification.models import ActionClaim, ProviderEvent, Purchase, ShopConnection
from verification.providers.shops import signature
from verification.sandbox.shops import SandboxShop, shopify_order
from verification.services.provider_events import provider_events_process

pytestmark = pytest.mark.django_db

SECRET = "shpss_sandbox_secret_1"


@pytest.fixture
def cashback(make_live_campaign):
    """Alpaca's live cashback campaign: 5 % back, at most 5 EUR an order, 14 days to return."""
    campaign = make_live_campaign(slug="cashback-week", package="cashback", budget=100_00)
    campaign.rules.filter(trigger="purchase").update(cashback_basis_points=500, return_window_days=14)
    return campaign


@pytest.fixture
def shopify(alpaca, cashback):
    return shop_connect(
        brand=alpaca, kind="shopify", domain="alpaca.myshopify.com", webhook_secret=SECRET, campaign=cashback
    )


@pytest.fixture
def woo(alpaca, cashback):
    return shop_connect(
        brand=alpaca,
        kind="woocommerce",
        domain="shop.alpaca.example",
        webhook_secret=SECRET,
        campaign=cashback,
    )


def outcomes(shop):
    provider_events_process()
    return [e.outcome for e in ProviderEvent.objects.filter(provider=shop.kind).order_by("pk")]


def claim_of(shop, order_id) -> ActionClaim:
    return ActionClaim.objects.get(purchase__order_id=f"{shop.kind}:{shop.domain}:{order_id}")


PAID = {"order_id": 820982911946154508, "amount": 40_00, "currency": "EUR", "email": "pat@example.com"}


def test_a_paid_shopify_order_earns_cashback_held_through_the_return_window(client, shopify, cashback):
    status, _ = SandboxShop(shopify, client=client).order_paid(**PAID)

    assert status == 200
    assert outcomes(shopify) == ["purchase_recorded"]
    claim = claim_of(shopify, PAID["order_id"])
    assert (claim.status, claim.amount, claim.currency) == ("pending", 2_00, "EUR")
    assert claim.purchase.status == "pending" and claim.identity.display_name == "pat@example.com"
    assert campaign_budget(campaign=cashback).held == 2_00

    purchase_confirm(purchase_id=claim.purchase_id, now=timezone.now() + timedelta(days=15))
    claim.refresh_from_db()
    assert claim.status == "approved"


def test_a_refund_in_the_return_window_releases_the_hold(client, shopify, cashback):
    shop = SandboxShop(shopify, client=client)
    shop.order_paid(**PAID)
    shop.order_refunded(order_id=PAID["order_id"], amount=PAID["amount"])

    assert outcomes(shopify) == ["purchase_recorded", "refunded"]
    claim = claim_of(shopify, PAID["order_id"])
    assert (claim.status, claim.purchase.status) == ("rejected", "refunded")
    assert campaign_budget(campaign=cashback).held == 0


def test_a_refund_after_the_return_window_claws_the_cashback_back(client, shopify):
    shop = SandboxShop(shopify, client=client)
    shop.order_paid(**PAID)
    provider_events_process()
    claim = claim_of(shopify, PAID["order_id"])
    purchase_confirm(purchase_id=claim.purchase_id, now=timezone.now() + timedelta(days=15))

    shop.order_refunded(order_id=PAID["order_id"], amount=PAID["amount"])

    assert outcomes(shopify)[-1] == "refunded"
    claim.refresh_from_db()
    assert claim.status == "clawed_back"


def test_a_cancelled_order_takes_its_cashback_back(client, shopify):
    shop = SandboxShop(shopify, client=client)
    shop.order_paid(**PAID)
    shop.order_cancelled(**PAID)

    assert outcomes(shopify) == ["purchase_recorded", "refunded"]
    assert claim_of(shopify, PAID["order_id"]).status == "rejected"


def test_a_tampered_delivery_is_refused_and_nothing_is_stored(client, shopify):
    body = json.dumps(shopify_order(order_id=1, amount=40_00, currency="EUR", email="pat@example.com"))
    headers = {
        "X-Shopify-Topic": "orders/paid",
        "X-Shopify-Hmac-Sha256": signature(body=body.encode(), secret=SECRET),
        "X-Shopify-Shop-Domain": shopify.domain,
        "X-Shopify-Webhook-Id": "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043",
    }
    url = f"/v/shops/{shopify.public_id}/webhook/"
    tampered = body.replace("40.00", "4000.00")

    assert client.post(url, tampered, content_type="application/json", headers=headers).status_code == 401
    unsigned = {k: v for k, v in headers.items() if k != "X-Shopify-Hmac-Sha256"}
    assert client.post(url, body, content_type="application/json", headers=unsigned).status_code == 401
    status, _ = SandboxShop(shopify, client=client).order_paid(**PAID, secret="another-shops-secret")
    assert status == 401
    assert not ProviderEvent.objects.exists() and not Purchase.objects.exists()


def test_a_delivery_for_another_shop_domain_is_refused(client, shopify):
    shop = SandboxShop(shopify, client=client)
    shopify.domain = "someone-else.myshopify.com"  # the headers name this domain now
    status, _ = shop.order_paid(**PAID)
    assert status == 400 and not ProviderEvent.objects.exists()


def test_a_retried_or_duplicated_delivery_is_stored_once_and_pays_once(client, shopify, cashback):
    shop = SandboxShop(shopify, client=client)
    _, delivery_id = shop.order_paid(**PAID)
    status, _ = shop.order_paid(**PAID, delivery_id=delivery_id)  # the shop's retry
    assert status == 200
    shop.order_paid(**PAID)  # the same order in a second delivery (another id)

    assert outcomes(shopify) == ["purchase_recorded", "purchase_known"]
    assert Purchase.objects.count() == 1 and ActionClaim.objects.count() == 1
    assert campaign_budget(campaign=cashback).held == 2_00


def test_a_refund_before_its_payment_means_the_payment_earns_nothing(client, shopify, cashback):
    shop = SandboxShop(shopify, client=client)
    shop.order_refunded(order_id=PAID["order_id"], amount=PAID["amount"])
    assert outcomes(shopify) == ["refund_before_payment"]

    shop.order_paid(**PAID)

    assert outcomes(shopify) == ["refund_before_payment", "refunded_before_payment"]
    assert not Purchase.objects.exists()
    assert campaign_budget(campaign=cashback).held == 0


def test_a_payment_and_its_refund_delivered_out_of_order_are_processed_in_either_order(client, shopify):
    shop = SandboxShop(shopify, client=client)
    shop.order_paid(**PAID)
    shop.order_refunded(order_id=PAID["order_id"], amount=PAID["amount"])
    refund = ProviderEvent.objects.order_by("pk").last()
    provider_events_process(ids=[refund.pk])  # the refund's worker is first
    provider_events_process()

    assert outcomes(shopify) == ["refunded_before_payment", "refund_before_payment"]
    assert not Purchase.objects.exists()


def test_woocommerce_orders_follow_the_status_the_store_reports(client, woo, cashback):
    shop = SandboxShop(woo, client=client)
    order = {"order_id": 4750, "amount": 60_00, "currency": "EUR", "email": "sam@example.com"}
    pending = {"status": "pending", "id": 4750, "total": "60.00", "currency": "EUR", "billing": {}}
    shop.deliver("order.created", pending)  # not paid yet
    shop.order_paid(**order)
    shop.order_refunded(**order)

    assert outcomes(woo) == ["ignored", "purchase_recorded", "refunded"]
    claim = claim_of(woo, 4750)
    assert (claim.amount, claim.status) == (3_00, "rejected")


def test_woocommerces_ping_when_a_webhook_is_saved_is_answered(client, woo):
    response = client.post(
        f"/v/shops/{woo.public_id}/webhook/",
        "webhook_id=12",
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code == 200 and not ProviderEvent.objects.exists()


def test_a_delivery_to_a_disconnected_or_unknown_shop_is_not_found(client, shopify):
    ShopConnection.objects.filter(pk=shopify.pk).update(disconnected_at=timezone.now())
    status, _ = SandboxShop(shopify, client=client).order_paid(**PAID)
    assert status == 404
    assert client.post("/v/shops/nope/webhook/", "{}", content_type="application/json").status_code == 404


def test_the_secrets_are_encrypted_at_rest(shopify):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT webhook_secret, claim_key FROM verification_shopconnection WHERE id = %s", [shopify.pk]
        )
        stored_secret, stored_key = cursor.fetchone()
    assert SECRET not in stored_secret and shopify.claim_key not in stored_key


# The buyer's claim link


def test_the_claim_link_makes_the_browser_the_buyer_and_asks_for_bank_details(client, shopify, cashback):
    SandboxShop(shopify, client=client).order_paid(**PAID)
    provider_events_process()
    link = SandboxShop(shopify).claim_link(order_id=PAID["order_id"])

    response = client.get(link)

    assert response.status_code == 302 and response["Location"] == f"/p/c/{cashback.slug}/payee/"
    payee_page = client.get(response["Location"])
    assert payee_page.context["participant"] == claim_of(shopify, PAID["order_id"]).participant


def test_a_claim_link_signed_for_another_order_claims_nothing(client, shopify):
    SandboxShop(shopify, client=client).order_paid(**PAID)
    provider_events_process()
    other_signature = claim_signature(shop=shopify, order_id="1")

    response = client.get(f"/v/shops/{shopify.public_id}/claim/{PAID['order_id']}/{other_signature}/")

    assert response.status_code == 404 and b"We don" in response.content
    assert "joyback_participant" not in response.cookies


# The brand's pages


def test_an_owner_connects_a_shop_with_its_secret_and_sees_how_to_set_it_up(client, alice, alpaca, cashback):
    client.force_login(alice)
    authorize = client.post(
        "/brands/alpaca/shops/",
        {
            "kind": "shopify",
            "domain": "https://Alpaca.myshopify.com/",
            "webhook_secret": SECRET,
            "campaign": cashback.pk,
        },
    )["Location"]
    assert "/sandbox/shop-hosts/alpaca.myshopify.com/admin/oauth/authorize?" in authorize
    approved = client.post(authorize.split("?")[0], {**query(authorize), "decision": "approve"})
    response = client.get(approved["Location"])
    shop = ShopConnection.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/brands/alpaca/shops/{shop.pk}/"
    assert (shop.domain, shop.webhook_secret, shop.campaign) == ("alpaca.myshopify.com", SECRET, cashback)

    page = client.get(response["Location"]).content.decode()
    assert f"/v/shops/{shop.public_id}/webhook/" in page and "orders/paid" in page
    assert "hmac_sha256" in page and shop.claim_key in page
    assert SECRET not in page and shop.api_credentials not in page


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"kind": "shopify", "domain": "shop.alpaca.example"}, "myshopify.com"),
        ({"kind": "woocommerce", "domain": "not a domain"}, "domain name"),
        ({"kind": "woocommerce", "domain": "shop.alpaca.example", "webhook_secret": "short"}, "at least 8"),
    ],
)
def test_bad_shop_details_are_refused_with_a_clear_message(client, alice, cashback, fields, message):
    client.force_login(alice)
    data = {"webhook_secret": SECRET, "campaign": cashback.pk, **fields}
    response = client.post("/brands/alpaca/shops/", data)
    assert response.status_code == 400 and message in response.content.decode()
    assert not ShopConnection.objects.exists()


def test_a_shop_is_connected_once(client, alice, shopify, cashback):
    ShopConnection.objects.filter(pk=shopify.pk).update(proven_at=timezone.now(), proof="shopify_oauth")
    client.force_login(alice)
    data = {"kind": "shopify", "domain": shopify.domain, "webhook_secret": SECRET, "campaign": cashback.pk}
    response = client.post("/brands/alpaca/shops/", data)
    assert response.status_code == 400 and "connected already" in response.content.decode()


def test_another_brands_campaign_cannot_be_chosen(client, bob, bison, make_live_campaign, cashback):
    client.force_login(bob)
    data = {
        "kind": "woocommerce",
        "domain": "bikes.example",
        "webhook_secret": SECRET,
        "campaign": cashback.pk,
    }
    response = client.post("/brands/bison/shops/", data)
    assert response.status_code == 400 and not ShopConnection.objects.exists()


def test_a_viewer_sees_the_shops_but_cannot_connect_one(client, vic, cashback):
    client.force_login(vic)
    assert client.get("/brands/alpaca/shops/").status_code == 200
    data = {
        "kind": "woocommerce",
        "domain": "shop.alpaca.example",
        "webhook_secret": SECRET,
        "campaign": cashback.pk,
    }
    assert client.post("/brands/alpaca/shops/", data).status_code == 403
    assert not ShopConnection.objects.exists()


def test_another_brand_is_refused_every_shop_page(client, bob, bison, shopify):
    client.force_login(bob)
    assert client.get("/brands/alpaca/shops/").status_code == 404
    assert client.get(f"/brands/alpaca/shops/{shopify.pk}/").status_code == 404
    assert client.get(f"/brands/bison/shops/{shopify.pk}/").status_code == 404
    assert client.post(f"/brands/bison/shops/{shopify.pk}/disconnect/").status_code == 404
    shopify.refresh_from_db()
    assert shopify.disconnected_at is None


def test_the_owner_disconnects_a_shop(client, alice, shopify):
    client.force_login(alice)
    assert client.post(f"/brands/alpaca/shops/{shopify.pk}/disconnect/").status_code == 302
    status, _ = SandboxShop(shopify, client=client).order_paid(**PAID)
    assert status == 404


# Under concurrency


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_payment_and_its_refund_processed_at_once_never_leave_cashback_behind(client, shopify, cashback):
    for attempt in range(5):
        order = {**PAID, "order_id": 1000 + attempt}
        shop = SandboxShop(shopify, client=client)
        shop.order_paid(**order)
        shop.order_refunded(order_id=order["order_id"], amount=order["amount"])
        events = list(ProviderEvent.objects.filter(processed_at__isnull=True).values_list("pk", flat=True))

        race(2, lambda i, events=events: provider_events_process(ids=[events[i]]))

        purchase = Purchase.objects.filter(order_id__endswith=f":{order['order_id']}").first()
        assert purchase is None or purchase.status == "refunded", attempt
    assert campaign_budget(campaign=cashback).held == 0


def test_the_demo_connects_both_sandbox_shops_and_tells_their_story():
    from django.core.management import call_command

    call_command("demo_seed")
    call_command("demo_funding")  # the demo brand's money arrives through the sandbox bank
    call_command("demo_shops")
    call_command("demo_shops")  # again: nothing twice

    assert ShopConnection.objects.count() == 2
    shopify, woo = ShopConnection.objects.order_by("pk")
    assert outcomes(shopify) == [
        "purchase_recorded",
        "purchase_recorded",
        "purchase_known",
        "refund_before_payment",
        "refunded_before_payment",
    ]
    assert outcomes(woo) == ["ignored", "purchase_recorded", "refunded", "purchase_recorded"]
    statuses = sorted(Purchase.objects.values_list("status", flat=True))
    assert statuses == ["pending", "pending", "pending", "refunded"]


def test_only_what_the_cashback_needs_is_kept_of_a_delivery(client, shopify):
    SandboxShop(shopify, client=client).order_paid(**PAID)
    stored = ProviderEvent.objects.get().payload
    assert set(stored) == {"connection", "topic", "delivery_id", "order"}
    assert stored["order"]["email"] == "pat@example.com" and "financial_status" not in json.dumps(stored)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_same_delivery_racing_in_is_stored_and_paid_once(shopify, cashback):
    from django.test import Client

    delivery_id = "5f1c3c1e-race-4b0e-9d5e-000000000001"
    answers = race(
        6, lambda i: SandboxShop(shopify, client=Client()).order_paid(**PAID, delivery_id=delivery_id)
    )

    assert [status for status, _ in answers] == [200] * 6
    assert ProviderEvent.objects.count() == 1
    race(3, lambda i: provider_events_process())
    assert Purchase.objects.count() == 1 and campaign_budget(campaign=cashback).held == 2_00


# Properties: whatever the shop sends and in whatever order its deliveries are processed


@given(
    amount=st.integers(min_value=1, max_value=10**9), currency=st.sampled_from(["EUR", "JPY", "KWD", "GBP"])
)
def test_an_orders_total_is_read_back_in_minor_units_exactly(amount, currency):
    from verification.providers.shops import shopify_order as read_shopify
    from verification.sandbox.shops import woocommerce_order

    sent = shopify_order(order_id=1, amount=amount, currency=currency, email="a@example.com")
    assert read_shopify(topic="orders/paid", payload=sent).amount == amount
    woo = woocommerce_order(
        order_id=1, amount=amount, currency=currency, email="a@example.com", status="processing"
    )
    assert woocommerce_order_read(woo).amount == amount


def woocommerce_order_read(payload):
    from verification.providers.shops import woocommerce_order as read_woocommerce

    return read_woocommerce(topic="order.updated", payload=payload)


ORDER_IDS = itertools.count(7_000_000_000)
DELIVERIES = st.lists(
    st.sampled_from(["paid", "paid_retry", "paid_again", "refund", "cancel"]), min_size=1, max_size=6
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sent=DELIVERIES, ranks=st.lists(st.integers(0, 99), min_size=6, max_size=6))
def test_a_refunded_order_never_keeps_cashback_whatever_the_order_of_processing(
    client, shopify, cashback, sent, ranks
):
    order_id = next(ORDER_IDS)  # a new order each example: the database is not reset between them
    shop = SandboxShop(shopify, client=client)
    first_paid = None
    for kind in sent:
        if kind == "refund":
            shop.order_refunded(order_id=order_id, amount=40_00)
        elif kind == "cancel":
            shop.order_cancelled(order_id=order_id, amount=40_00, currency="EUR", email="pat@example.com")
        elif kind == "paid_retry" and first_paid:
            shop.order_paid(
                order_id=order_id,
                amount=40_00,
                currency="EUR",
                email="pat@example.com",
                delivery_id=first_paid,
            )
        else:
            _, delivery = shop.order_paid(
                order_id=order_id, amount=40_00, currency="EUR", email="pat@example.com"
            )
            first_paid = first_paid or delivery
    waiting = list(ProviderEvent.objects.filter(processed_at__isnull=True).values_list("pk", flat=True))
    # Processed in the order the ranks give: workers take deliveries in any order.
    for _rank, pk in sorted(zip(ranks, waiting, strict=False)):
        provider_events_process(ids=[pk])

    purchases = list(Purchase.objects.filter(order_id__endswith=f":{order_id}"))
    taken_back = {"refund", "cancel"} & set(sent)
    paid = {"paid", "paid_again"} & set(sent) or ("paid_retry" in sent and first_paid)
    assert len(purchases) <= 1
    if taken_back:
        assert all(p.status == "refunded" for p in purchases)
        assert all(p.claim.status == "rejected" for p in purchases)
    elif paid:
        assert len(purchases) == 1 and purchases[0].status == "pending"
        assert purchases[0].claim.amount == 2_00
    else:
        assert purchases == []
