"""The platform's fee in force for a brand and currency, and what it comes to on a reward.

A plan is a fee per verified action (minor units) and a share of each reward (basis points): the
brand's own FeePlan for the currency, else the platform's for the currency, else the settings'
defaults (FEE_PER_ACTION_MINOR in euro cents, scaled to the currency as the limits are, and
FEE_PAYOUT_BPS). Test data is the free trial: a test brand's plan is always zero.

The share is rounded down to the minor unit, per reward posting: the brand never pays a fraction
of a cent more than the plan says.
"""

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from babel.numbers import get_currency_precision
from django.conf import settings
from django.db.models import Q

from campaigns.limits import UNITS_PER_EURO
from campaigns.models import Brand, FeePlan

BPS = 10_000
# The ledger's reasons of a fee and of its refund (campaigns.services.fees): a budget's spending on
# rewards is read without them.
FEE_REASONS = ("platform_fee", "platform_fee_refund")


@dataclass(frozen=True)
class Plan:
    currency: str
    per_action: int
    payout_bps: int
    own: bool = False  # the brand's own plan, not the platform's

    @property
    def free(self) -> bool:
        return not (self.per_action or self.payout_bps)

    @property
    def percent(self) -> Decimal:
        return Decimal(self.payout_bps) / 100


FREE_TRIAL = 0


def fee_default_per_action(*, currency: str) -> int:
    base = settings.FEE_PER_ACTION_MINOR
    if currency == "EUR" or not base:
        return base
    euros = Decimal(base).scaleb(-2) * UNITS_PER_EURO.get(currency, Decimal(1))
    return int(euros.scaleb(get_currency_precision(currency)).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def fee_plan_for(*, brand: Brand, currency: str) -> Plan:
    """The plan in force for this brand and currency; a test brand's costs nothing."""
    if not brand.livemode:
        return Plan(currency=currency, per_action=FREE_TRIAL, payout_bps=FREE_TRIAL)
    rows = {
        row.brand_id: row
        for row in FeePlan.objects.filter(Q(brand=brand) | Q(brand__isnull=True), currency=currency)
    }
    row = rows.get(brand.pk) or rows.get(None)
    if row is not None:
        return Plan(currency, row.per_action, row.payout_bps, own=row.brand_id == brand.pk)
    return Plan(currency, fee_default_per_action(currency=currency), settings.FEE_PAYOUT_BPS)


def fee_on_reward(*, plan: Plan, amount: int, first: bool) -> tuple[int, int]:
    """(action fee, payout fee) on a reward of `amount`: the action's fee on its first posting only
    (a reach share pays out in several), the share on every one."""
    return (plan.per_action if first else 0), amount * plan.payout_bps // BPS


def fee_for_reward(*, plan: Plan, amount: int) -> int:
    """What one verified action with this reward costs the brand in fees."""
    action_fee, payout_fee = fee_on_reward(plan=plan, amount=amount, first=True)
    return action_fee + payout_fee
