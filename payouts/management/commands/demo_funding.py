"""Demo funding through the bank: the demo brand's transfer reaches the sandbox bank, the bank's
feed is fetched (as the schedule would), the deposit books, and the demo campaigns are funded
from it and go live.

Run after demo_seed (make run does); safe to run again.
"""

from django.core.management.base import BaseCommand

from campaigns.management.commands.demo_seed import DEMO_BRAND_SLUG, DEMO_CAMPAIGNS
from campaigns.models import Brand, Campaign, CampaignStatus
from campaigns.services import campaign_fund, campaign_transition
from payouts.models import LineKind, StatementLine
from payouts.reconciliation.references import brand_deposit_reference
from payouts.reconciliation.statement_import import bank_statements_fetch
from payouts.sandbox.files import incoming_transfer_issue

DEPOSIT = 10_000_00


class Command(BaseCommand):
    help = "Fund the demo brand by a transfer to the sandbox bank, read through the bank's feed (idempotent)."

    def handle(self, *args, **options):
        brand = Brand.objects.filter(slug=DEMO_BRAND_SLUG).first()
        if brand is None:
            self.stderr.write("Run demo_seed first.")
            return
        if not StatementLine.objects.filter(brand=brand, kind=LineKind.DEPOSIT).exists():
            reference = brand_deposit_reference(brand)
            incoming_transfer_issue(amount=DEPOSIT, remittance=f"Demo Brand top-up {reference}")
            bank_statements_fetch()
            self.stdout.write(f"  the bank received 10000.00 EUR with reference {reference}")
        for slug, *_ in DEMO_CAMPAIGNS:
            campaign = Campaign.objects.filter(slug=slug, status=CampaignStatus.DRAFT).first()
            if campaign is None:
                continue
            campaign_fund(campaign=campaign, amount=1_000_00, idempotency_key=f"demo-fund:{slug}")
            campaign_transition(campaign=campaign, to=CampaignStatus.LIVE)
        self.stdout.write(self.style.SUCCESS("Demo funded through the sandbox bank's feed."))
