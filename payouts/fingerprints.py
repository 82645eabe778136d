"""Duplicate-detection fingerprints of payee accounts, recomputed when PAYEE_FINGERPRINT_KEY changes.

Also run by a migration with its historical model, so it takes the model as an argument and reads
nothing else of the app.
"""

from collections.abc import Callable

from django.db import transaction

from joyback.crypto import fingerprint
from joyback.emails import email_canonical
from payouts.bank_accounts import BankAccount, account_from_stored


def payee_fingerprints(
    *, account: BankAccount | None, email: str | None, phone: str | None
) -> dict[str, str]:
    return {
        # Details erased for good match nobody's (payouts.privacy empties this column too).
        "account_fingerprint": fingerprint(account.identity) if account is not None else "",
        # One mailbox written several ways (a +tag, Gmail's dots, upper case) is one person.
        "email_fingerprint": fingerprint(email_canonical(email)) if email else "",
        "phone_fingerprint": fingerprint(phone) if phone else "",
    }


def payee_fingerprints_recompute(
    *, model, batch_size: int = 500, progress: Callable[[int, int], None] | None = None
) -> int:
    """Every payee account's fingerprints under the current key, one short transaction per batch
    (never one long one over the table); returns how many rows changed. Rows whose fingerprints
    are already right are not written, so a rerun after an interruption picks up where it was."""
    last, seen, changed = 0, 0, 0
    while True:
        rows = list(model.objects.filter(pk__gt=last).order_by("pk")[:batch_size])
        if not rows:
            return changed
        with transaction.atomic():
            for row in rows:
                # A migration's historical model reads the column as text: the stored JSON.
                account = account_from_stored(row.account) if isinstance(row.account, str) else row.account
                wanted = payee_fingerprints(account=account, email=row.email, phone=row.phone)
                if any(getattr(row, field) != value for field, value in wanted.items()):
                    model.objects.filter(pk=row.pk).update(**wanted)
                    changed += 1
        last, seen = rows[-1].pk, seen + len(rows)
        if progress:
            progress(seen, changed)
