"""A brand's bank transfer booked to its funding balance, and its people told."""

from campaigns.services.funding import brand_deposit_record
from joyback.ledger.models import Transaction
from payouts.notifications import deposit_booked_notify


def brand_deposit_book(
    *, brand, amount: int, currency: str, bank_reference: str, receiving_account: str = ""
) -> Transaction:
    """brand_deposit_record, then the brand's owners and finance people told by mail, once per
    booking (a statement line booked again is the same transaction, and the same message key)."""
    posted = brand_deposit_record(
        brand=brand,
        amount=amount,
        currency=currency,
        bank_reference=bank_reference,
        receiving_account=receiving_account,
    )
    deposit_booked_notify(transaction_id=posted.pk, reference=bank_reference)
    return posted
