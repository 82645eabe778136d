"""Demo funding through the payment provider: the demo brand's virtual IBAN is opened at the
sandbox bank (Adyen's wire format), the sandbox bank sends 10,000 EUR to it, Adyen's signed
webhooks report the transfer (received, booked) and the sweep on to the platform's account, the
standing worker's pass books them, and the demo campaigns are funded from it and go live.

Run after demo_seed (make run does); safe to run again.
"""

from django.core.management.base import BaseCommand

from campaigns.management.commands.demo_seed import DEMO_BRAND_SLUG, DEMO_CAMPAIGNS
from campaigns.models import Brand, Campaign, CampaignStatus
from campaigns.services.campaigns import campaign_transition
from campaigns.services.funding import campaign_fund
from payouts.funding.services import virtual_account_request, virtual_accounts_open
from payouts.models import ProviderDeposit
from payouts.models.funding import VirtualAccountStatus
from payouts.providers.test_mode_bank import deposit_simulate, funding_webhooks_deliver
from payouts.submission.webhooks import transfer_events_process

DEPOSIT = 10_000_00


class Command(BaseCommand):
    help = "Fund the demo brand through its virtual IBAN, booked from the provider's webhooks (idempotent)."

    def handle(self, *args, **options):
        brand = Brand.objects.filter(slug=DEMO_BRAND_SLUG).first()
        if brand is None:
            self.stderr.write("Run demo_seed first.")
            return
        if not ProviderDeposit.objects.filter(brand=brand).exists():
            account = virtual_account_request(brand=brand, currency="EUR")
            virtual_accounts_open(ids=[account.pk])  # what the standing worker would do next
            account.refresh_from_db()
            if account.status != VirtualAccountStatus.OPEN:
                self.stderr.write(f"The virtual account could not be opened: {account.error}")
                return
            deposit_simulate(iban=account.iban, amount=DEPOSIT, payer_name=brand.legal_name or brand.name)
            for _pass in range(2):  # the deposit's webhooks, then the sweep's
                funding_webhooks_deliver()
                transfer_events_process()
            self.stdout.write(
                f"  the provider booked 10000.00 EUR sent to the virtual IBAN {account.iban_grouped}"
            )
        for slug, *_ in DEMO_CAMPAIGNS:
            campaign = Campaign.objects.filter(slug=slug, status=CampaignStatus.DRAFT).first()
            if campaign is None:
                continue
            campaign_fund(campaign=campaign, amount=1_000_00, idempotency_key=f"demo-fund:{slug}")
            campaign_transition(campaign=campaign, to=CampaignStatus.LIVE)
        self.stdout.write(
            self.style.SUCCESS("Demo funded through its virtual IBAN and the provider's webhooks.")
        )
