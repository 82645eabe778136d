"""Campaigns: creating and changing them, their states and the lock on their row."""

from django.db import transaction
from django.db.models import Min
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext

from campaigns.consent import wording_problem, wordings_latest
from campaigns.models import (
    Brand,
    Campaign,
    CampaignStatus,
    Package,
)
from campaigns.services.funding import campaign_budget_account
from campaigns.services.landing import landing_cache_clear
from campaigns.services.refusals import CampaignError, campaign_launch_problems, launch_problems_refuse
from campaigns.services.rules import PACKAGE_RULES, rule_write
from joyback.money import currency_check

TRANSITIONS = {
    CampaignStatus.DRAFT: {CampaignStatus.LIVE, CampaignStatus.ENDED},
    CampaignStatus.LIVE: {CampaignStatus.PAUSED, CampaignStatus.ENDED},
    CampaignStatus.PAUSED: {CampaignStatus.LIVE, CampaignStatus.ENDED},
    CampaignStatus.ENDED: set(),
}


def _free_campaign_slug(name: str) -> str:
    base = slugify(name)[:50] or "campaign"
    slug, n = base, 1
    while Campaign.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug


def campaign_create(
    *,
    brand: Brand,
    name: str,
    package: str,
    currency: str,
    countries: list[str],
    languages: list[str],
    headline: str = "",
    description: str = "",
    texts: dict | None = None,
    disclosure_text: str = "",
    starts_at=None,
    ends_at=None,
    per_identity_period_cap: int | None = None,
    per_identity_period_days: int | None = None,
    share_requires_purchase: bool = False,
    slug: str = "",
) -> Campaign:
    currency_check(currency)
    if starts_at and ends_at and ends_at <= starts_at:
        raise CampaignError(gettext("The campaign must end after it starts."))
    with transaction.atomic(durable=True):
        campaign = Campaign.objects.create(
            brand=brand,
            name=name,
            slug=slug or _free_campaign_slug(name),
            package=Package(package),
            currency=currency,
            countries=sorted(set(countries)),
            languages=list(dict.fromkeys(languages)),
            headline=headline,
            description=description,
            texts=texts or {},
            # Empty means the standard wording, shown in the visitor's language.
            disclosure_text=disclosure_text,
            starts_at=starts_at,
            ends_at=ends_at,
            per_identity_period_cap=per_identity_period_cap,
            per_identity_period_days=per_identity_period_days or 30,
            share_requires_purchase=share_requires_purchase,
        )
        campaign_budget_account(campaign=campaign)
        for position, rule in enumerate(PACKAGE_RULES[package]):
            rule_write(campaign=campaign, position=position, **rule)
        campaign_launch_problems(campaign=campaign)  # a draft: its problems are shown, not refused
    return campaign


def campaign_lock(campaign: Campaign) -> Campaign:
    return Campaign.objects.select_for_update().get(pk=campaign.pk)


def campaign_transition(*, campaign: Campaign, to: str) -> Campaign:
    to = CampaignStatus(to)
    with transaction.atomic(durable=True):
        locked = campaign_lock(campaign)
        if to not in TRANSITIONS[CampaignStatus(locked.status)]:
            raise CampaignError(
                gettext("A %(current)s campaign cannot become %(target)s.")
                % {"current": locked.get_status_display().lower(), "target": to.label.lower()}
            )
        if to == CampaignStatus.LIVE:
            _campaign_ready_check(locked)
            launch_problems_refuse(locked, launching=True)
        locked.status = to
        locked.status_changed_at = timezone.now()
        locked.save(update_fields=["status", "status_changed_at"])
        transaction.on_commit(lambda: landing_cache_clear(campaign=locked))
    return locked


def _campaign_ready_check(campaign: Campaign) -> None:
    cheapest = campaign.rules.aggregate(cheapest=Min("reward_amount"))["cheapest"]
    if cheapest is None:
        raise CampaignError(gettext("Add at least one rewarded action before going live."))
    if campaign.ends_at and campaign.ends_at <= timezone.now():
        raise CampaignError(gettext("The campaign's end date has passed."))
    if not campaign.countries:
        raise CampaignError(gettext("Choose at least one country the campaign serves."))
    if campaign_budget_account(campaign=campaign).available < cheapest:
        raise CampaignError(
            gettext("Fund the campaign's budget before going live: it cannot pay a single reward yet.")
        )
    # A consent that does not name the brand and the channel is no consent (the brand may have been
    # renamed since the wording was written).
    for wording in wordings_latest(campaign=campaign):
        problem = wording_problem(text=wording.text, brand=campaign.brand, channel=wording.channel)
        if problem:
            raise CampaignError(f"{problem} ({wording.get_channel_display()}, {wording.language})")


def campaign_update(*, campaign: Campaign, **fields) -> Campaign:
    """Change what a campaign says and where it runs; the money side is fixed once it has money."""
    if campaign.status == CampaignStatus.ENDED:
        raise CampaignError(gettext("An ended campaign cannot change."))
    if fields["currency"] != campaign.currency and campaign_budget_account(campaign=campaign).balance:
        raise CampaignError(gettext("The currency cannot change once the budget holds money."))
    if fields["package"] != campaign.package and campaign.status != CampaignStatus.DRAFT:
        raise CampaignError(gettext("The package can only change while the campaign is a draft."))
    currency_check(fields["currency"])
    fields["per_identity_period_days"] = fields.get("per_identity_period_days") or 30
    for name, value in fields.items():
        setattr(campaign, name, value)
    campaign.countries = sorted(set(campaign.countries))
    with transaction.atomic():
        campaign.save()
        if campaign.status != CampaignStatus.DRAFT:
            launch_problems_refuse(campaign)
    landing_cache_clear(campaign=campaign)
    return campaign
