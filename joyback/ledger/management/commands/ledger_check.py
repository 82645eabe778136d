from django.core.management.base import BaseCommand, CommandError

from joyback.ledger.models import Account, Transaction
from joyback.ledger.selectors import ledger_drift


class Command(BaseCommand):
    help = "Recompute every balance and hold total from the entries; exit non-zero on any drift."

    def handle(self, *args, **options):
        drift = ledger_drift()
        for row in drift:
            self.stderr.write(f"DRIFT {row}")
        if drift:
            raise CommandError(f"{len(drift)} drift(s) found")
        self.stdout.write(
            f"ledger ok: {Account.objects.count()} accounts, "
            f"{Transaction.objects.count()} transactions, no drift"
        )
