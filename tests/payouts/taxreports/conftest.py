import json

import pytest
from django.utils import timezone

from payouts.models import TaxProfile
from tests.conftest import rewarded_in_browser
from tests.payouts.conftest import IBANS, payee_details
from verification.models import ActionClaim

PROFILES = {
    "DE": dict(
        legal_name="Jürgen Groß",
        tin="86095742719",
        tin_kind="de_idnr",
        birth_date="1990-04-01",
        address={"line1": "Leopoldstraße 7", "postal_code": "80802", "city": "München", "country": "DE"},
        us_status="w8ben",
        language="de",
    ),
    "GB": dict(
        legal_name="Amy O'Brien",
        tin="AB123456C",
        tin_kind="gb_nino",
        birth_date="1988-07-09",
        address={"line1": "1 High St", "postal_code": "N1 9GU", "city": "London", "country": "GB"},
        us_status="w8ben",
        language="en",
    ),
}


@pytest.fixture
def operator(settings):
    """The platform operator as production would name it (the sandbox has its own defaults)."""
    settings.TAX_OPERATOR_TIN = "DE123456789"
    settings.INVOICE_ISSUER_NAME = "JoyBack GmbH"
    settings.INVOICE_ISSUER_ADDRESS = "Torstraße 1, 10119 Berlin"
    settings.PLATFORM_COUNTRY = "DE"
    settings.TAX_HMRC_OPERATOR_ID = "XEDPI2078675698"
    settings.TAX_US_EIN = "12-3456789"
    settings.TAX_US_TCC = "12ABC"
    settings.TAX_US_ADDRESS = "1 Market St; San Francisco; CA; 94105"
    settings.TAX_CONTACT = "Rita Staff; +1 415 555 0100; tax@joyback.example"


def tax_profile_give(person, country):
    data = PROFILES[country]
    return TaxProfile.objects.create(
        participant=person,
        brand_id=person.brand_id,
        legal_name=data["legal_name"],
        tin=data["tin"],
        tin_kind=data["tin_kind"],
        tin_country=country,
        birth_date=data["birth_date"],
        address=json.dumps(data["address"]),
        residence_country=country,
        us_status=data["us_status"],
        certified_at=timezone.now(),
        certification_version="2026-1",
        language=data["language"],
    )


def service_reward_paid(
    client, campaign, capture, *, subject, country="DE", profile=True, iban=IBANS["settle"]
):
    """A person rewarded for a personal service (the class a commissioned video is booked under,
    campaigns.tax), who gives their tax details and bank details and is paid by the sandbox bank."""
    person = rewarded_in_browser(client, campaign, subject=subject)
    if profile:
        ActionClaim.objects.filter(participant=person).update(tax_class="service", tax_country=country)
        tax_profile_give(person, country)
    with capture(execute=True):
        payee_details(client, campaign, iban=iban, name=PROFILES[country]["legal_name"])
    if not profile:
        # Paid without being asked (a payout holds for missing details only since the claim flow
        # asks them), and read as a service afterwards: the report must still show the person.
        ActionClaim.objects.filter(participant=person).update(tax_class="service", tax_country=country)
    return person
