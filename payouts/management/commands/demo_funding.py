"""Demo funding through the payment provider: the demo brand is onboarded at the sandbox bank
(Adyen's wire format: its own legal entity, account holder and balance account with a virtual
IBAN), gives whatever documents the sandbox's hosted onboarding page still asks, and Adyen's signed
account holder webhook allows its capabilities; the sandbox bank sends 10,000 EUR to its virtual
IBAN, Adyen's signed webhooks report the transfer (received, booked), the money stays on the
brand's own balance account, the standing worker's pass books it, and the demo campaigns are funded
from it and go live.

Run after demo_seed (make run does); safe to run again.
"""

from django.core.management.base import BaseCommand

from campaigns.management.commands.demo_seed import DEMO_BRAND_SLUG, DEMO_CAMPAIGNS
from campaigns.models import Brand, Campaign, CampaignStatus
from campaigns.services.campaigns import campaign_transition
from campaigns.services.funding import campaign_fund
from payouts.funding.services import virtual_account_request, virtual_accounts_open
from payouts.models import ProviderDeposit, ProviderOnboarding
from payouts.models.funding import VirtualAccountStatus
from payouts.providers.test_mode_bank import deposit_simulate, documents_give, funding_webhooks_deliver
from payouts.submission.webhooks import transfer_events_process

DEPOSIT = 10_000_00


class Command(BaseCommand):
    help = "Fund the demo brand through its virtual IBAN, booked from the provider's webhooks (idempotent)."

    def handle(self, *args, **options):
        brand = Brand.objects.filter(slug=DEMO_BRAND_SLUG).first()
        if brand is None:
            self.stderr.write("Run demo_seed first.")
            return
        problem = brand_funded_at_provider(brand=brand, currency="EUR", amount=DEPOSIT, stdout=self.stdout)
        if problem:
            self.stderr.write(problem)
            return
        for slug, *_ in DEMO_CAMPAIGNS:
            campaign = Campaign.objects.filter(slug=slug, status=CampaignStatus.DRAFT).first()
            if campaign is None:
                continue
            campaign_fund(campaign=campaign, amount=1_000_00, idempotency_key=f"demo-fund:{slug}")
            campaign_transition(campaign=campaign, to=CampaignStatus.LIVE)
        self.stdout.write(
            self.style.SUCCESS("Demo funded through its virtual IBAN and the provider's webhooks.")
        )


def brand_funded_at_provider(*, brand, currency: str, amount: int, stdout) -> str:
    """A verified demo brand onboarded at the sandbox provider and sent `amount` on its virtual IBAN
    in `currency`, booked from the provider's webhooks; once per brand and currency. What stopped
    it, in words, or ""."""
    if ProviderDeposit.objects.filter(brand=brand, currency=currency).exists():
        return ""
    account = virtual_account_request(brand=brand, currency=currency)
    virtual_accounts_open(ids=[account.pk])  # what the standing worker would do next
    account.refresh_from_db()
    if account.status != VirtualAccountStatus.OPEN:
        return f"The virtual account could not be opened: {account.error}"
    onboarding = ProviderOnboarding.objects.get(brand=brand)
    if not onboarding.allowed:
        # The brand gives the register extract on the (sandbox's) hosted onboarding page;
        # Adyen's signed account holder webhook then allows the capabilities.
        documents_give(legal_entity_id=onboarding.legal_entity_id)
        funding_webhooks_deliver()
        transfer_events_process()
        onboarding.refresh_from_db()
        if not onboarding.allowed:
            return f"The provider has not allowed {brand.name}: {onboarding.status}"
        stdout.write(
            f"  the provider verified {brand.legal_name or brand.name} ({onboarding.account_holder_id})"
        )
    deposit_simulate(iban=account.iban, amount=amount, payer_name=brand.legal_name or brand.name)
    funding_webhooks_deliver()  # the deposit's webhooks: received, booked; it stays there
    transfer_events_process()
    stdout.write(
        f"  the provider booked {amount / 100:.2f} {currency} sent to the virtual IBAN {account.iban_grouped}"
    )
    return ""
