"""Reads, each scoped to the brands the signed-in member belongs to."""

import copy
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta

from allauth.account.models import EmailAddress
from django.conf import settings
from django.core.cache import cache
from django.db.models import CharField, OuterRef, Subquery, Sum, Value
from django.db.models.functions import Cast, Concat, TruncDate
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext_lazy as _

from campaigns.fees import BPS, FEE_REASONS, Plan, fee_for_reward, fee_plan_for
from campaigns.models import (
    ActionRule,
    Brand,
    Campaign,
    CampaignStatus,
    Invitation,
    LandingVisitDay,
    Membership,
)
from campaigns.reach import reach_dry_run, reach_spend_most
from joyback.ledger.models import Account, AccountKind, Entry
from joyback.ledger.selectors import account_available_subquery, account_find, accounts_for_brand
from joyback.mfa import mfa_enabled


def brands_for_user(*, user):
    if not user.is_authenticated:
        return Brand.objects.none()
    return Brand.objects.filter(memberships__user=user).order_by("name")


def membership_get(*, user, brand_slug: str) -> Membership | None:
    """The member's membership of the brand with this slug, or None: the one access check."""
    if not user.is_authenticated:
        return None
    return Membership.objects.select_related("brand").filter(user=user, brand__slug=brand_slug).first()


def brand_members_who_can(*, brand: Brand, capability: frozenset) -> list[str]:
    """The names (or emails) of the brand's members whose role has this capability, to say who to ask."""
    members = Membership.objects.filter(brand=brand, role__in=capability).select_related("user")
    members = members.order_by("pk")
    return [member.user.get_full_name() or member.user.email for member in members]


def brand_balances(*, brand: Brand) -> dict:
    """Balances of the brand's ledger accounts, grouped for the dashboard tiles."""
    accounts = list(accounts_for_brand(brand_id=brand.pk))
    totals: dict[str, dict[str, int]] = {}
    for account in accounts:
        tile = totals.setdefault(account.currency, {"funding": 0, "budgets": 0, "held": 0, "payable": 0})
        if account.kind == AccountKind.BRAND_FUNDING:
            tile["funding"] += account.available
        elif account.kind == AccountKind.CAMPAIGN_BUDGET:
            tile["budgets"] += account.available
        elif account.kind in (AccountKind.PARTICIPANT_PAYABLE, AccountKind.PAYOUT_IN_TRANSIT):
            tile["payable"] += account.balance
        tile["held"] += account.held
    return {"accounts": accounts, "totals": totals}


def campaigns_for_brand(*, brand: Brand):
    return Campaign.objects.filter(brand=brand).order_by("-created_at")


def campaign_get_for_brand(*, brand: Brand, campaign_id: int) -> Campaign | None:
    return Campaign.objects.filter(brand=brand, pk=campaign_id).select_related("brand").first()


def campaign_public_get(*, slug: str, with_rules: bool = True) -> Campaign | None:
    """A campaign the public may see, with what its claimability needs, in one query."""
    budget_available = account_available_subquery(
        kind=AccountKind.CAMPAIGN_BUDGET,
        brand_id=OuterRef("brand_id"),
        subject=Concat(Value("campaign:"), Cast(OuterRef("pk"), CharField())),
        currency=OuterRef("currency"),
    )
    campaigns = (
        Campaign.objects.filter(slug=slug)
        .exclude(status=CampaignStatus.DRAFT)
        .select_related("brand")
        .annotate(
            cheapest_reward=Subquery(
                ActionRule.objects.filter(campaign=OuterRef("pk"))
                .order_by("reward_amount")
                .values("reward_amount")[:1]
            ),
            budget_available=budget_available,
        )
    )
    if with_rules:
        campaigns = campaigns.prefetch_related("rules")
    return campaigns.first()


# The public campaigns this process read, each under the stamp the shared cache held for it then.
_local_campaigns: dict[str, tuple[str, Campaign | None]] = {}
_LOCAL_CAMPAIGNS_MAX = 1000


def campaign_public_cached(*, slug: str) -> Campaign | None:
    """The public campaign without its budget, cached briefly: for requests that only need to
    know it exists and its status (the brand's changes clear it at once).

    The shared cache holds a stamp, not the campaign: each process keeps its own copy of what it
    read under that stamp, so a claim fetches a short string instead of unpickling a campaign and
    its brand (a tenth of its work in the web process), and a brand's change, which deletes the
    stamp (landing_cache_clear), still shows at once in every process."""
    key = f"campaign:{slug}"
    stamp = cache.get(key)
    kept = _local_campaigns.get(slug)
    if stamp is not None and kept is not None and kept[0] == stamp:
        campaign = kept[1]
    else:
        campaign = (
            Campaign.objects.filter(slug=slug)
            .exclude(status=CampaignStatus.DRAFT)
            .select_related("brand")
            .first()
        )
        if stamp is None:
            stamp = uuid.uuid4().hex
            cache.set(key, stamp, settings.LANDING_CACHE_SECONDS)
        if len(_local_campaigns) >= _LOCAL_CAMPAIGNS_MAX:
            _local_campaigns.clear()
        _local_campaigns[slug] = (stamp, campaign)
    # A copy: what a request sets on its campaign stays in that request.
    return copy.copy(campaign) if campaign is not None else None


def campaign_budget_account_get(*, campaign: Campaign) -> Account | None:
    return account_find(
        kind=AccountKind.CAMPAIGN_BUDGET,
        brand_id=campaign.brand_id,
        subject=campaign.budget_subject,
        currency=campaign.currency,
    )


@dataclass(frozen=True)
class Budget:
    currency: str
    funded: int
    available: int
    held: int
    spent: int
    low_threshold: int

    @property
    def low(self) -> bool:
        return self.available <= self.low_threshold

    @property
    def used_percent(self) -> int:
        return 0 if not self.funded else min(100, round(100 * (self.funded - self.available) / self.funded))


def campaign_budget(*, campaign: Campaign, rules=None) -> Budget:
    account = campaign_budget_account_get(campaign=campaign)
    rules = list(campaign.rules.all()) if rules is None else rules
    funded = spent = 0
    if account is not None:
        entries = Entry.objects.filter(account=account)
        credits = (
            entries.filter(amount__lt=0)
            .exclude(transaction__reason__in=FEE_REASONS)
            .aggregate(total=Sum("amount"))["total"]
        )
        funded = -(credits or 0)
        # The platform's fees come from the budget too: what went to people is said without them.
        fees = entries.filter(transaction__reason__in=FEE_REASONS).aggregate(total=Sum("amount"))["total"]
        spent = funded - account.balance - (fees or 0)
    threshold = campaign.low_budget_threshold or 10 * max((r.reward_amount for r in rules), default=0)
    return Budget(
        currency=campaign.currency,
        funded=funded,
        available=account.available if account else 0,
        held=account.held if account else 0,
        spent=spent,
        low_threshold=threshold,
    )


@dataclass(frozen=True)
class Claimability:
    open: bool
    reason: str = ""
    message: str = ""


def campaign_claimability(*, campaign: Campaign, now=None) -> Claimability:
    """Can a person start a claim now? If not, what to tell them, politely."""
    schedule = campaign_schedule_state(campaign=campaign, now=now)
    if not schedule.open:
        return schedule
    if hasattr(campaign, "budget_available"):  # annotated by campaign_public_get
        cheapest, available = campaign.cheapest_reward, campaign.budget_available
    else:
        cheapest = min((rule.reward_amount for rule in campaign.rules.all()), default=None)
        account = campaign_budget_account_get(campaign=campaign)
        available = account.available if account else None
    if cheapest is None or available is None or available < cheapest:
        return Claimability(
            False,
            "fully_claimed",
            _("This campaign is fully claimed: every reward has found its person. Thank you!"),
        )
    return Claimability(True)


def campaign_schedule_state(*, campaign: Campaign, now=None) -> Claimability:
    """Open or closed by its status and dates alone, without asking the budget (no queries)."""
    now = now or timezone.now()
    closed = {
        CampaignStatus.DRAFT: ("draft", _("This campaign has not started yet.")),
        CampaignStatus.PAUSED: (
            "paused",
            _("This campaign is paused for the moment. Please come back later."),
        ),
        CampaignStatus.ENDED: ("ended", _("This campaign has ended. Thank you for your interest!")),
    }
    if campaign.status in closed:
        reason, message = closed[campaign.status]
        return Claimability(False, reason, message)
    if campaign.starts_at and campaign.starts_at > now:
        return Claimability(False, "not_started", _("This campaign has not started yet."))
    if campaign.ends_at and campaign.ends_at <= now:
        return Claimability(False, "ended", _("This campaign has ended. Thank you for your interest!"))
    return Claimability(True)


@dataclass(frozen=True)
class DryRunRow:
    rule: object
    rewards: int
    spend: int
    tiers: tuple = ()  # a reach rule's tiers: (views, value, videos the budget pays at that tier)
    fees: int = 0  # the platform's fees on these rewards

    @property
    def total(self) -> int:
        return self.spend + self.fees


@dataclass(frozen=True)
class DryRun:
    budget: int
    rows: list
    journey_cost: int
    people: int
    projected_spend: int
    plan: Plan | None = None
    journey_fees: int = 0
    projected_fees: int = 0

    @property
    def total_needed(self) -> int:
        """What the brand needs in the budget for the projection: the rewards and their fees."""
        return self.projected_spend + self.projected_fees


def campaign_dry_run(*, campaign: Campaign, budget: int | None = None) -> DryRun:
    """How far the budget goes: per action alone, and for people who do every action, with the
    platform's fees, which the same budget pays (test data is the free trial: none)."""
    rules = list(campaign.rules.all())
    plan = fee_plan_for(brand=campaign.brand, currency=campaign.currency)
    if budget is None:
        budget = campaign_budget(campaign=campaign, rules=rules).available
    rows = []
    for rule in rules:
        rewards = budget // (rule.reward_amount + fee_for_reward(plan=plan, amount=rule.reward_amount))
        if rule.total_cap is not None:
            rewards = min(rewards, rule.total_cap)
        spend = rewards * rule.reward_amount
        tiers = ()
        if rule.pays_by_reach:
            # reward_amount is a video's most: this row is the worst case, every video at its cap;
            # the tiers say how far the budget goes at each level of reach.
            tiers = tuple(reach_dry_run(rule=rule, budget=budget))
            spend = min(spend, reach_spend_most(rule=rule, budget=budget))
            if rule.reach_campaign_cap is not None:
                rewards = min(rewards, rule.reach_campaign_cap // rule.reward_amount)
                spend = min(spend, rewards * rule.reward_amount)
        fees = rewards * plan.per_action + spend * plan.payout_bps // BPS
        rows.append(DryRunRow(rule=rule, rewards=rewards, spend=spend, tiers=tiers, fees=fees))
    journey_cost = sum(rule.reward_amount for rule in rules)
    journey_fees = sum(fee_for_reward(plan=plan, amount=rule.reward_amount) for rule in rules)
    people = budget // (journey_cost + journey_fees) if journey_cost else 0
    caps = [rule.total_cap for rule in rules if rule.total_cap is not None]
    caps += [
        rule.reach_campaign_cap // rule.reward_amount
        for rule in rules
        if rule.pays_by_reach and rule.reach_campaign_cap is not None
    ]
    if caps:
        people = min([people, *caps])
    return DryRun(
        budget=budget,
        rows=rows,
        journey_cost=journey_cost,
        people=people,
        projected_spend=people * journey_cost,
        plan=plan,
        journey_fees=journey_fees,
        projected_fees=people * journey_fees,
    )


def landing_page_cached(*, page_key: str) -> bytes | None:
    """A cached landing page. With a shared cache (Redis) each process also keeps the pages it
    fetched for LANDING_LOCAL_SECONDS: a viral page is read thousands of times a second, and
    fetching it from Redis every time costs more than the rest of the request. A brand's change
    shows at once in the process that made it, and within those seconds in the others."""
    if not (settings.REDIS_URL and settings.LANDING_LOCAL_SECONDS):
        return cache.get(page_key)
    now = time.monotonic()
    kept = _local_pages.get(page_key)
    if kept is not None and kept[0] > now:
        return kept[1]
    html = cache.get(page_key)
    if html is not None:
        if len(_local_pages) >= 1000:  # an entry per campaign and language: bounded all the same
            _local_pages.clear()
        _local_pages[page_key] = (now + settings.LANDING_LOCAL_SECONDS, html)
    return html


def landing_pages_local_forget(*, page_keys) -> None:
    for page_key in page_keys:
        _local_pages.pop(page_key, None)


_local_pages: dict[str, tuple[float, bytes]] = {}


# Brand verification: what platform staff need before funding and payouts open.


def brand_owner_verified_email(*, brand: Brand) -> str:
    """The email of an owner of the brand that its owner has confirmed (allauth), or ""."""
    address = (
        EmailAddress.objects.filter(
            verified=True, user__memberships__brand=brand, user__memberships__role="owner"
        )
        .order_by("-primary", "pk")
        .values_list("email", flat=True)
        .first()
    )
    return address or ""


def brand_verification_missing(*, brand: Brand) -> list[str]:
    """What still stands between the brand and staff verification, in words for its owner."""
    missing = []
    if not brand.legal_name.strip():
        missing.append(str(_("the company's legal name")))
    if not brand.registration_number.strip():
        missing.append(str(_("its registration number")))
    if not brand.country:
        missing.append(str(_("its country")))
    if not brand_owner_verified_email(brand=brand):
        missing.append(str(_("a confirmed email address of the owner")))
    return missing


# The marketer's overview: visits and money over time (the funnel's later steps are the other apps').


def landing_visits_by_day(*, campaign_ids, start, end) -> dict:
    rows = (
        LandingVisitDay.objects.filter(campaign_id__in=campaign_ids, day__gte=start, day__lte=end)
        .values("day")
        .annotate(visits=Sum("visits"))
    )
    return {row["day"]: row["visits"] for row in rows}


def landing_visits_by_campaign(*, campaign_ids, start, end) -> dict:
    rows = (
        LandingVisitDay.objects.filter(campaign_id__in=campaign_ids, day__gte=start, day__lte=end)
        .values("campaign_id")
        .annotate(visits=Sum("visits"))
    )
    return {row["campaign_id"]: row["visits"] for row in rows}


def _budget_spending(*, campaigns, since, until):
    """The budgets' entries that paid people (rewards, less what came back): everything but the
    funding that filled them. Debits are positive: money that left the budget."""
    subjects = {c.budget_subject: c.pk for c in campaigns}
    return subjects, Entry.objects.filter(
        account__kind=AccountKind.CAMPAIGN_BUDGET,
        account__brand_id__in={c.brand_id for c in campaigns},
        account__subject__in=list(subjects),
        transaction__posted_at__gte=since,
        transaction__posted_at__lt=until,
    ).exclude(transaction__reason__in=["campaign_funding", *FEE_REASONS])


def campaign_spend_by_day(*, campaigns, since, until) -> dict[str, dict]:
    """{currency: {day: minor units spent on rewards}}, from the ledger."""
    if not campaigns:
        return {}
    _subjects, entries = _budget_spending(campaigns=campaigns, since=since, until=until)
    rows = (
        entries.annotate(day=TruncDate("transaction__posted_at"))
        .values("currency", "day")
        .annotate(spent=Sum("amount"))
    )
    spend: dict[str, dict] = {}
    for row in rows:
        spend.setdefault(row["currency"], {})[row["day"]] = row["spent"]
    return spend


def campaign_spend_by_campaign(*, campaigns, since, until) -> dict[int, int]:
    """{campaign id: minor units spent on rewards in the window, in the campaign's currency}."""
    if not campaigns:
        return {}
    subjects, entries = _budget_spending(campaigns=campaigns, since=since, until=until)
    rows = entries.values("account__subject").annotate(spent=Sum("amount"))
    return {subjects[row["account__subject"]]: row["spent"] for row in rows}


def campaign_budget_by_day(*, campaign: Campaign, start, end) -> list[int]:
    """The budget's balance at the end of each day from start to end (minor units)."""
    account = campaign_budget_account_get(campaign=campaign)
    if account is None:
        return []
    before = Entry.objects.filter(account=account, transaction__posted_at__date__lt=start).aggregate(
        total=Sum("amount")
    )["total"]
    rows = (
        Entry.objects.filter(account=account, transaction__posted_at__date__gte=start)
        .filter(transaction__posted_at__date__lte=end)
        .annotate(day=TruncDate("transaction__posted_at"))
        .values("day")
        .annotate(change=Sum("amount"))
    )
    changes = {row["day"]: row["change"] for row in rows}
    balance = -(before or 0)  # a budget is credit-normal: credits raise it
    series, day = [], start
    while day <= end:
        balance -= changes.get(day, 0)
        series.append(balance)
        day += timedelta(days=1)
    return series


def team_members(*, brand: Brand) -> list[dict]:
    """The brand's members for its team page: who, which role, whether they have a second factor,
    and from when a money role may approve."""
    members = Membership.objects.filter(brand=brand).select_related("user").order_by("pk")
    now = timezone.now()
    return [
        {
            "membership": member,
            "name": member.user.get_full_name() or member.user.email,
            "email": member.user.email,
            "mfa": mfa_enabled(member.user),
            "waits_until": member.approves_from
            if member.approves_from and member.approves_from > now
            else None,
        }
        for member in members
    ]


def team_invitations_open(*, brand: Brand) -> list:
    return list(
        Invitation.objects.filter(
            brand=brand, accepted_at__isnull=True, revoked_at__isnull=True, expires_at__gt=timezone.now()
        ).select_related("invited_by")
    )


def member_approver_refusal(*, membership: Membership) -> str | None:
    """Why this member may not (yet) be the second approver of the brand's money, in words; None
    when they may. A money role an owner gave waits for the cooling period, and whoever moves
    money has a second factor."""
    if not mfa_enabled(membership.user):
        return _("Set up a second factor (Security) before approving payouts.")
    if membership.approves_from and membership.approves_from > timezone.now():
        return _(
            "Your %(role)s role is new: you may approve payouts from %(date)s. For %(days)s days after "
            "an owner gives someone a role that moves money, that person is not yet a second approver, "
            "so nobody can make their own second approver."
        ) % {
            "role": membership.get_role_display(),
            "date": date_format(timezone.localtime(membership.approves_from), "SHORT_DATETIME_FORMAT"),
            "days": settings.FOUR_EYES_COOLING_DAYS,
        }
    return None


def campaign_draft_for_member(*, slug: str, user) -> Campaign | None:
    """A draft campaign, for a member of its brand (test data included) to preview; None for
    anyone else."""
    if not user.is_authenticated:
        return None
    campaign = Campaign.objects.filter(slug=slug, status=CampaignStatus.DRAFT).select_related("brand").first()
    if campaign is None:
        return None
    live_brand_id = campaign.brand.live_brand_id or campaign.brand_id
    if not Membership.objects.filter(user=user, brand_id=live_brand_id).exists():
        return None
    return campaign
