"""Issue the platform's invoices now: every live brand's fees of the months before this one not
invoiced yet (the monthly schedule does the same; a second run issues nothing twice)."""

from django.core.management.base import BaseCommand

from campaigns.services.invoices import invoices_issue


class Command(BaseCommand):
    help = "Issue the monthly invoices due: one per live brand, month and currency with fees."

    def handle(self, *args, **options):
        issued = invoices_issue()
        for invoice in issued:
            self.stdout.write(
                f"{invoice.number} {invoice.brand} {invoice.period_start:%Y-%m} "
                f"{invoice.total} {invoice.currency}"
            )
        self.stdout.write(f"{len(issued)} invoice(s) issued")
