"""The platform's fee: a plan per brand and currency that staff change with a second staff member,
charged with each reward in the reward's own transaction (the campaign's budget -> the platform's
fees), given back in proportion when the reward is taken back, free in test data, and shown by the
dry run before launch."""

import pytest
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from campaigns.fees import fee_plan_for, fee_plans_forget
from campaigns.models import FeeCharge, FeePlan
from campaigns.modes import brand_test_twin
from campaigns.selectors import campaign_budget, campaign_dry_run
from campaigns.services.campaigns import campaign_create, campaign_transition
from campaigns.services.fees import (
    FeePlanRefused,
    fee_plan_change_request,
    reward_fee_refund,
)
from campaigns.services.funding import campaign_budget_account, campaign_fund
from joyback.ledger.models import Account, Transaction
from joyback.ledger.selectors import ledger_drift
from joyback.users.four_eyes import SecondPersonRefused, staff_grant_confirm
from joyback.users.models import StaffGrant
from payouts.sandbox.funding import play_money_add
from tests.conftest import fund, totp_enable
from verification.models import ActionClaim, ClaimStatus
from verification.services.participants import identity_attach, participant_create
from verification.services.refusals import ClaimRefused
from verification.services.rewards import (
    action_reward,
    claim_clawback,
    claim_reward_post,
    claim_reward_take_back,
)

pytestmark = pytest.mark.django_db


def staff(make_user, email):
    return make_user(email, is_staff=True, is_superuser=True)


def plan_set(brand, *, per_action, payout_bps, currency="EUR", by=None, approver=None):
    """A plan as a confirmed grant leaves it (the grant itself is tested below)."""
    fee_plans_forget()
    return FeePlan.objects.create(
        brand=brand,
        currency=currency,
        per_action=per_action,
        payout_bps=payout_bps,
        changed_by=by,
        approved_by=approver,
        changed_at=timezone.now(),
    )


@pytest.fixture
def sam(make_user):
    return staff(make_user, "sam@joyback.example")


@pytest.fixture
def tara(make_user):
    return staff(make_user, "tara@joyback.example")


@pytest.fixture
def plan(alpaca, sam, tara):
    """Alpaca pays 10 cents per verified action and 5% of each reward."""
    return plan_set(alpaca, per_action=10, payout_bps=500, by=sam, approver=tara)


def claimer(campaign, subject):
    person = participant_create(brand=campaign.brand)
    return identity_attach(participant=person, provider="tiktok", subject=subject, display_name=subject)


def fees_balance() -> int:
    account = Account.objects.filter(kind="fees", brand_id__isnull=True, currency="EUR").first()
    return account.balance if account else 0


# ---- the plan, with four eyes ---------------------------------------------------------------------


def test_a_plan_is_in_force_only_once_a_second_staff_member_confirms_it(alpaca, sam, tara):
    before = fee_plan_for(brand=alpaca, currency="EUR")
    grant = fee_plan_change_request(actor=sam, brand=alpaca, currency="EUR", per_action=25, payout_bps=300)

    assert fee_plan_for(brand=alpaca, currency="EUR") == before  # nothing changed yet
    with pytest.raises(SecondPersonRefused):
        staff_grant_confirm(grant_id=grant.pk, actor=sam)
    assert not FeePlan.objects.exists()

    staff_grant_confirm(grant_id=grant.pk, actor=tara)

    plan = fee_plan_for(brand=alpaca, currency="EUR")
    assert (plan.per_action, plan.payout_bps, plan.own) == (25, 300, True)
    row = FeePlan.objects.get()
    assert (row.changed_by, row.approved_by) == (sam, tara)


def test_staff_ask_in_the_admin_and_nothing_changes_until_a_second_confirms(client, alpaca, sam, tara):
    client.force_login(totp_enable(sam))

    response = client.post(
        "/admin/campaigns/feeplan/add/",
        {"brand": alpaca.pk, "currency": "EUR", "per_action": 25, "payout_bps": 300},
    )

    assert response.status_code == 302
    assert not FeePlan.objects.exists() and fee_plan_for(brand=alpaca, currency="EUR").free
    grant = StaffGrant.objects.get(kind="fee_plan")
    staff_grant_confirm(grant_id=grant.pk, actor=tara)
    assert fee_plan_for(brand=alpaca, currency="EUR").per_action == 25
    assert client.get("/admin/campaigns/feeplan/").status_code == 200


def test_the_platforms_plan_holds_for_a_brand_without_its_own(alpaca, bison, sam, tara):
    plan_set(None, per_action=5, payout_bps=100, by=sam, approver=tara)
    plan_set(alpaca, per_action=20, payout_bps=0, by=sam, approver=tara)

    assert fee_plan_for(brand=bison, currency="EUR").per_action == 5
    assert fee_plan_for(brand=alpaca, currency="EUR").per_action == 20
    assert fee_plan_for(brand=alpaca, currency="USD").free  # the settings' default: no fee


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"currency": "EURO", "per_action": 1, "payout_bps": 1}, "currency"),
        ({"currency": "EUR", "per_action": -1, "payout_bps": 1}, "whole number"),
        ({"currency": "EUR", "per_action": 1, "payout_bps": 10_001}, "basis points"),
    ],
)
def test_a_plan_out_of_range_is_refused_and_nothing_is_asked(alpaca, sam, fields, words):
    with pytest.raises(FeePlanRefused, match=words):
        fee_plan_change_request(actor=sam, brand=alpaca, **fields)
    assert not FeePlan.objects.exists()


def test_test_data_is_the_free_trial(alpaca, sam, tara, plan):
    twin = brand_test_twin(brand=alpaca)

    assert fee_plan_for(brand=twin, currency="EUR").free
    with pytest.raises(FeePlanRefused, match="free trial"):
        fee_plan_change_request(actor=sam, brand=twin, currency="EUR", per_action=1, payout_bps=1)


# ---- the fee, booked with the reward --------------------------------------------------------------


def test_the_fee_is_booked_with_the_reward_in_its_transaction(summer, plan):
    budget = campaign_budget_account(campaign=summer)
    before = budget.balance

    claim = action_reward(rule=summer.rules.get(trigger="tiktok_login"), identity=claimer(summer, "pat"))

    fee = 10 + 1_00 * 500 // 10_000  # 10 cents per action and 5% of the 1.00 reward
    budget.refresh_from_db()
    assert before - budget.balance == 1_00 + fee
    assert fees_balance() == fee
    charge = FeeCharge.objects.get(claim_id=claim.pk)
    assert (charge.reward_amount, charge.action_fee, charge.payout_fee) == (1_00, 10, 5)
    booked = Transaction.objects.get(pk=charge.ledger_transaction_id)
    assert booked.reason == "platform_fee" and booked.brand_id == summer.brand_id
    assert campaign_budget(campaign=summer).spent == 1_00  # spent on rewards: the fee is said apart
    assert ledger_drift() == []


def test_a_reward_whose_fee_the_budget_cannot_pay_is_refused_and_nothing_is_booked(alpaca, plan):
    fund(alpaca, 1_00, "EUR", reference="TIGHT")
    campaign = campaign_create(
        brand=alpaca,
        name="Tight",
        slug="tight",
        package="tiktok_only",
        currency="EUR",
        countries=["DE"],
        languages=["en"],
    )
    campaign_fund(campaign=campaign, amount=1_00)  # the reward, but not its fee
    campaign = campaign_transition(campaign=campaign, to="live")
    rule = campaign.rules.get(trigger="tiktok_login")

    with pytest.raises(ClaimRefused) as refused:
        action_reward(rule=rule, identity=claimer(campaign, "pat"))

    assert refused.value.code == "fully_claimed"
    assert campaign_budget_account(campaign=campaign).balance == 1_00
    assert not ActionClaim.objects.exists() and not FeeCharge.objects.exists()


def test_a_clawed_back_reward_gives_its_whole_fee_back(summer, plan):
    budget = campaign_budget_account(campaign=summer)
    before = budget.balance
    claim = action_reward(rule=summer.rules.get(trigger="tiktok_login"), identity=claimer(summer, "pat"))

    claim_clawback(claim=claim, reason="deleted post")

    budget.refresh_from_db()
    assert budget.balance == before
    assert fees_balance() == 0
    assert sum(charge.fee for charge in FeeCharge.objects.filter(claim_id=claim.pk)) == 0
    assert ledger_drift() == []


def test_partial_take_backs_give_back_what_one_would(summer, plan):
    claim = action_reward(rule=summer.rules.get(trigger="tiktok_login"), identity=claimer(summer, "pat"))
    with transaction.atomic():
        reward_fee_refund(claim_id=claim.pk, campaign=summer, amount=30, idempotency_key="a")
        reward_fee_refund(claim_id=claim.pk, campaign=summer, amount=30, idempotency_key="b")
    net = {
        "action": sum(c.action_fee for c in FeeCharge.objects.filter(claim_id=claim.pk)),
        "payout": sum(c.payout_fee for c in FeeCharge.objects.filter(claim_id=claim.pk)),
    }
    # 60 of the 100 taken back: 40% of each part of the fee stays, rounded in the brand's favour.
    assert net == {"action": 10 - 10 * 60 // 100, "payout": 5 - 5 * 60 // 100}


def test_test_data_pays_no_fee(alpaca, plan):
    twin = brand_test_twin(brand=alpaca)
    play_money_add(brand=twin, amount=10_00)
    campaign = campaign_create(
        brand=twin,
        name="Trial",
        slug="trial",
        package="tiktok_only",
        currency="EUR",
        countries=["DE"],
        languages=["en"],
    )
    campaign_fund(campaign=campaign, amount=10_00)
    campaign = campaign_transition(campaign=campaign, to="live")

    action_reward(rule=campaign.rules.get(trigger="tiktok_login"), identity=claimer(campaign, "pat"))

    assert not FeeCharge.objects.exists()
    assert campaign_budget_account(campaign=campaign).balance == 10_00 - 1_00


# ---- shown before launch --------------------------------------------------------------------------


def test_the_dry_run_counts_the_fees_in_what_the_budget_pays(summer, plan):
    run = campaign_dry_run(campaign=summer, budget=100_00)

    login = next(row for row in run.rows if row.rule.trigger == "tiktok_login")
    # Each 1.00 reward costs 1.15 with its fee: 86 rewards fit, not 100.
    assert login.rewards == 100_00 // 1_15 == 86
    assert login.fees == 86 * 10 + 86_00 * 500 // 10_000
    assert run.journey_fees > 0
    assert run.total_needed == run.projected_spend + run.projected_fees <= 100_00


def test_the_dry_run_page_shows_the_fees_and_the_total_the_brand_needs(client, alice, summer, plan):
    client.force_login(alice)

    response = client.get(
        reverse("campaign_dry_run", args=[summer.brand.slug, summer.pk]),
        {"budget": "100"},
        HTTP_HX_REQUEST="true",
    )

    text = response.content.decode()
    assert response.status_code == 200
    assert "JoyBack fees" in text and "5% of each reward" in text and "€0.10 per verified action" in text
    run = campaign_dry_run(campaign=summer, budget=100_00)
    assert f"€{run.total_needed / 100:,.2f}" in text


def test_the_dry_run_of_test_data_says_it_is_free(client, alice, alpaca, plan):
    twin = brand_test_twin(brand=alpaca)
    campaign = campaign_create(
        brand=twin,
        name="Trial",
        slug="trial",
        package="tiktok_only",
        currency="EUR",
        countries=["DE"],
        languages=["en"],
    )
    client.force_login(alice)

    response = client.get(
        reverse("campaign_dry_run", args=[f"{alpaca.slug}--test", campaign.pk]), {"budget": "100"}
    )

    assert "free trial" in response.content.decode()


# ---- the property: fees, rewards and balances reconcile -------------------------------------------


class FeesReconcile(RuleBasedStateMachine):
    """Rewards of any amount posted and taken back in parts, in any order, under any plan: the
    campaign's budget goes down by exactly the rewards and fees that stand, the platform's fees
    account holds exactly the fees, each claim keeps its fee in proportion to what stays of its
    reward (nothing once all is back), and the books do not drift."""

    def __init__(self):
        super().__init__()
        self._savepoint = transaction.atomic()
        self._savepoint.__enter__()
        self.claims = []  # [claim, reward, taken]

    def teardown(self):
        transaction.set_rollback(True)  # each example starts from the same books
        self._savepoint.__exit__(None, None, None)

    @initialize(per_action=st.integers(0, 300), payout_bps=st.integers(0, 3000))
    def setup(self, per_action, payout_bps):
        self.campaign = CAMPAIGN
        self.plan = (per_action, payout_bps)
        FeePlan.objects.filter(brand=self.campaign.brand).update(per_action=per_action, payout_bps=payout_bps)
        fee_plans_forget()
        self.budget = campaign_budget_account(campaign=self.campaign)
        self.start = self.budget.balance
        self.fees_start = fees_balance()
        self.rule = self.campaign.rules.get(trigger="tiktok_login")
        self.made = 0

    @rule(amount=st.integers(1, 20_000))
    def reward(self, amount):
        self.made += 1
        identity = claimer(self.campaign, f"p{self.made}-{amount}")
        claim = ActionClaim.objects.create(
            campaign=self.campaign,
            brand_id=self.campaign.brand_id,
            rule=self.rule,
            participant=identity.participant,
            identity=identity,
            status=ClaimStatus.APPROVED,
            amount=amount,
            currency="EUR",
        )
        self.budget.refresh_from_db()
        fee = self.plan[0] + amount * self.plan[1] // 10_000
        try:
            with transaction.atomic():
                claim_reward_post(claim)
        except ClaimRefused:
            assert self.budget.available < amount + fee  # refused only when it did not fit
            return
        self.claims.append([claim, amount, 0])

    @rule(data=st.data())
    def take_back(self, data):
        open_claims = [entry for entry in self.claims if entry[2] < entry[1]]
        if not open_claims:
            return
        entry = data.draw(st.sampled_from(open_claims))
        part = data.draw(st.integers(1, entry[1] - entry[2]))
        claim = ActionClaim.objects.select_related("campaign", "participant").get(pk=entry[0].pk)
        with transaction.atomic():
            claim_reward_take_back(
                claim, reason="refund", idempotency_key=f"t{claim.pk}:{entry[2]}", amount=part
            )
        entry[2] += part

    @invariant()
    def reconciles(self):
        if not hasattr(self, "budget"):
            return
        per_action, bps = self.plan
        rewards = fees = 0
        for claim, amount, taken in self.claims:
            action, share = per_action, amount * bps // 10_000
            kept = {
                "action": action - action * taken // amount,
                "payout": share - share * taken // amount,
            }
            charges = FeeCharge.objects.filter(claim_id=claim.pk)
            assert sum(c.action_fee for c in charges) == kept["action"]
            assert sum(c.payout_fee for c in charges) == kept["payout"]
            if taken == amount:
                assert kept == {"action": 0, "payout": 0}
            rewards += amount - taken
            fees += kept["action"] + kept["payout"]
        self.budget.refresh_from_db()
        assert self.start - self.budget.balance == rewards + fees
        assert fees_balance() - self.fees_start == fees
        assert sum(c.fee for c in FeeCharge.objects.filter(campaign=self.campaign)) == fees


CAMPAIGN = None


def test_fees_rewards_and_balances_reconcile(summer, plan):
    global CAMPAIGN
    fund(summer.brand, 10_000_00, "EUR", reference="PROPERTY")
    campaign_fund(campaign=summer, amount=50_000)
    CAMPAIGN = summer
    run_state_machine_as_test(
        FeesReconcile,
        settings=settings(
            max_examples=20,
            stateful_step_count=10,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        ),
    )
    assert ledger_drift() == []
