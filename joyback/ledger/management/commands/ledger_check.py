from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils.module_loading import import_string

from joyback.ledger.models import Account, Transaction
from joyback.ledger.selectors import ledger_drift


def external_problems() -> list[str]:
    """The ledger against the world: the bank's balance and alerts (LEDGER_EXTERNAL_CHECKS)."""
    problems = []
    for path in settings.LEDGER_EXTERNAL_CHECKS:
        problems += import_string(path)()
    return problems


class Command(BaseCommand):
    help = (
        "Recompute every balance and hold total from the entries, and compare the platform bank "
        "with the bank's statements; exit non-zero on any drift."
    )

    def handle(self, *args, **options):
        drift = ledger_drift()
        for row in drift:
            self.stderr.write(f"DRIFT {row}")
        bank = external_problems()
        for problem in bank:
            self.stderr.write(problem)
        if drift or bank:
            raise CommandError(f"{len(drift)} drift(s) in the ledger, {len(bank)} against the bank")
        self.stdout.write(
            f"ledger ok: {Account.objects.count()} accounts, "
            f"{Transaction.objects.count()} transactions, no drift, the bank agrees"
        )
