"""make run's demo: a year of demo activity makes tax reports that pass the official schema and
reconcile with the ledger, a person in each of Germany, Spain and the UK reported where they live,
and the US creator, paid in dollars by the demo's US campaign, the payee of the 1099-NEC, with the
sandbox's own platform operator (no setting given)."""

from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone

from campaigns.limits import euro_cents_in
from campaigns.models import Brand, Campaign, CampaignStatus, Package
from campaigns.services.campaigns import campaign_create, campaign_transition
from campaigns.services.funding import campaign_fund
from campaigns.services.rules import rule_save
from payouts.models import ProviderDeposit, ProviderOnboarding, TaxReport
from payouts.taxreports.dpi import dpi_validate
from verification.services.participants import identity_attach, participant_create
from verification.services.refusals import ClaimRefused
from verification.services.rewards import action_reward

pytestmark = pytest.mark.django_db


def test_the_demo_year_reports_validate_and_reconcile():
    call_command("demo_seed")
    call_command("demo_funding")
    call_command("demo_tax")
    call_command("demo_tax")  # again: nothing twice

    year = timezone.now().year
    reports = {report.jurisdiction: report for report in TaxReport.objects.filter(year=year)}
    assert set(reports) == {"dac7", "uk", "us"}
    for report in reports.values():
        assert report.totals == report.ledger_totals, report.jurisdiction
    dac7, uk = reports["dac7"], reports["uk"]
    assert dpi_validate(dac7.file.encode()) == [] and dpi_validate(uk.file.encode()) == []
    assert sorted(row.seller.count("Jonas") + row.seller.count("Lucía") for row in dac7.rows.all()) == [1, 1]
    assert "O'Brien" in uk.rows.get().seller
    assert uk.totals == {"EUR": uk.rows.get().total} and uk.totals["EUR"] > 0
    us = reports["us"]
    payee = us.rows.get()
    assert "Zhang" in payee.seller and payee.currency == "USD" and payee.missing == ""
    assert us.totals == {"USD": 2_100_00}
    payees = [line for line in us.file.split("\r\n") if line.startswith("B")]
    assert len(payees) == 1 and payees[0][54:66] == "000000210000"


def test_after_the_demo_a_person_paid_in_euros_earns_no_more_than_the_default_allowance():
    """The US creator's $2,100 is allowed by the demo's US company, in its own dollars: the demo
    brand's allowance, which its euro campaigns count against, stays the default one."""
    call_command("demo", stdout=StringIO())

    demo, us = Brand.objects.get(slug="demo"), Brand.objects.get(slug="demo-us")
    assert demo.person_allowance == euro_cents_in(amount=settings.PERSON_ALLOWANCE_DEFAULT, currency="EUR")
    assert Campaign.objects.get(slug="demo-tiktok-us").brand == us
    assert us.default_currency == "USD" and us.person_allowance >= 2_100_00 and us.verified
    assert us.memberships.get(role="owner").user.email == "owner@demo-us.localhost"
    assert ProviderOnboarding.objects.get(brand=us).allowed
    assert ProviderDeposit.objects.get(brand=us).currency == "USD"

    # A euro campaign of the demo brand paying what the US video paid, in euros: refused past the
    # default allowance.
    campaign = campaign_create(
        brand=demo,
        name="Commissioned videos",
        slug="demo-commissioned",
        package=Package.TIKTOK_ONLY,
        currency="EUR",
        countries=["DE"],
        languages=["en"],
    )
    video = campaign.rules.get(trigger="ugc_share")
    rule_save(
        campaign=campaign,
        trigger="ugc_share",
        reward_amount=2_000_00,
        verification_mode=video.verification_mode,
        window_hours=video.window_hours,
    )
    campaign_fund(campaign=campaign, amount=3_000_00, idempotency_key="test-fund:demo-commissioned")
    campaign = campaign_transition(campaign=campaign, to=CampaignStatus.LIVE)
    person = participant_create(brand=demo)
    identity = identity_attach(
        participant=person, provider="tiktok", subject="eur-creator", display_name="Eva"
    )
    action_reward(rule=campaign.rules.get(trigger="tiktok_login"), identity=identity)
    with pytest.raises(ClaimRefused) as refused:
        action_reward(rule=campaign.rules.get(trigger="ugc_share"), identity=identity)
    assert refused.value.code == "allowance"
