"""The platform's fee: staff change a plan with a second staff member's confirmation (the four-eyes
grant a limit takes, kind "fee_plan"), and each reward's fee is booked in the reward's own
transaction, from the campaign's budget to the platform's fees account, and given back in
proportion when the reward is taken back.

The callers (verification's reward and clawback) hold the claim's lock, so the charges of one claim
are read and written one at a time. Only live brands pay: test data is the free trial.
"""

from django.db import transaction
from django.db.models import Q, Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns.fees import FEE_REASONS, fee_on_reward, fee_plan_for, fee_plans_forget
from campaigns.models import Brand, Campaign, FeeCharge, FeePlan
from campaigns.services.funding import campaign_budget_account
from joyback.ledger.models import Account, AccountKind, Transaction
from joyback.ledger.services import account_for, posting_post, transfer
from joyback.money import MoneyError, currency_check
from joyback.users.four_eyes import staff_grant_request
from joyback.users.models import AccessChangeKind, StaffGrant

PLATFORM = "platform"
MOST_BPS = 10_000


class FeePlanRefused(Exception):
    pass


def fee_plan_grant_value(*, currency: str, brand_id: int | None, per_action: int, payout_bps: int) -> str:
    """What the grant asks for, in its value field: currency:brand:per_action:payout_bps."""
    return f"{currency}:{brand_id or PLATFORM}:{per_action}:{payout_bps}"


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def fee_plan_change_request(
    *, actor, brand: Brand | None, currency: str, per_action: int, payout_bps: int
) -> StaffGrant:
    """Staff ask for a fee plan: nothing changes until a second staff member confirms it."""
    try:
        currency_check(currency)
    except MoneyError:
        raise FeePlanRefused(_("A fee plan needs its currency (ISO 4217, e.g. EUR or JPY).")) from None
    if not _whole(per_action):
        raise FeePlanRefused(_("The fee per action is a whole number of minor units, zero or more."))
    if not _whole(payout_bps) or payout_bps > MOST_BPS:
        raise FeePlanRefused(_("The share of rewards is in basis points, from 0 to 10000 (100%)."))
    if brand is not None and not brand.livemode:
        raise FeePlanRefused(_("Test data is the free trial: it has no fee plan."))
    asked = fee_plan_grant_value(
        currency=currency, brand_id=brand.pk if brand else None, per_action=per_action, payout_bps=payout_bps
    )
    return staff_grant_request(actor=actor, subject=actor, kind=AccessChangeKind.FEE_PLAN, value=asked)


def fee_plan_change_apply(*, subject, value: str, actor) -> FeePlan:
    """The second staff member's confirmation (in staff_grant_confirm's transaction): the plan the
    first asked for is in force for every reward from now on."""
    currency, brand, per_action, payout_bps = value.split(":")
    plan, _created = FeePlan.objects.update_or_create(
        brand_id=None if brand == PLATFORM else int(brand),
        currency=currency,
        defaults={
            "per_action": int(per_action),
            "payout_bps": int(payout_bps),
            "changed_by": subject,
            "approved_by": actor,
            "changed_at": timezone.now(),
        },
    )
    # As for limits: this process reads the new plan at once, the others once committed.
    fee_plans_forget()
    transaction.on_commit(fee_plans_forget)
    return plan


def platform_fees_account(*, currency: str) -> Account:
    """The platform's own revenue: its fees, once per currency (live money only)."""
    return account_for(
        kind=AccountKind.FEES, currency=currency, brand_id=None, name=f"Platform fees {currency}"
    )


def _charge_record(*, key: str, fee: int, posting, fields: dict) -> FeeCharge:
    """The charge's row, and its posting when there is a fee to book."""
    posted = posting_post(posting=posting) if fee > 0 else None
    charge, _created = FeeCharge.objects.get_or_create(
        key=key, defaults={**fields, "ledger_transaction": posted}
    )
    return charge


def reward_fee_charge(
    *, claim_id: int, campaign: Campaign, amount: int, reward: Transaction
) -> FeeCharge | None:
    """The fee on a reward just posted (`reward`, `amount` of it), in the caller's transaction:
    the campaign's budget -> the platform's fees. Raises InsufficientFunds when the budget cannot
    pay it (the caller refuses the reward with it: a budget covers its rewards and their fees).
    A reward whose fee rounds to nothing is recorded all the same: later take-backs are in
    proportion to every reward of the claim."""
    brand = campaign.brand
    plan = fee_plan_for(brand=brand, currency=campaign.currency)
    if plan.free or amount <= 0:
        return None
    key = f"fee:{reward.pk}"
    replayed = FeeCharge.objects.filter(key=key).first()
    if replayed is not None:
        return replayed  # the same reward posted again (a replay): its fee is booked already
    first = not FeeCharge.objects.filter(claim_id=claim_id, reward_amount__gt=0).exists()
    action_fee, payout_fee = fee_on_reward(plan=plan, amount=amount, first=first)
    return _charge_record(
        key=key,
        fee=action_fee + payout_fee,
        posting=transfer(
            source=campaign_budget_account(campaign=campaign),
            destination=platform_fees_account(currency=campaign.currency),
            amount=action_fee + payout_fee,
            reason=FEE_REASONS[0],
            idempotency_key=key,
            reference=f"claim:{claim_id}",
            description=f"JoyBack fee, {campaign.name}"[:200],
        ),
        fields={
            "brand": brand,
            "campaign": campaign,
            "claim_id": claim_id,
            "currency": campaign.currency,
            "reward_amount": amount,
            "action_fee": action_fee,
            "payout_fee": payout_fee,
        },
    )


def _sums(claim_id: int) -> dict:
    charged, taken = Q(reward_amount__gt=0), Q(reward_amount__lt=0)
    return FeeCharge.objects.filter(claim_id=claim_id).aggregate(
        rewards=Sum("reward_amount", filter=charged, default=0),
        taken=Sum("reward_amount", filter=taken, default=0),
        action=Sum("action_fee", filter=charged, default=0),
        payout=Sum("payout_fee", filter=charged, default=0),
        action_back=Sum("action_fee", filter=taken, default=0),
        payout_back=Sum("payout_fee", filter=taken, default=0),
    )


def reward_fee_refund(
    *, claim_id: int, campaign: Campaign, amount: int, idempotency_key: str
) -> FeeCharge | None:
    """`amount` of the claim's rewards taken back: its fees go back to the budget in the same
    proportion, in the caller's transaction (all of them once the whole reward is back). Counted on
    the totals, so partial take-backs in a row give back exactly what one would; a take-back whose
    share rounds to nothing is recorded all the same, for the next one's proportion."""
    if amount <= 0:
        return None
    key = f"fee-refund:{idempotency_key}"
    replayed = FeeCharge.objects.filter(key=key).first()
    if replayed is not None:
        return replayed
    sums = _sums(claim_id)
    if sums["rewards"] <= 0:
        return None  # a reward booked without a fee (test data, a free plan): nothing to give back
    taken = min(-sums["taken"] + amount, sums["rewards"])
    action_back = sums["action"] * taken // sums["rewards"] + sums["action_back"]
    payout_back = sums["payout"] * taken // sums["rewards"] + sums["payout_back"]
    return _charge_record(
        key=key,
        fee=action_back + payout_back,
        posting=transfer(
            source=platform_fees_account(currency=campaign.currency),
            destination=campaign_budget_account(campaign=campaign),
            amount=action_back + payout_back,
            reason=FEE_REASONS[1],
            idempotency_key=key,
            reference=f"claim:{claim_id}",
            description=f"JoyBack fee given back, {campaign.name}"[:200],
        ),
        fields={
            "brand": campaign.brand,
            "campaign": campaign,
            "claim_id": claim_id,
            "currency": campaign.currency,
            "reward_amount": -(taken + sums["taken"]),
            "action_fee": -action_back,
            "payout_fee": -payout_back,
        },
    )
