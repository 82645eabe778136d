"""A partial refund leaves the buyer the cashback of what they kept, in both shops alike: a 4.90 EUR
shipping refund on a 40 EUR order no longer takes the whole cashback, and WooCommerce's partly
refunded order (still processing) no longer keeps it whole. What was paid already comes back
through the ledger's clawback; a refund reported twice counts once."""

from datetime import timedelta

import pytest
from django.utils import timezone

from campaigns.selectors import campaign_budget
from tests.verification.shop_payloads import post, shopify_order, shopify_refund, woo_order
from verification.cashback import purchase_confirm
from verification.connectors import shop_connect
from verification.models import ActionClaim, ProviderEvent
from verification.services.participants import participant_payable_account
from verification.services.provider_events import provider_events_process

pytestmark = pytest.mark.django_db

SECRET = "shop_webhook_secret_1"
ids = iter(f"b54557e4-bdd9-4b37-8a5f-{n:012d}" for n in range(1000))


@pytest.fixture
def share(make_live_campaign):
    """5 % back, at most 5 EUR, 14 days to return."""
    campaign = make_live_campaign(slug="cashback-week", package="cashback", budget=100_00)
    campaign.rules.filter(trigger="purchase").update(cashback_basis_points=500, return_window_days=14)
    return campaign


@pytest.fixture
def fixed(make_live_campaign):
    """A fixed 5 EUR for every purchase."""
    campaign = make_live_campaign(slug="five-back", package="cashback", budget=100_00)
    campaign.rules.filter(trigger="purchase").update(
        cashback_basis_points=None, reward_amount=5_00, return_window_days=14
    )
    return campaign


def connect(brand, campaign, kind):
    domain = "alpaca.myshopify.com" if kind == "shopify" else "shop.alpaca.example"
    return shop_connect(brand=brand, kind=kind, domain=domain, webhook_secret=SECRET, campaign=campaign)


def deliver(client, shop, topic, payload):
    response = post(client, shop, topic=topic, payload=payload, secret=SECRET, delivery_id=next(ids))
    assert response.status_code == 200
    provider_events_process()
    return ProviderEvent.objects.order_by("pk").last().outcome


SHIPPING_BACK = shopify_refund(shipping="4.90")  # the order's 4.90 EUR shipping refunded


def test_a_shopify_shipping_refund_keeps_the_cashback_of_what_was_kept(client, alpaca, share):
    shop = connect(alpaca, share, "shopify")
    deliver(client, shop, "orders/paid", shopify_order())

    assert deliver(client, shop, "refunds/create", SHIPPING_BACK) == "partially_refunded"

    claim = ActionClaim.objects.get()
    assert (claim.status, claim.amount) == ("pending", 1_75)  # 5 % of the 35.10 EUR kept
    assert claim.purchase.status == "pending" and claim.purchase.refunds == {"509562969": 4_90}
    assert campaign_budget(campaign=share).held == 1_75


def test_a_fixed_cashback_shrinks_in_proportion_to_what_was_kept(client, alpaca, fixed):
    shop = connect(alpaca, fixed, "shopify")
    deliver(client, shop, "orders/paid", shopify_order())

    deliver(client, shop, "refunds/create", SHIPPING_BACK)

    assert ActionClaim.objects.get().amount == 4_38  # 5 EUR x 35.10 / 40.00, rounded down


def test_a_partly_refunded_woocommerce_order_earns_only_on_what_was_kept(client, alpaca, share):
    shop = connect(alpaca, share, "woocommerce")
    deliver(client, shop, "order.updated", woo_order())
    partly = woo_order(
        date_modified_gmt="2026-12-02T09:00:00",
        refunds=[{"id": 4761, "reason": "Shipping", "total": "-4.90"}],
    )

    assert deliver(client, shop, "order.updated", partly) == "partially_refunded"

    claim = ActionClaim.objects.get()
    assert (claim.status, claim.amount) == ("pending", 2_75)  # 5 % of 55.10 EUR
    assert campaign_budget(campaign=share).held == 2_75


def test_after_the_return_window_the_difference_is_clawed_back_and_a_full_refund_the_rest(
    client, alpaca, share
):
    shop = connect(alpaca, share, "shopify")
    deliver(client, shop, "orders/paid", shopify_order())
    claim = ActionClaim.objects.get()
    purchase_confirm(purchase_id=claim.purchase_id, now=timezone.now() + timedelta(days=15))
    payable = participant_payable_account(participant=claim.participant, currency="EUR")
    payable.refresh_from_db()
    assert payable.balance == 2_00

    deliver(client, shop, "refunds/create", SHIPPING_BACK)
    deliver(client, shop, "refunds/create", SHIPPING_BACK)  # the same refund, delivered again

    claim.refresh_from_db()
    payable.refresh_from_db()
    assert (claim.status, claim.amount, payable.balance) == ("approved", 1_75, 1_75)

    rest = shopify_refund(refund_id=509562970, line_amount="35.10")
    assert deliver(client, shop, "refunds/create", rest) == "refunded"
    claim.refresh_from_db()
    payable.refresh_from_db()
    assert (claim.status, payable.balance) == ("clawed_back", 0)


def test_the_same_woocommerce_refund_listed_in_later_updates_counts_once(client, alpaca, share):
    shop = connect(alpaca, share, "woocommerce")
    deliver(client, shop, "order.updated", woo_order())
    refund = {"id": 4761, "reason": "Shipping", "total": "-4.90"}
    deliver(
        client, shop, "order.updated", woo_order(date_modified_gmt="2026-12-02T09:00:00", refunds=[refund])
    )
    deliver(
        client, shop, "order.updated", woo_order(date_modified_gmt="2026-12-03T09:00:00", refunds=[refund])
    )

    assert ActionClaim.objects.get().amount == 2_75


def test_a_partial_refund_delivered_before_its_payment_is_applied_when_it_comes(client, alpaca, share):
    shop = connect(alpaca, share, "shopify")
    assert deliver(client, shop, "refunds/create", SHIPPING_BACK) == "refund_before_payment"

    deliver(client, shop, "orders/paid", shopify_order())

    claim = ActionClaim.objects.get()
    assert (claim.status, claim.amount) == ("pending", 1_75)


def test_a_shopify_refund_of_the_whole_order_still_takes_the_whole_cashback(client, alpaca, share):
    shop = connect(alpaca, share, "shopify")
    deliver(client, shop, "orders/paid", shopify_order())

    everything = shopify_refund(line_amount="35.10", shipping="4.90")
    assert deliver(client, shop, "refunds/create", everything) == "refunded"

    claim = ActionClaim.objects.get()
    assert (claim.status, claim.purchase.status) == ("rejected", "refunded")
    assert campaign_budget(campaign=share).held == 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_partial_refunds_and_the_window_closing_at_once_leave_the_cashback_of_what_was_kept(
    alpaca, share
):
    """Two refunds of one order processed by two workers while the return window closes: whichever
    goes first, the person ends with 5 % of the 25.10 EUR kept, and the budget gave no more."""
    from django.test import Client

    from tests.verification.test_claim_races import race

    shop = connect(alpaca, share, "shopify")
    deliver(Client(), shop, "orders/paid", shopify_order())
    claim = ActionClaim.objects.get()
    for refund in (SHIPPING_BACK, shopify_refund(refund_id=509562970, line_amount="10.00")):
        post(Client(), shop, topic="refunds/create", payload=refund, secret=SECRET, delivery_id=next(ids))
    refunds = list(ProviderEvent.objects.filter(processed_at__isnull=True).values_list("pk", flat=True))
    later = timezone.now() + timedelta(days=15)

    race(
        3,
        lambda i: (
            provider_events_process(ids=[refunds[i]])
            if i < 2
            else purchase_confirm(purchase_id=claim.purchase_id, now=later)
        ),
    )
    purchase_confirm(purchase_id=claim.purchase_id, now=later)

    claim.refresh_from_db()
    payable = participant_payable_account(participant=claim.participant, currency="EUR")
    assert (claim.status, claim.amount, payable.balance) == ("approved", 1_25, 1_25)
    assert campaign_budget(campaign=share).held == 0
