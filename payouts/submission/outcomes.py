"""The bank's last word on payouts: settled (for N payouts at once: the pipeline's batches and the
single payout alike), rejected or returned, each booked once."""

from django.db import transaction
from django.utils import timezone

from joyback.api.selectors import webhook_endpoints_enabled
from joyback.api.webhooks.delivery import webhook_event_emit
from joyback.ledger.models import AccountKind, Transaction
from joyback.ledger.selectors import accounts_of_kind
from joyback.ledger.services import postings_post, transaction_reverse, transfer, transfer_post
from payouts import sql
from payouts.models import PayeeAccount, Payout, PayoutEvent
from payouts.models.payouts import PayoutStatus
from payouts.models.transitions import PAYOUT
from payouts.notifications import payouts_notify
from payouts.submission.states import (
    PAYEE_DATA_CODES,
    SENT,
    payout_in_transit_account,
    payout_source_account,
    payout_transition,
)
from verification.models import Participant
from verification.services.participants import participant_payable_account
from verification.services.rewards import participants_payout_due


def payouts_settle(settled: list[tuple[Payout, str]]) -> list[Payout]:
    """The money left the platform's bank, for each (payout, the bank's reference): settled in one
    transaction, one statement and one ledger batch however many there are; each payout once,
    only from the states a settlement leaves (a webhook may have got there first). The payouts
    that moved, updated in place."""
    with transaction.atomic(durable=True):
        moved = _settle_locked(settled, now=timezone.now())
        if not moved:
            return []
        payouts_notify(payouts=moved, kind="settled")
        # Each brand's endpoints read once for the batch, not again for each of its payouts.
        endpoints = webhook_endpoints_enabled(brand_ids={p.brand_id for p in moved})
        for payout in moved:
            if endpoints[payout.brand_id]:
                payout_event_emit(payout, "payout.settled", endpoints=endpoints[payout.brand_id])
        # What became owed while these payouts were open goes next (one payout at a time).
        owed = (
            accounts_of_kind(kind=AccountKind.PARTICIPANT_PAYABLE)
            .filter(subject__in=[f"participant:{p.participant_id}" for p in moved], balance__gt=0)
            .values_list("subject", flat=True)
        )
        again = [int(subject.removeprefix("participant:")) for subject in owed]
        if again:
            participants_payout_due(participant_ids=again)
    return moved


def payout_settle(*, payout: Payout, bank_reference: str = "") -> Payout:
    payouts_settle([(payout, bank_reference)])
    return payout


def _settle_locked(settled: list[tuple[Payout, str]], *, now) -> list[Payout]:
    by_id = {payout.pk: (payout, reference) for payout, reference in settled}
    # The people first, as payout_for_participant and the batches take them: a reward's payout
    # that found one of these payouts still open has released its person, so its money is in the
    # balance read after; one that comes later finds the payout settled and pays the reward itself.
    list(
        Participant.objects.select_for_update(no_key=True)
        .filter(pk__in=sorted({payout.participant_id for payout, _reference in settled}))
        .order_by("pk")
        .values("pk")
    )
    ids = sorted(by_id)
    before = sql.payouts_settle(
        ids=ids, references=[by_id[pk][1] or "" for pk in ids], step=PAYOUT.step("settle"), now=now
    )
    if not before:
        return []
    moved = []
    for pk in sorted(before):
        payout, reference = by_id[pk]
        payout.status, payout.reason_code, payout.settled_at = PayoutStatus.SETTLED, "", now
        payout.next_check_at = None
        payout.psp_reference = reference or payout.psp_reference
        moved.append(payout)
    PayoutEvent.objects.bulk_create(
        PayoutEvent(payout=p, brand_id=p.brand_id, from_status=before[p.pk], to_status=p.status, at=now)
        for p in moved
    )
    in_transit = {
        (brand_id, currency): payout_in_transit_account(brand_id=brand_id, currency=currency)
        for brand_id, currency in {(p.brand_id, p.currency) for p in moved}
    }
    # The platform bank of each payout's mode: a test brand's payouts settle against the sandbox's.
    banks = {
        (brand_id, currency): payout_source_account(currency=currency, brand_id=brand_id)
        for brand_id, currency in in_transit
    }
    results = postings_post(
        postings=[
            transfer(
                source=in_transit[(p.brand_id, p.currency)],
                destination=banks[(p.brand_id, p.currency)],
                amount=p.amount,
                reason="payout_settled",
                idempotency_key=f"payout-settled:{p.pk}",
                reference=f"payout:{p.end_to_end_id}",
            )
            for p in moved
        ],
        savepoint=False,  # a failure rolls the whole settlement back
    )
    failed = next((result.error for result in results if result.error), None)
    if failed is not None:
        raise failed
    return moved


def payout_reject(*, payout: Payout, reason_code: str, detail: str = "") -> Payout:
    """The bank refused it: the money goes back to what the person is owed."""
    with transaction.atomic(durable=True):
        if not payout_transition(
            payout,
            "reject",
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
        if payout.status in SENT and _settle_locked([(payout, "")], now=timezone.now()):
            # A return can overtake the settlement report; the settlement is booked first.
            payout_event_emit(payout, "payout.settled")
        if not payout_transition(
            payout,
            "return",
            reason_code=reason_code,
            detail=detail,
        ):
            return payout
        transfer_post(
            source=payout_source_account(currency=payout.currency, brand_id=payout.brand_id),
            destination=participant_payable_account(participant=payout.participant, currency=payout.currency),
            amount=payout.amount,
            reason="payout_returned",
            idempotency_key=f"payout-returned:{payout.pk}",
            reference=f"payout:{payout.end_to_end_id}",
        )
        _after_failure(payout, reason_code)
        payout_event_emit(payout, "payout.returned")
    return payout


# A payout cancelled before it left because the person replaced the details it was made to.
DETAILS_REPLACED = "REPLACED"


def payout_cancel_locked(payout: Payout, *, detail: str, reason_code: str = "", actor=None) -> bool:
    """Cancel a payout that has not left, in the caller's transaction: the step, and the payout's
    posting reversed (what the person is owed is theirs again, a manual payout's money goes back to
    the brand's funding). False when it is no longer cancellable."""
    if not payout_transition(
        payout, "cancel", reason_code=reason_code, detail=detail, actor=actor, next_check_at=None
    ):
        return False
    transaction_reverse(
        original=Transaction.objects.get(pk=payout.ledger_transaction_id),
        reason="payout_cancelled",
        idempotency_key=f"payout-cancelled:{payout.pk}",
    )
    return True


def payouts_to_replaced_details_cancel(*, participant_id: int) -> list[Payout]:
    """In the caller's transaction, holding the person's lock (the one payee_account_save takes):
    their payouts that have not left and go to details no longer current are cancelled, never sent
    to the old account (which they may have closed). A reward's money is owed to them again and the
    person marked due, so one new payout goes to the details they confirmed last, after its own name
    check. A manual payout's money goes back to the brand's funding and is not made again: its
    approval was for the details it named, so paying others needs a new payout and its approvals."""
    payouts = Payout.objects.filter(
        participant_id=participant_id,
        status__in=PAYOUT.step("cancel").sources,
        payee__replaced_at__isnull=False,
    )
    cancelled = [
        payout
        for payout in payouts
        if payout_cancel_locked(payout, reason_code=DETAILS_REPLACED, detail="bank details replaced")
    ]
    if any(not payout.manual for payout in cancelled):
        participants_payout_due(participant_ids=[participant_id])
    return cancelled


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
