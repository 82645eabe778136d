"""Writing a campaign's consent wording: each change a new version, refused when it names neither
the brand nor the channel."""

from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext

from campaigns.consent import wording_problem
from campaigns.models import Campaign, CampaignStatus, ConsentChannel, ConsentWording
from campaigns.services.refusals import CampaignError

LANGUAGES = ("en", "de", "es", "zh-hans")


def consent_wording_save(
    *, campaign: Campaign, channel: str, language: str, text: str, user
) -> ConsentWording:
    """A new version of the wording for (channel, language); the versions before stay, as consents
    given under them name them."""
    text = " ".join(text.split())
    if channel not in ConsentChannel.values:
        raise CampaignError(gettext("Choose WhatsApp or email."))
    if language not in LANGUAGES:
        raise CampaignError(gettext("Choose one of the languages offered."))
    if not text:
        raise CampaignError(gettext("Write the consent wording."))
    if len(text) > 600:
        raise CampaignError(gettext("The consent wording is longer than 600 characters."))
    if campaign.status == CampaignStatus.ENDED:
        raise CampaignError(gettext("An ended campaign cannot change."))
    problem = wording_problem(text=text, brand=campaign.brand, channel=channel)
    if problem:
        raise CampaignError(problem)
    with transaction.atomic(durable=True):
        Campaign.objects.select_for_update().get(pk=campaign.pk)
        latest = ConsentWording.objects.filter(
            campaign=campaign, channel=channel, language=language
        ).aggregate(latest=Max("version"))["latest"]
        return ConsentWording.objects.create(
            campaign=campaign,
            brand_id=campaign.brand_id,
            channel=channel,
            language=language,
            version=(latest or 0) + 1,
            text=text,
            created_by=user,
        )
