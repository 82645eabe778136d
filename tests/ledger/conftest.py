import pytest

from joyback.ledger.models import AccountKind
from joyback.ledger.services import account_get_or_create, platform_bank


@pytest.fixture
def bank(db):
    return platform_bank(currency="EUR")


@pytest.fixture
def funding(db):
    return account_get_or_create(
        kind=AccountKind.BRAND_FUNDING, currency="EUR", brand_id=1, name="Alpaca funding"
    )


@pytest.fixture
def budget(db):
    return account_get_or_create(
        kind=AccountKind.CAMPAIGN_BUDGET,
        currency="EUR",
        brand_id=1,
        subject="campaign:1",
        name="Summer budget",
    )


@pytest.fixture
def payable(db):
    return account_get_or_create(
        kind=AccountKind.PARTICIPANT_PAYABLE,
        currency="EUR",
        brand_id=1,
        subject="participant:1",
        name="Pat payable",
    )
