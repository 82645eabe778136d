import pytest

from campaigns.services.campaigns import campaign_create
from campaigns.services.funding import campaign_fund
from campaigns.services.rules import rule_save
from tests.conftest import fund


def funded_draft(brand, name: str):
    """The brand's draft for Germany, in English, with €100 in its budget: what its rules say is
    checked at launch."""
    fund(brand, 100_00, "EUR", reference=f"DRAFT-{name}".upper())
    campaign = campaign_create(
        brand=brand, name=name, package="tiktok_only", currency="EUR", countries=["DE"], languages=["en"]
    )
    campaign_fund(campaign=campaign, amount=100_00)
    return campaign


@pytest.fixture
def draft(alpaca):
    return funded_draft(alpaca, "Lint")


def share_instructions(campaign, text, **fields):
    return rule_save(
        campaign=campaign,
        trigger="ugc_share",
        reward_amount=5_00,
        verification_mode="engagement",
        window_hours=72,
        instructions=text,
        **fields,
    )


# Lawful, yet the patterns refuse it for sure (a rating condition): only the brand's request puts it
# before JoyBack's team.
RATING_IS_YOURS = (
    "If you rate our coffee out of ten, the number is yours: you don't need to give us a ten or five "
    "stars, and the fee is the same whatever score you give."
)
