"""The licence a participant grants the brand with a share: versioned terms per campaign."""

from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext as _

from campaigns.models import Campaign, CampaignStatus, LicenceTerms
from campaigns.services.campaigns import campaign_lock
from campaigns.services.refusals import CampaignError

DURATION_MAX_DAYS = 5 * 365


def licence_terms_publish(
    *,
    campaign: Campaign,
    organic_reuse: bool,
    paid_ads: bool,
    duration_days: int,
    territories: list[str],
    created_by,
) -> LicenceTerms:
    """A new version of the campaign's licence: people sharing from now on grant it; grants made
    before keep the version they saw."""
    if campaign.status == CampaignStatus.ENDED:
        raise CampaignError(_("An ended campaign cannot change."))
    if not (organic_reuse or paid_ads):
        raise CampaignError(_("A licence allows organic reuse, paid ads, or both."))
    if not 1 <= duration_days <= DURATION_MAX_DAYS:
        raise CampaignError(_("A licence lasts between 1 day and 5 years."))
    codes = sorted({code.strip().upper() for code in territories if code.strip()})
    if any(len(code) != 2 or not code.isalpha() for code in codes):
        raise CampaignError(_("Territories are two-letter country codes, like DE or FR."))
    with transaction.atomic(durable=True):
        locked = campaign_lock(campaign)
        current = licence_terms_current(campaign=locked)
        if current and (
            current.organic_reuse,
            current.paid_ads,
            current.duration_days,
            current.territories,
        ) == (
            organic_reuse,
            paid_ads,
            duration_days,
            codes,
        ):
            return current
        version = (locked.licence_versions.aggregate(top=Max("version"))["top"] or 0) + 1
        return LicenceTerms.objects.create(
            campaign=locked,
            version=version,
            organic_reuse=organic_reuse,
            paid_ads=paid_ads,
            duration_days=duration_days,
            territories=codes,
            created_by=created_by,
        )


def licence_terms_current(*, campaign: Campaign) -> LicenceTerms | None:
    return LicenceTerms.objects.filter(campaign=campaign).order_by("-version").first()
