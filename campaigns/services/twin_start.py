"""A developer's first test key comes with something to report purchases to: the brand's test twin
gets a live cashback campaign on play money, so the quickstart's first purchase earns cashback at
once instead of being refused no_campaign (docs/quickstart.md)."""

from django.conf import settings
from django.utils.module_loading import import_string
from django.utils.translation import gettext

from campaigns.models import Brand, Campaign, CampaignStatus, Package
from campaigns.services.campaigns import campaign_create, campaign_transition
from campaigns.services.funding import campaign_fund

# Play money from the sandbox bank's test account: enough for the quickstart and a few hundred more.
TWIN_CASHBACK_BUDGET = 1_000_00


def twin_cashback_campaign_ensure(*, brand: Brand) -> Campaign | None:
    """The twin's live cashback campaign, made and funded with play money if it has none; None for a
    live brand (live money is never made up) or a twin whose currency the sandbox bank does not keep."""
    if brand.livemode or brand.default_currency != "EUR":
        return None
    found = Campaign.objects.filter(brand=brand, package=Package.CASHBACK, status=CampaignStatus.LIVE).first()
    if found is not None:
        return found
    import_string(settings.SANDBOX_TEST_FUNDS)(brand=brand, amount=TWIN_CASHBACK_BUDGET)
    campaign = campaign_create(
        brand=brand,
        name=gettext("Test cashback"),
        package=Package.CASHBACK,
        currency="EUR",
        countries=[brand.country or "DE"],
        languages=["en"],
    )
    campaign_fund(campaign=campaign, amount=TWIN_CASHBACK_BUDGET)
    return campaign_transition(campaign=campaign, to=CampaignStatus.LIVE)
