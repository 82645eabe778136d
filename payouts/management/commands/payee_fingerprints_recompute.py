"""Recomputes the payee accounts' duplicate-detection fingerprints after PAYEE_FINGERPRINT_KEY changed."""

from django.core.management.base import BaseCommand

from payouts.fingerprints import payee_fingerprints_recompute
from payouts.models import PayeeAccount


class Command(BaseCommand):
    help = "Recompute payee fingerprints under PAYEE_FINGERPRINT_KEY, in batches (safe to rerun)."

    def add_arguments(self, parser):
        parser.add_argument("--batch-size", type=int, default=500)

    def handle(self, *args, batch_size, **options):
        total = PayeeAccount.objects.count()

        def progress(seen, changed):
            self.stdout.write(f"payee accounts: {seen}/{total} read, {changed} changed")

        changed = payee_fingerprints_recompute(model=PayeeAccount, batch_size=batch_size, progress=progress)
        self.stdout.write(self.style.SUCCESS(f"done: {changed} of {total} payee accounts changed"))
