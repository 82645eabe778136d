"""Demo tax reports: three creators of the demo brand (Germany, Spain, the UK) and one of the demo's
US company paid for a commissioned video (a personal service, reported) after the TikTok login it
needs (a promotional gift, not reported), and the year's reports made from the ledger, checked and
reconciled.

The US creator is paid in dollars by the demo's US company, a brand of its own (demo_seed's
US_BRAND_SLUG, with its own owner), verified by staff, onboarded at the provider and funded the
way demo_funding funds the demo brand (a deposit to its USD virtual account, booked from the
provider's webhooks): a 1099-NEC is filed in dollars only. Its video pays a demo amount above the
1099's $2,000 threshold, labelled so on the campaign, standing for a year of commissioned videos:
the demo's 1099 then has a payee. The allowance that amount needs is the US brand's own: the demo
brand's euro campaigns keep the default one.

Run after demo_seed and demo_funding (make run does); safe to run again. The people's tax details
are saved as the claim flow saves them (payouts.tax.services.tax_profile_save).
"""

import datetime
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.utils import timezone

from campaigns.management.commands.demo_seed import (
    ADMIN_EMAIL,
    US_BRAND_SLUG,
    US_OWNER_EMAIL,
    demo_brand,
    user_get_or_create,
)
from campaigns.models import Brand, Campaign, CampaignStatus, Package
from campaigns.services.brands import brand_allowance_set
from campaigns.services.campaigns import campaign_create, campaign_transition
from campaigns.services.funding import campaign_fund
from campaigns.services.rules import rule_save
from payouts.management.commands.demo_funding import brand_funded_at_provider
from payouts.models import Payout
from payouts.payees.services import payee_account_save, payee_onboard
from payouts.pipeline import payouts_due_process
from payouts.rails import iban_check, us_account_check
from payouts.submission.submit import payout_status_check
from payouts.submission.sweeps import payouts_sweep
from payouts.tax.services import TaxDetails, tax_profile_save
from verification.models import Identity
from verification.services.participants import identity_attach, participant_create
from verification.services.rewards import action_reward

# Name, country, TIN kind and number, birth date, address, sandbox IBAN (each its own: a shared
# account is a fraud signal; the last four digits 3000 settle at once), language.
CREATORS = [
    (
        "Jonas Becker",
        "DE",
        "de_idnr",
        "86095742719",
        "1991-03-14",
        {"line1": "Kastanienallee 12", "postal_code": "10435", "city": "Berlin"},
        "DE35370400440888113000",
        "de",
    ),
    (
        "Lucía Fernández",
        "ES",
        "es_nif",
        "12345678Z",
        "1996-11-02",
        {"line1": "Calle de Alcalá 20", "postal_code": "28014", "city": "Madrid"},
        "DE30370400440888213000",
        "es",
    ),
    (
        "Amy O'Brien",
        "GB",
        "gb_nino",
        "AB123456C",
        "1988-07-09",
        {"line1": "1 High St", "postal_code": "N1 9GU", "city": "London"},
        "DE25370400440888313000",
        "en",
    ),
    (
        "Wei Zhang",
        "US",
        "us_ssn",
        "123456789",
        "1992-02-29",
        {"line1": "500 Congress Ave", "postal_code": "78701", "city": "Austin", "region": "TX"},
        # A US checking account (ACH): the sandbox settles any account number not in its magic list.
        ("011000015", "000888413000"),
        "zh-hans",
    ),
]


US_CAMPAIGN = "demo-tiktok-us"
# A demo amount, labelled on the campaign: one video standing for a year of commissioned videos,
# so the year's 1099-NEC (threshold $2,000 from 2026) has a payee.
US_VIDEO_REWARD = 2_100_00
US_DEPOSIT = 5_000_00


def us_brand(*, stdout) -> Brand | None:
    """The demo's US company: its owner signs up, staff verify it, the provider onboards it and it
    sends dollars to its own virtual IBAN, as the demo brand did with euros. None if the provider
    did not open its account."""
    admin = get_user_model().objects.get(email=ADMIN_EMAIL)
    owner = user_get_or_create(US_OWNER_EMAIL, first_name="Uma", last_name="Owner")
    brand = demo_brand(
        slug=US_BRAND_SLUG,
        name="Demo Brand US",
        owner=owner,
        currency="USD",
        legal=("Demo Brand US Inc.", "EIN 00-0000000", "US"),
        admin=admin,
    )
    problem = brand_funded_at_provider(brand=brand, currency="USD", amount=US_DEPOSIT, stdout=stdout)
    return None if problem else brand


def us_campaign(*, brand) -> Campaign:
    """The US brand's dollar campaign for US creators, funded from its USD virtual account."""
    campaign = Campaign.objects.filter(slug=US_CAMPAIGN).first()
    if campaign is not None:
        return campaign
    campaign = campaign_create(
        brand=brand,
        name="TikTok Creators US",
        slug=US_CAMPAIGN,
        package=Package.TIKTOK_ONLY,
        currency="USD",
        countries=["US"],
        languages=["en"],
        headline="Demo: one video paid $2,100, standing for a year of commissioned videos",
        description="Demo campaign: its video reward is a demo amount above the 1099-NEC's $2,000 threshold.",
    )
    video = campaign.rules.get(trigger="ugc_share")
    rule_save(
        campaign=campaign,
        trigger="ugc_share",
        reward_amount=US_VIDEO_REWARD,
        verification_mode=video.verification_mode,
        window_hours=video.window_hours,
    )
    campaign_fund(campaign=campaign, amount=US_DEPOSIT, idempotency_key=f"demo-fund:{US_CAMPAIGN}")
    # What one person may earn from a brand (a fraud cap, 100.00 by default) would refuse the demo
    # amount: the US brand allows it, as a brand commissioning such videos would. Its own
    # allowance, in its own dollars: the demo brand's euro campaigns keep theirs.
    needed = US_VIDEO_REWARD + campaign.rules.get(trigger="tiktok_login").reward_amount
    if brand.person_allowance is not None and brand.person_allowance < needed:
        brand_allowance_set(brand=brand, person_allowance=needed)
    return campaign_transition(campaign=campaign, to=CampaignStatus.LIVE)


class Command(BaseCommand):
    help = "Pay four demo creators for a video and make the year's tax reports (idempotent)."

    def handle(self, *args, **options):
        brand = Brand.objects.filter(slug="demo").first()
        campaign = Campaign.objects.filter(slug="demo-tiktok").first()
        if brand is None or campaign is None:
            self.stderr.write("Run demo_seed first.")
            return
        us = us_brand(stdout=self.stdout)
        if us is None:
            self.stderr.write("The demo's US brand could not be funded at the provider.")
            return
        dollars = us_campaign(brand=us)
        if not Identity.objects.filter(subject__startswith="demo-creator-").exists():
            self._creators_pay(campaigns={"EUR": campaign, "USD": dollars})
        call_command("tax_reports", year=timezone.now().year, stdout=self.stdout, stderr=self.stderr)

    def _creators_pay(self, *, campaigns):
        for index, (name, country, kind, tin, born, address, account, language) in enumerate(CREATORS):
            currency = "USD" if country == "US" else "EUR"
            campaign = campaigns[currency]
            login = campaign.rules.get(trigger="tiktok_login")
            video = campaign.rules.get(trigger="ugc_share")
            person = participant_create(brand=campaign.brand)
            identity = identity_attach(
                participant=person, provider="tiktok", subject=f"demo-creator-{index}", display_name=name
            )
            tax_profile_save(
                participant=person,
                details=TaxDetails(
                    legal_name=name,
                    birth_date=datetime.date.fromisoformat(born),
                    address=address | {"country": country},
                    residence_country=country,
                    tin=tin,
                    tin_kind=kind,
                    tin_country=country,
                    us_status="w9" if country == "US" else "w8ben",
                    language=language,
                ),
            )
            # The login first (a promotional gift: not reported), then the video it opens.
            action_reward(rule=login, identity=identity)
            action_reward(rule=video, identity=identity)
            payee = payee_account_save(
                participant=person,
                name=name,
                email=f"demo-creator-{index}@demo.localhost",
                phone="",
                bank_account=us_account_check(*account) if currency == "USD" else iban_check(account),
                currency=currency,
                consent_version="demo",
                onboard=False,
            )
            payee_onboard(payee_id=payee.pk)
        time.sleep(settings.PAYOUT_GATHER_MS / 1000)
        while payouts_due_process():
            pass
        payouts_sweep()
        # ACH books a day after it is accepted: the bank's answer when asked stands for that day.
        for payout_id in Payout.objects.filter(
            participant__identities__subject__startswith="demo-creator-", status="accepted"
        ).values_list("pk", flat=True):
            payout_status_check(payout_id=payout_id)
