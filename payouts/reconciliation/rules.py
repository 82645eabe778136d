"""What reconciliation refuses, the staff check its channels share, and the payout states it reads."""

from payouts.models.payouts import PayoutStatus

SENT = (PayoutStatus.SUBMITTED, PayoutStatus.ACCEPTED, PayoutStatus.UNKNOWN)


# A payout the bank has booked is one of these; a debit line for any other is a contradiction.
BOOKED = (PayoutStatus.SETTLED, PayoutStatus.RETURNED)


class ReconciliationRefused(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def staff_permission_check(user, permission: str, message: str) -> None:
    if user is None or not user.is_active or not user.is_staff or not user.has_perm(permission):
        raise ReconciliationRefused(message)
