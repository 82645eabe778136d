"""The platform's fee in force for a brand and currency, and what it comes to on a reward.

A plan is a fee per verified action (minor units) and a share of each reward (basis points): the
brand's own FeePlan for the currency, else the platform's for the currency, else the settings'
defaults (FEE_PER_ACTION_MINOR in euro cents, scaled to the currency as the limits are, and
FEE_PAYOUT_BPS). Test data is the free trial: a test brand's plan is always zero.

The share is rounded down to the minor unit, per reward posting: the brand never pays a fraction
of a cent more than the plan says.
"""

from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.core.cache import cache

from campaigns.limits import CACHE_SECONDS, euro_cents_in
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
    return euro_cents_in(amount=settings.FEE_PER_ACTION_MINOR, currency=currency)


PLANS_CACHE_KEY = "campaigns:fee_plans"


def _plans() -> dict[tuple[int | None, str], tuple[int, int]]:
    # Every reward reads its brand's plan: the few rows are read once a minute, not per reward.
    plans = cache.get(PLANS_CACHE_KEY)
    if plans is None:
        stored = FeePlan.objects.values_list("brand_id", "currency", "per_action", "payout_bps")
        plans = {(brand_id, currency): (per_action, bps) for brand_id, currency, per_action, bps in stored}
        cache.set(PLANS_CACHE_KEY, plans, CACHE_SECONDS)
    return plans


def fee_plans_forget() -> None:
    cache.delete(PLANS_CACHE_KEY)


def fee_plan_for(*, brand: Brand, currency: str) -> Plan:
    """The plan in force for this brand and currency; a test brand's costs nothing."""
    if not brand.livemode:
        return Plan(currency=currency, per_action=FREE_TRIAL, payout_bps=FREE_TRIAL)
    plans = _plans()
    if (brand.pk, currency) in plans:
        return Plan(currency, *plans[(brand.pk, currency)], own=True)
    if (None, currency) in plans:
        return Plan(currency, *plans[(None, currency)])
    return Plan(currency, fee_default_per_action(currency=currency), settings.FEE_PAYOUT_BPS)


def fee_on_reward(*, plan: Plan, amount: int, first: bool) -> tuple[int, int]:
    """(action fee, payout fee) on a reward of `amount`: the action's fee on its first posting only
    (a reach share pays out in several), the share on every one."""
    return (plan.per_action if first else 0), amount * plan.payout_bps // BPS


def fee_for_reward(*, plan: Plan, amount: int) -> int:
    """What one verified action with this reward costs the brand in fees."""
    action_fee, payout_fee = fee_on_reward(plan=plan, amount=amount, first=True)
    return action_fee + payout_fee
