"""One person, one reward per action: Pat's second TikTok account earns nothing and goes to review."""

import itertools

import pytest
from django.test import override_settings
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from campaigns.services.brands import brand_allowance_set, brand_create
from joyback.ledger.models import Transaction
from tests.verification.test_tiktok_login import authorize
from verification.models import ActionClaim, FraudSignal, Identity
from verification.services.participants import identity_attach, participant_create
from verification.services.refusals import ClaimRefused
from verification.services.rewards import action_reward

pytestmark = pytest.mark.django_db
EXAMPLES = itertools.count()


def test_a_second_tiktok_account_in_the_same_browser_earns_nothing_and_raises_a_signal(client, summer):
    client.get(authorize(client, summer.slug, display_name="Pat Creator"))

    response = client.get(authorize(client, summer.slug, display_name="Pat Again"), follow=True)

    assert "already earned this reward with another account" in response.content.decode()
    assert Identity.objects.filter(provider="tiktok").count() == 2
    claim = ActionClaim.objects.get()
    assert claim.identity.display_name == "Pat Creator"
    assert Transaction.objects.filter(reason="reward").count() == 1
    signal = FraudSignal.objects.get(code="second_account")
    assert signal.claim == claim and claim.status == "needs_review"
    assert "Pat Again" in signal.detail and "Pat Creator" in signal.detail


def test_a_third_account_earns_nothing_either(client, summer):
    for name in ("Pat Creator", "Pat Again", "Pat Thrice"):
        client.get(authorize(client, summer.slug, display_name=name))

    assert ActionClaim.objects.count() == 1
    assert Transaction.objects.filter(reason="reward").count() == 1


def test_the_reviewer_reads_why_the_claim_is_back_in_the_queue(client, alice, summer):
    pat = participant_create(brand=summer.brand)
    rule = summer.rules.get(trigger="tiktok_login")
    action_reward(rule=rule, identity=identity_attach(participant=pat, provider="tiktok", subject="a"))

    with pytest.raises(ClaimRefused) as refused:
        action_reward(rule=rule, identity=identity_attach(participant=pat, provider="tiktok", subject="b"))

    assert refused.value.code == "one_per_person"
    client.force_login(alice)
    body = client.get(reverse("verification:review_queue", args=["alpaca"])).content.decode()
    assert "A second account of a person who already claimed" in body
    assert "second_account" not in body  # the reason in words, not its code
    assert "second TikTok account b (TikTok)" in body


def test_two_people_each_earn_once(summer):
    rule = summer.rules.get(trigger="tiktok_login")
    for subject in ("pat", "sam"):
        person = participant_create(brand=summer.brand)
        action_reward(
            rule=rule, identity=identity_attach(participant=person, provider="tiktok", subject=subject)
        )

    assert ActionClaim.objects.filter(status="approved").count() == 2
    assert not FraudSignal.objects.exists()


def test_a_new_brand_caps_what_one_person_earns(bob):
    assert brand_create(name="Cobra Cola", slug="cobra", owner=bob).person_allowance == 100_00


@override_settings(PERSON_ALLOWANCE_DEFAULT=0)
def test_the_default_cap_can_be_switched_off_for_the_platform(bob):
    assert brand_create(name="Cobra Cola", slug="cobra", owner=bob).person_allowance is None


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_accounts_of_one_person_racing_for_one_reward_are_paid_once(summer):
    from tests.verification.test_claim_races import race

    pat = participant_create(brand=summer.brand)
    rule = summer.rules.get(trigger="tiktok_login")
    accounts = [identity_attach(participant=pat, provider="tiktok", subject=f"pat-{n}") for n in range(6)]

    outcomes = race(6, lambda n: action_reward(rule=rule, identity=accounts[n]))

    paid = [o for o in outcomes if isinstance(o, ActionClaim)]
    refused = [o for o in outcomes if isinstance(o, ClaimRefused)]
    assert len(paid) == 1 and {r.code for r in refused} == {"one_per_person"}, outcomes
    assert Transaction.objects.filter(reason="reward").count() == 1
    assert FraudSignal.objects.filter(code="second_account").count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_one_buyers_purchases_racing_stay_within_the_default_cap(make_live_campaign, alpaca):
    """Cashback under the default per-person cap: Kim's purchases take turns on Kim's row, so
    together they never pass it (each earns 5.00; the cap of 12.00 lets two through)."""
    from campaigns.services.brands import brand_allowance_set
    from tests.verification.test_claim_races import race
    from verification.cashback import CashbackError, Customer, purchase_record

    shop = make_live_campaign(slug="cashback-week", package="cashback", budget=100_00)
    shop.rules.filter(trigger="purchase").update(cashback_basis_points=500, return_window_days=14)
    brand_allowance_set(brand=alpaca, person_allowance=12_00)
    kim = Customer(email="kim@example.com")

    outcomes = race(
        6,
        lambda n: purchase_record(
            brand=alpaca, order_id=f"A-{n}", amount=200_00, currency="EUR", customer=kim
        ),
    )

    assert len([o for o in outcomes if isinstance(o, tuple)]) == 2, outcomes
    assert {o.code for o in outcomes if isinstance(o, CashbackError)} == {"allowance"}
    assert ActionClaim.objects.count() == 2


ATTEMPTS = st.lists(
    st.tuples(st.sampled_from(["tiktok_login", "whatsapp_optin"]), st.integers(min_value=0, max_value=2)),
    min_size=1,
    max_size=8,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(attempts=ATTEMPTS, allowance=st.integers(min_value=1_00, max_value=6_00))
def test_whatever_accounts_one_person_tries_they_earn_each_action_once_within_the_cap(
    make_live_campaign, alpaca, attempts, allowance
):
    """A model of the rules against the service: each action once per person, whichever of their
    accounts asks, and never more than the brand's cap in total."""
    campaign = make_live_campaign(slug=f"prop-{next(EXAMPLES)}")
    brand_allowance_set(brand=alpaca, person_allowance=allowance)
    pat = participant_create(brand=alpaca)
    provider = {"tiktok_login": "tiktok", "whatsapp_optin": "whatsapp"}
    earned, claimed_by = 0, {}
    for trigger, account in attempts:
        rule = campaign.rules.get(trigger=trigger)
        identity = identity_attach(
            participant=pat, provider=provider[trigger], subject=f"{campaign.slug}-{trigger}-{account}"
        )
        if trigger in claimed_by:
            expected = "already_claimed" if claimed_by[trigger] == account else "one_per_person"
        elif rule.prerequisite_id and rule.prerequisite.trigger not in claimed_by:
            expected = "prerequisite"
        elif earned + rule.reward_amount > allowance:
            expected = "allowance"
        else:
            expected = None
        try:
            action_reward(rule=rule, identity=identity)
            outcome = None
        except ClaimRefused as refused:
            outcome = refused.code
        assert outcome == expected, (trigger, account, claimed_by, earned)
        if expected is None:
            earned += rule.reward_amount
            claimed_by[trigger] = account

    claims = ActionClaim.objects.filter(participant=pat)
    assert claims.count() == len(claimed_by) == claims.values("rule").distinct().count()
    assert sum(claims.values_list("amount", flat=True)) == earned <= allowance
