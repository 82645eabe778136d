"""Demo payouts: a few people of the demo brand, paid through the sandbox bank with each outcome.

Run after demo_seed (make run does); safe to run again.
"""

import time

from django.conf import settings
from django.core.management.base import BaseCommand

from campaigns.models import Brand, Campaign
from payouts.models import Payout
from payouts.payees.services import payee_account_save, payee_onboard
from payouts.pipeline import payouts_due_process
from payouts.rails import iban_check
from payouts.submission.sweeps import payouts_sweep
from verification.services.participants import identity_attach, participant_create
from verification.services.rewards import action_reward

# Name, sandbox IBAN. The last four digits choose the bank's answer (see the README); the digits
# before them (0888) are the demo's own, so no IBAN here is one a visitor types from the form's
# placeholder or the README's table, which would flag the visitor for sharing a demo person's account.
PEOPLE = [
    ("Lena Fischer", "DE40370400440888013000"),  # settles at once
    ("Marco Rossi", "DE35370400440888019104"),  # settles, then comes back: account closed
    ("Ana Núñez", "DE03370400440888019001"),  # refused: account number not valid
    ("Jonas Weber", "DE67370400440888019401"),  # the bank knows a slightly different name
    ("Sofia Costa", "DE62370400440888019200"),  # the bank's answer is lost: unknown, then checked
]


class Command(BaseCommand):
    help = "Pay a few demo people through the sandbox bank, one per outcome (idempotent)."

    def handle(self, *args, **options):
        brand = Brand.objects.filter(slug="demo").first()
        campaign = Campaign.objects.filter(slug="demo-all-in-one").first()
        if brand is None or campaign is None:
            self.stderr.write("Run demo_seed first.")
            return
        if Payout.objects.filter(brand=brand).exists():
            self.stdout.write("Demo payouts exist.")
            return
        login = campaign.rules.get(trigger="tiktok_login")
        for index, (name, iban) in enumerate(PEOPLE):
            person = participant_create(brand=brand)
            identity = identity_attach(
                participant=person, provider="tiktok", subject=f"demo-payee-{index}", display_name=name
            )
            action_reward(rule=login, identity=identity)
            payee = payee_account_save(
                participant=person,
                name=name,
                email=f"demo-payee-{index}@demo.localhost",
                phone="",
                bank_account=iban_check(iban),
                currency="EUR",
                consent_version="demo",
                onboard=False,
            )
            # The workers may not run yet: do at once, in order, what they would do (the name
            # check marks the person due; the standing worker's batch pays them).
            payee_onboard(payee_id=payee.pk)
        time.sleep(settings.PAYOUT_GATHER_MS / 1000)  # the batch waits this long for more people
        while payouts_due_process():
            pass
        payouts_sweep()
        count = Payout.objects.filter(brand=brand).count()
        self.stdout.write(self.style.SUCCESS(f"Demo payouts ready ({count}): /brands/demo/payouts/"))
