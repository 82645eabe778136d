"""Demo fees: the brand's invoice for the month so far is issued (PDF and CSV on its finance page),
as the monthly schedule issues last month's, its VAT taken from the brand's funds; then the
platform's fee on the demo's rewards and the invoice's VAT move from the demo brand's own balance
account to the platform's (an internal transfer at the sandbox provider, booked in the ledger on
its word). Run last, after every step that rewards someone (make run does); safe to run again.
"""

from django.core.management.base import BaseCommand
from django.utils import timezone

from campaigns.management.commands.demo_seed import DEMO_BRAND_SLUG
from campaigns.models import Brand
from campaigns.services.invoices import invoice_issue
from payouts.fees import fee_transfers_send
from payouts.models import FeeTransfer
from payouts.providers.test_mode_bank import funding_webhooks_deliver
from payouts.submission.webhooks import transfer_events_process


class Command(BaseCommand):
    help = "Move the demo brand's fees to the platform and issue its invoice (idempotent)."

    def handle(self, *args, **options):
        brand = Brand.objects.filter(slug=DEMO_BRAND_SLUG).first()
        if brand is None:
            self.stderr.write("Run demo_seed first.")
            return
        invoice = invoice_issue(brand=brand, currency="EUR", period_start=timezone.localdate())
        fee_transfers_send()  # what the schedule payouts-fee-transfers does each minute
        funding_webhooks_deliver()  # the provider's transfer webhooks: received, authorised, booked
        transfer_events_process()
        moved = sum(FeeTransfer.objects.filter(brand=brand, status="booked").values_list("amount", flat=True))
        number = invoice.number if invoice is not None else "none yet"
        if invoice is not None:
            invoice.refresh_from_db()
            number = f"{number} (VAT {invoice.vat_state})"
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo fees and VAT moved to the platform ({moved / 100:.2f} EUR), invoice {number}: "
                f"/brands/{brand.slug}/finance/"
            )
        )
