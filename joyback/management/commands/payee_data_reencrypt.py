"""Moves every encrypted column to the newest PAYEE_ENCRYPTION_KEYS key, so the older keys can go.

In batches of short transactions, by primary key; a row already under the newest key is skipped, so
an interrupted run is simply started again. Each value is written only if it is still the one read
(compare and set), so a row the application changes meanwhile is never overwritten with old data.
`--check` writes nothing and exits non-zero while any value still needs an older key.
"""

from django.apps import apps
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from joyback.crypto import EncryptedTextField, reencrypted
from joyback.sql import encrypted_column_swap, encrypted_columns_batch


def encrypted_columns() -> list[tuple[type, list[str]]]:
    found = []
    for model in apps.get_models():
        columns = [f.column for f in model._meta.concrete_fields if isinstance(f, EncryptedTextField)]
        if columns and not model._meta.proxy:
            found.append((model, columns))
    return found


class Command(BaseCommand):
    help = "Re-encrypt payee data under the newest PAYEE_ENCRYPTION_KEYS key, in resumable batches."

    def add_arguments(self, parser):
        parser.add_argument("--batch-size", type=int, default=500)
        parser.add_argument("--check", action="store_true", help="Only count values under older keys.")

    def handle(self, *args, batch_size, check, **options):
        stale_total = 0
        for model, columns in encrypted_columns():
            stale_total += self._model(model, columns, batch_size=batch_size, check=check)
        if check and stale_total:
            raise CommandError(f"{stale_total} values still need an older key: run without --check")
        verb = "need re-encryption" if check else "re-encrypted"
        self.stdout.write(self.style.SUCCESS(f"done: {stale_total} values {verb}"))

    def _model(self, model, columns, *, batch_size, check) -> int:
        label, total = model._meta.label, model._default_manager.count()
        after, seen, stale = None, 0, 0
        while rows := encrypted_columns_batch(model, columns, after=after, size=batch_size):
            with transaction.atomic():
                for pk, *values in rows:
                    for column, old in zip(columns, values, strict=True):
                        new = reencrypted(old) if old else None
                        if new is not None:
                            stale += 1
                            if not check:
                                encrypted_column_swap(model, column, pk=pk, old=old, new=new)
            after, seen = rows[-1][0], seen + len(rows)
            self.stdout.write(f"{label}: {seen}/{total} rows read, {stale} values under older keys")
        return stale
