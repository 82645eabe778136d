"""Referred sales under concurrency, on PostgreSQL: one order delivered twice at once, and its
return window closed by two workers at once, pay the poster once."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from campaigns.selectors import campaign_budget
from campaigns.services.rules import rule_save
from tests.verification.shop_payloads import post, shopify_order
from tests.verification.test_claim_races import race
from verification.cashback import Customer, purchase_confirm, purchase_record
from verification.connectors import shop_connect
from verification.models import ActionClaim, ProviderEvent, Purchase
from verification.referrals import Referral, referral_code_for
from verification.services.participants import (
    identity_attach,
    participant_create,
    participant_payable_account,
)
from verification.services.provider_events import provider_events_process
from verification.services.rewards import action_reward

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

SECRET = "shop_webhook_secret_1"


@pytest.fixture
def setup(make_live_campaign, alpaca):
    cashback = make_live_campaign(slug="cashback-week", package="cashback", budget=100_00)
    cashback.rules.filter(trigger="purchase").update(cashback_basis_points=500, return_window_days=14)
    creators = make_live_campaign(slug="creators", package="tiktok_only", budget=100_00)
    rule_save(campaign=creators, trigger="referral", reward_amount=8_00, cashback_basis_points=1000)
    person = participant_create(brand=alpaca)
    identity = identity_attach(
        participant=person, provider="tiktok", subject="open-id-poe", display_name="Poe"
    )
    action_reward(rule=creators.rules.get(trigger="tiktok_login"), identity=identity)
    code = referral_code_for(participant=person, campaign=creators)
    return cashback, creators, code


def test_one_order_delivered_twice_at_once_pays_the_poster_once(alpaca, setup):
    cashback, creators, code = setup
    shop = shop_connect(
        brand=alpaca, kind="shopify", domain="alpaca.myshopify.com", webhook_secret=SECRET, campaign=cashback
    )
    order = shopify_order(discount_codes=[{"code": code.code, "amount": "0.00", "type": "percentage"}])
    # Two deliveries of one order (two webhook ids: orders/paid sent again), stored at once.
    answers = race(
        2,
        lambda i: post(
            Client(), shop, topic="orders/paid", payload=order, secret=SECRET, delivery_id=f"race-{i}"
        ),
    )
    assert [answer.status_code for answer in answers] == [200, 200]
    events = list(ProviderEvent.objects.values_list("pk", flat=True))
    assert len(events) == 2

    race(2, lambda i: provider_events_process(ids=[events[i]]))

    assert Purchase.objects.count() == 1
    assert ActionClaim.objects.filter(referred_purchase__isnull=False).count() == 1
    assert campaign_budget(campaign=creators).held == 4_00


def test_the_same_order_reported_at_once_by_several_workers_is_one_referral(alpaca, setup):
    cashback, creators, code = setup

    def report(_i):
        return purchase_record(
            brand=alpaca,
            order_id="A-race",
            amount=40_00,
            currency="EUR",
            customer=Customer(email="kim@example.com"),
            campaign_id=cashback.pk,
            referral=Referral(codes=(code.code,)),
        )

    outcomes = race(5, report)

    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    assert sum(1 for _claim, created in outcomes if created) == 1
    assert ActionClaim.objects.filter(referred_purchase__isnull=False).count() == 1
    assert campaign_budget(campaign=creators).held == 4_00

    # The window closed, seen by three workers at once: confirmed and posted once.
    purchase = Purchase.objects.get()
    later = timezone.now() + timedelta(days=15)
    race(3, lambda i: purchase_confirm(purchase_id=purchase.pk, now=later))
    payable = participant_payable_account(participant=code.participant, currency="EUR")
    assert payable.balance == 1_00 + 4_00 and campaign_budget(campaign=creators).held == 0  # login + referral
