"""The bank's last word on a payout: settled, rejected or returned, each booked once."""

from django.db import transaction
from django.utils import timezone

from joyback.api.webhooks.delivery import webhook_event_emit
from joyback.ledger.models import AccountKind, Transaction
from joyback.ledger.selectors import account_find
from joyback.ledger.services import transaction_reverse, transfer_post
from payouts.models import PayeeAccount, Payout
from payouts.models.payouts import PayoutStatus
from payouts.notifications import payouts_notify
from payouts.submission.states import (
    PAYEE_DATA_CODES,
    SENT,
    payout_in_transit_account,
    payout_platform_bank,
    payout_transition,
)
from verification.models import Participant
from verification.services.participants import participant_payable_account
from verification.services.rewards import participant_payout_due


def _settlement_post(payout: Payout) -> None:
    """The money left the platform's bank: in transit -> bank, once per payout."""
    transfer_post(
        source=payout_in_transit_account(brand_id=payout.brand_id, currency=payout.currency),
        destination=payout_platform_bank(currency=payout.currency, brand_id=payout.brand_id),
        amount=payout.amount,
        reason="payout_settled",
        idempotency_key=f"payout-settled:{payout.pk}",
        reference=f"payout:{payout.end_to_end_id}",
    )


def payout_settle(*, payout: Payout, bank_reference: str = "") -> Payout:
    with transaction.atomic(durable=True):
        # First, as payout_for_participant takes it: a reward's payout task that found this payout
        # still open has released it, so its money is in the balance read below; one that comes
        # later finds this payout settled and pays the reward itself.
        person = Participant.objects.select_for_update().get(pk=payout.participant_id)
        if not payout_transition(
            payout,
            to=PayoutStatus.SETTLED,
            allowed_from=SENT,
            settled_at=timezone.now(),
            next_check_at=None,
            psp_reference=bank_reference or payout.psp_reference,
        ):
            return payout
        _settlement_post(payout)
        payouts_notify(payouts=[payout], kind="settled")
        payout_event_emit(payout, "payout.settled")
        owed = account_find(
            kind=AccountKind.PARTICIPANT_PAYABLE,
            currency=payout.currency,
            subject=person.ledger_subject,
            brand_id=person.brand_id,
        )
        # Left while this payout was open (one at a time): it goes next.
        if owed is not None and owed.balance > 0:
            participant_payout_due(participant_id=person.pk)
    return payout


def payout_reject(*, payout: Payout, reason_code: str, detail: str = "") -> Payout:
    """The bank refused it: the money goes back to what the person is owed."""
    with transaction.atomic(durable=True):
        if not payout_transition(
            payout,
            to=PayoutStatus.REJECTED,
            allowed_from=SENT,
            reason_code=reason_code,
            detail=detail,
            next_check_at=None,
        ):
            return payout
        transaction_reverse(
            original=Transaction.objects.get(pk=payout.ledger_transaction_id),
            reason="payout_rejected",
            idempotency_key=f"payout-rejected:{payout.pk}",
        )
        _after_failure(payout, reason_code)
        payout_event_emit(payout, "payout.rejected")
    return payout


def payout_return(*, payout: Payout, reason_code: str, detail: str = "") -> Payout:
    """Paid, then sent back by the payee's bank (days later, perhaps): owed again, details to fix."""
    with transaction.atomic(durable=True):
        if payout.status != PayoutStatus.SETTLED and payout.status in SENT:
            # A return can overtake the settlement report; book the settlement first.
            payout_settle_locked = payout_transition(
                payout,
                to=PayoutStatus.SETTLED,
                allowed_from=SENT,
                settled_at=timezone.now(),
                next_check_at=None,
            )
            if payout_settle_locked:
                _settlement_post(payout)
                payout_event_emit(payout, "payout.settled")
        if not payout_transition(
            payout,
            to=PayoutStatus.RETURNED,
            allowed_from=[PayoutStatus.SETTLED],
            reason_code=reason_code,
            detail=detail,
        ):
            return payout
        transfer_post(
            source=payout_platform_bank(currency=payout.currency, brand_id=payout.brand_id),
            destination=participant_payable_account(participant=payout.participant, currency=payout.currency),
            amount=payout.amount,
            reason="payout_returned",
            idempotency_key=f"payout-returned:{payout.pk}",
            reference=f"payout:{payout.end_to_end_id}",
        )
        _after_failure(payout, reason_code)
        payout_event_emit(payout, "payout.returned")
    return payout


def payout_event_emit(payout: Payout, event_type: str, *, endpoints=None) -> None:
    """The brand's webhook, in the transition's transaction; never the payee's details. A batch
    passes the brand's enabled endpoints it read once for all its payouts."""
    webhook_event_emit(
        brand_id=payout.brand_id,
        type=event_type,
        endpoints=endpoints,
        data={
            "payout_id": payout.pk,
            "participant_id": payout.participant_id,
            "status": payout.status,
            "amount": payout.amount,
            "currency": payout.currency,
            "reason_code": payout.reason_code,
            "end_to_end_id": payout.end_to_end_id,
            "manual": payout.manual,
            "settled_at": payout.settled_at.isoformat() if payout.settled_at else None,
        },
    )


def _after_failure(payout: Payout, reason_code: str) -> None:
    if reason_code in PAYEE_DATA_CODES:
        PayeeAccount.objects.filter(pk=payout.payee_id, unusable_code="").update(unusable_code=reason_code)
        payouts_notify(payouts=[payout], kind="fix_details")
    else:
        payouts_notify(payouts=[payout], kind="delayed")
