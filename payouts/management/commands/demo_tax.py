"""Demo tax reports: four creators of the demo brand (Germany, Spain, the UK, the US) paid for a
commissioned video (a personal service, reported) after the TikTok login it needs (a
promotional gift, not reported), and the year's reports made from the ledger, checked and reconciled.

Run after demo_seed and demo_funding (make run does); safe to run again. The people's tax details
are saved as the claim flow saves them (payouts.tax.services.tax_profile_save).
"""

import datetime
import time

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.utils import timezone

from campaigns.models import Brand, Campaign
from payouts.payees.services import payee_account_save, payee_onboard
from payouts.pipeline import payouts_due_process
from payouts.rails import iban_check
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
        "DE20370400440888413000",
        "zh-hans",
    ),
]


class Command(BaseCommand):
    help = "Pay four demo creators for a video and make the year's tax reports (idempotent)."

    def handle(self, *args, **options):
        brand = Brand.objects.filter(slug="demo").first()
        campaign = Campaign.objects.filter(slug="demo-tiktok").first()
        if brand is None or campaign is None:
            self.stderr.write("Run demo_seed first.")
            return
        if not Identity.objects.filter(subject__startswith="demo-creator-").exists():
            self._creators_pay(brand=brand, campaign=campaign)
        call_command("tax_reports", year=timezone.now().year, stdout=self.stdout, stderr=self.stderr)

    def _creators_pay(self, *, brand, campaign):
        login = campaign.rules.get(trigger="tiktok_login")
        video = campaign.rules.get(trigger="ugc_share")
        for index, (name, country, kind, tin, born, address, iban, language) in enumerate(CREATORS):
            person = participant_create(brand=brand)
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
                bank_account=iban_check(iban),
                currency="EUR",
                consent_version="demo",
                onboard=False,
            )
            payee_onboard(payee_id=payee.pk)
        time.sleep(settings.PAYOUT_GATHER_MS / 1000)
        while payouts_due_process():
            pass
        payouts_sweep()
