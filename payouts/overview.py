"""The overview's funnel, from a landing visit to a person paid, with the conversion of each step
and what a verified action and a paid person cost. It is served here, the last app of the line,
because only here are all four steps known: visits (campaigns), steps started and verified
(verification), and payouts settled (this app). Money comes from the ledger.

Each step is counted on the day it happened within the chosen dates, so a step's conversion
compares what happened in the same days (a person who visited on the last day and was paid the
next is in one count, not the other).
"""

from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from campaigns import roles
from campaigns.access import brand_member_required
from campaigns.overview import Window, overview_window
from campaigns.selectors import campaign_spend_by_campaign, landing_visits_by_campaign
from payouts.models import Payout
from payouts.models.payouts import PayoutStatus
from verification.selectors import (
    rewarded_people_by_campaign,
    sales_by_campaign,
    steps_started_by_campaign,
    verified_by_campaign,
)


def conversion(count: int, of: int) -> Decimal | None:
    """count as a percentage of `of`, to one decimal; None when there was nothing to convert."""
    if not of:
        return None
    return (Decimal(100) * count / of).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)


def cost_per(spent: int, count: int) -> int | None:
    """Minor units per action or person, rounded half up to a whole minor unit; None for none."""
    if count <= 0:
        return None
    quotient, remainder = divmod(spent, count)
    return quotient + (1 if 2 * remainder >= count else 0)


@dataclass
class Funnel:
    name: str
    currency: str
    visits: int = 0
    started: set = field(default_factory=set)
    verified: set = field(default_factory=set)
    verified_actions: int = 0
    paid: set = field(default_factory=set)
    spent: int = 0
    campaign_id: int | None = None
    # What buyers spent, where a shop or the Cashback API reports sales; None: nothing reports them.
    sales: int | None = None

    def steps(self) -> list[tuple[str, int, Decimal | None]]:
        """(step, count, conversion from the step before)."""
        # Visits, then people: each named with what it counts, so no step mixes the two.
        counts = [
            (_("Landing page visits"), self.visits),
            (_("People who started a step"), len(self.started)),
            (_("People verified"), len(self.verified)),
            (_("People paid to their bank"), len(self.paid)),
        ]
        return [
            (name, count, conversion(count, counts[i - 1][1]) if i else None)
            for i, (name, count) in enumerate(counts)
        ]

    @property
    def per_verified_action(self) -> int | None:
        return cost_per(self.spent, self.verified_actions)

    @property
    def per_paid_person(self) -> int | None:
        return cost_per(self.spent, len(self.paid))

    @property
    def roi(self) -> Decimal | None:
        """Return on the rewards, in percent: (sales - spent) / spent; None without sales or spend."""
        if self.sales is None or not self.spent:
            return None
        return (Decimal(100) * (self.sales - self.spent) / self.spent).quantize(
            Decimal("0.1"), rounding=ROUND_HALF_UP
        )


def paid_people(*, brand, since, until) -> set[int]:
    """People whose payout arrived at their bank in the window."""
    return set(
        Payout.objects.filter(
            brand=brand, status=PayoutStatus.SETTLED, settled_at__gte=since, settled_at__lt=until
        ).values_list("participant_id", flat=True)
    )


def overview_funnels(*, window: Window) -> tuple[list[Funnel], list[Funnel]]:
    """One funnel per campaign and one per currency over all of them (people counted once)."""
    ids = window.campaign_ids
    visits = landing_visits_by_campaign(campaign_ids=ids, start=window.start, end=window.end)
    started = steps_started_by_campaign(campaign_ids=ids, since=window.since, until=window.until)
    verified = verified_by_campaign(campaign_ids=ids, since=window.since, until=window.until)
    rewarded = rewarded_people_by_campaign(campaign_ids=ids)
    spent = campaign_spend_by_campaign(campaigns=window.campaigns, since=window.since, until=window.until)
    paid = paid_people(brand=window.form.brand, since=window.since, until=window.until)
    sales = sales_by_campaign(campaign_ids=ids, since=window.since, until=window.until)
    per_campaign, totals = [], {}
    for campaign in window.campaigns:
        funnel = Funnel(
            name=campaign.name,
            currency=campaign.currency,
            campaign_id=campaign.pk,
            visits=visits.get(campaign.pk, 0),
            started=started.get(campaign.pk, set()),
            verified=verified.get(campaign.pk, {}).get("people", set()),
            verified_actions=verified.get(campaign.pk, {}).get("actions", 0),
            paid=rewarded.get(campaign.pk, set()) & paid,
            spent=spent.get(campaign.pk, 0),
            sales=sales.get(campaign.pk),
        )
        per_campaign.append(funnel)
        total = totals.setdefault(
            campaign.currency, Funnel(name=_("All campaigns"), currency=campaign.currency)
        )
        total.visits += funnel.visits
        total.started |= funnel.started
        total.verified |= funnel.verified
        total.verified_actions += funnel.verified_actions
        total.paid |= funnel.paid
        total.spent += funnel.spent
        if funnel.sales is not None:
            total.sales = (total.sales or 0) + funnel.sales
    return per_campaign, list(totals.values())


@brand_member_required()
@require_GET
def overview_funnel(request):
    window = overview_window(data=request.GET, brand=request.brand)
    per_campaign, totals = overview_funnels(window=window)
    context = {
        "brand": request.brand,
        "membership": request.membership,
        "roles": roles,
        "window": window,
        "per_campaign": per_campaign if window.campaign is None else [],
        "totals": totals,
    }
    return render(request, "payouts/_overview_funnel.html", context)
