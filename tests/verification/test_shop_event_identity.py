"""A shop's delivery is stored once per event it reports, not per delivery id: WooCommerce gives every
delivery of one webhook within the same second the same X-WC-Webhook-Delivery-ID, and an order or
refund in such a second was answered 200 and dropped. And Shopify's test orders earn no live money."""

import pytest
from django.test import Client

from campaigns.selectors import campaign_budget
from tests.verification.shop_payloads import post, shopify_order, woo_delivery_id, woo_order
from tests.verification.test_claim_races import race
from verification.connectors import shop_connect
from verification.models import ActionClaim, ProviderEvent, Purchase
from verification.services.provider_events import provider_events_process

SECRET = "wc_webhook_secret_1"


@pytest.fixture
def cashback(make_live_campaign):
    campaign = make_live_campaign(slug="cashback-week", package="cashback", budget=100_00)
    campaign.rules.filter(trigger="purchase").update(cashback_basis_points=500, return_window_days=14)
    return campaign


@pytest.fixture
def woo(alpaca, cashback):
    return shop_connect(
        brand=alpaca,
        kind="woocommerce",
        domain="shop.alpaca.example",
        webhook_secret=SECRET,
        campaign=cashback,
    )


@pytest.fixture
def shopify(alpaca, cashback):
    return shop_connect(
        brand=alpaca, kind="shopify", domain="alpaca.myshopify.com", webhook_secret=SECRET, campaign=cashback
    )


def outcomes():
    provider_events_process()
    return list(ProviderEvent.objects.order_by("pk").values_list("outcome", flat=True))


@pytest.mark.django_db
def test_two_orders_delivered_within_one_second_both_earn_cashback(client, woo, cashback):
    same_second = woo_delivery_id()
    first = post(
        client, woo, topic="order.updated", payload=woo_order(), secret=SECRET, delivery_id=same_second
    )
    second = post(
        client,
        woo,
        topic="order.updated",
        payload=woo_order(
            id=4751, number="4751", billing={**woo_order()["billing"], "email": "kim@example.com"}
        ),
        secret=SECRET,
        delivery_id=same_second,
    )

    assert (first.status_code, second.status_code) == (200, 200)
    assert outcomes() == ["purchase_recorded", "purchase_recorded"]
    assert Purchase.objects.count() == 2
    assert campaign_budget(campaign=cashback).held == 2 * 3_00


@pytest.mark.django_db
def test_a_refund_within_the_second_of_its_payment_takes_the_cashback_back(client, woo, cashback):
    same_second = woo_delivery_id()
    post(client, woo, topic="order.updated", payload=woo_order(), secret=SECRET, delivery_id=same_second)
    refunded = woo_order(
        status="refunded",
        refunds=[{"id": 4760, "reason": "Returned", "total": "-60.00"}],
    )
    post(client, woo, topic="order.updated", payload=refunded, secret=SECRET, delivery_id=same_second)

    assert outcomes() == ["purchase_recorded", "refunded"]
    assert ActionClaim.objects.get().status == "rejected"
    assert campaign_budget(campaign=cashback).held == 0


@pytest.mark.django_db
def test_created_and_updated_for_the_same_change_and_a_retry_are_one_event(client, woo, cashback):
    order = woo_order()
    post(client, woo, topic="order.created", payload=order, secret=SECRET, delivery_id=woo_delivery_id())
    post(client, woo, topic="order.updated", payload=order, secret=SECRET, delivery_id=woo_delivery_id())
    retry = post(
        client,
        woo,
        topic="order.updated",
        payload=order,
        secret=SECRET,
        delivery_id=woo_delivery_id(second=1),
    )

    assert retry.status_code == 200
    assert outcomes() == ["purchase_recorded"]
    assert campaign_budget(campaign=cashback).held == 3_00


@pytest.mark.django_db(transaction=True)
def test_one_order_delivered_twice_at_once_pays_once(woo, cashback):
    """The store's order.created and order.updated for one paid order, a second apart, racing in
    and racing through the workers."""
    created = woo_order()
    updated = woo_order(date_modified_gmt="2026-11-30T15:12:07")

    answers = race(
        2,
        lambda i: (
            post(
                Client(),
                woo,
                topic=("order.created", "order.updated")[i],
                payload=(created, updated)[i],
                secret=SECRET,
                delivery_id=woo_delivery_id(second=1764515526 + i),
            ).status_code
        ),
    )
    events = list(ProviderEvent.objects.order_by("pk").values_list("pk", flat=True))
    race(2, lambda i: provider_events_process(ids=[events[i]]))

    assert answers == [200, 200] and len(events) == 2
    assert sorted(ProviderEvent.objects.values_list("outcome", flat=True)) == [
        "purchase_known",
        "purchase_recorded",
    ]
    assert Purchase.objects.count() == 1 and ActionClaim.objects.count() == 1
    assert campaign_budget(campaign=cashback).held == 3_00


@pytest.mark.django_db
def test_a_shopify_test_order_earns_no_live_cashback_and_says_why(client, shopify, cashback):
    test_order = shopify_order(test=True, payment_gateway_names=["bogus"])
    response = post(
        client,
        shopify,
        topic="orders/paid",
        payload=test_order,
        secret=SECRET,
        delivery_id="b54557e4-bdd9-4b37-8a5f-bf7d70bcd043",
    )

    assert response.status_code == 200
    assert outcomes() == ["test_order_refused"]
    assert not Purchase.objects.exists()
    assert campaign_budget(campaign=cashback).held == 0


@pytest.mark.django_db
def test_a_live_shopify_order_still_earns_cashback(client, shopify, cashback):
    post(
        client,
        shopify,
        topic="orders/paid",
        payload=shopify_order(),
        secret=SECRET,
        delivery_id="b54557e4-bdd9-4b37-8a5f-bf7d70bcd044",
    )
    assert outcomes() == ["purchase_recorded"]
    assert campaign_budget(campaign=cashback).held == 2_00
