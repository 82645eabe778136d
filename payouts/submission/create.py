"""A payout made from what a person is owed, with the money moved from their payable to in transit."""

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from joyback.ledger.models import AccountKind
from joyback.ledger.selectors import account_find
from joyback.ledger.services import Posting, accounts_lock, posting_post
from joyback.queue import enqueue_on_commit
from payouts.models import PayeeAccount, Payout, PayoutEvent
from payouts.models.payees import Rail
from payouts.models.payouts import OPEN_STATUSES, PayoutScheme, PayoutStatus
from payouts.selectors import manual_payout_unpaid
from payouts.submission.crash import crash_point
from payouts.submission.states import payout_event_record, payout_in_transit_account, scheme_for
from payouts.submission.submit import payout_send, payout_submit
from payouts.vop import payee_unpayable_mark, vop_current
from verification.models import ClaimStatus, Participant
from verification.services.participants import participant_payable_account


def _latest_unpaid_payout(participant: Participant, currency: str) -> Payout | None:
    return (
        Payout.objects.filter(
            participant=participant,
            currency=currency,
            status__in=[PayoutStatus.REJECTED, PayoutStatus.RETURNED],
            repaid_by__isnull=True,
        )
        .order_by("-pk")
        .first()
    )


def payout_for_participant(*, participant_id: int, currency: str, send_now: bool = False) -> Payout | None:
    """Pay out what the ledger owes the person, less what they owe back, in one payout.

    Nothing happens without current, usable bank details, or while another payout of theirs is
    still on its way (its resolution calls this again for whatever arrived meanwhile).

    send_now (a task worker, where waiting for the PSP is fine): the payout is sent by this call
    once it has committed, not by a queued task, which saves a trip through the queue between an
    approval and the bank; a crash in between leaves it to the sweep (next_check_at).
    """
    participant = Participant.objects.select_related("brand").get(pk=participant_id)
    if participant.brand.verified_at is None:
        # Staff withdrew the brand's verification: what people are owed stays owed (the sweep pays
        # it once the brand is verified again), nothing leaves meanwhile.
        return None
    payable = participant_payable_account(participant=participant, currency=currency)
    with transaction.atomic(durable=True):
        # The same lock payee_account_save takes: details cannot change under a payout being made.
        Participant.objects.select_for_update().filter(pk=participant.pk).first()
        crash_point("payout_locked")
        payee = PayeeAccount.objects.filter(participant=participant, replaced_at__isnull=True).first()
        if payee is None or payee.unusable_code or payee.currency != currency:
            return None
        if payee_unpayable_mark(payee):
            return None  # the bank would need what the details lack: the person is asked for it
        if participant.claims.filter(status=ClaimStatus.NEEDS_REVIEW).exists():
            return None  # flagged: nothing leaves until a person decides (the decision calls again)
        if manual_payout_unpaid(participant.pk).exists():
            return None  # a returned manual payout is paid again by hand, within the manual controls
        if Payout.objects.filter(
            participant=participant, currency=currency, manual=False, status__in=OPEN_STATUSES
        ).exists():
            return None
        receivable = account_find(
            kind=AccountKind.PARTICIPANT_RECEIVABLE,
            currency=currency,
            subject=participant.ledger_subject,
            brand_id=participant.brand_id,
        )
        locked = accounts_lock(account_ids=[payable.pk] + ([receivable.pk] if receivable else []))
        gross = locked[payable.pk].balance
        owed_back = locked[receivable.pk].balance if receivable else 0
        if gross <= 0:
            return None
        netted = min(gross, owed_back)
        amount = gross - netted
        if amount <= 0:
            posting_post(
                posting=Posting(
                    reason="clawback_netted",
                    legs=((locked[payable.pk], netted), (locked[receivable.pk], -netted)),
                    reference=participant.ledger_subject,
                    description="Rewards netted against a clawback",
                )
            )
            return None
        payout = Payout.objects.create(
            brand_id=participant.brand_id,
            participant=participant,
            payee=payee,
            amount=amount,
            currency=currency,
            scheme=scheme_for(payee),
            repays=_latest_unpaid_payout(participant, currency),
            next_check_at=timezone.now() + timedelta(seconds=settings.PAYOUT_STALE_SECONDS),
        )
        legs = [
            (locked[payable.pk], gross),
            (payout_in_transit_account(brand_id=participant.brand_id, currency=currency), -amount),
        ]
        if netted:
            legs.append((locked[receivable.pk], -netted))
        posted = posting_post(
            posting=Posting(
                reason="payout",
                legs=tuple(legs),
                idempotency_key=f"payout:{payout.pk}",
                reference=f"payout:{payout.end_to_end_id}",
                description=f"Payout {payout.end_to_end_id}"
                + (f", {netted} netted against clawbacks" if netted else ""),
            )
        )
        payout.ledger_transaction_id = posted.pk
        detail = f"netted {netted}" if netted else ""
        claimed = send_now and _claim_at_creation(payout, detail=detail)
        if not claimed:
            Payout.objects.filter(pk=payout.pk).update(ledger_transaction_id=posted.pk)
            payout_event_record(payout, from_status="", detail=detail)
        crash_point("payout_posted")
        if not send_now:
            enqueue_on_commit("payouts.tasks.payout_submit_task", payout.pk)
    if claimed:
        return payout_send(payout)
    return payout_submit(payout_id=payout.pk) if send_now else payout


def _claim_at_creation(payout: Payout, *, detail: str) -> bool:
    """A worker that made the payout and already has a settled name check takes it through
    payee_verified to submitted in the creation's own transaction: the same steps, each recorded,
    in one commit instead of three."""
    if payout.scheme == PayoutScheme.SEPA:
        return False  # batch transfers wait for the next file
    check = vop_current(payee=payout.payee) if payout.payee.rail == Rail.SEPA else None
    if payout.payee.rail == Rail.SEPA and (check is None or not check.settled):
        return False
    now = timezone.now()
    fields = {
        "status": PayoutStatus.SUBMITTED,
        "submissions": 1,
        "submitted_at": now,
        "next_check_at": now + timedelta(seconds=settings.PAYOUT_STALE_SECONDS),
        "ledger_transaction_id": payout.ledger_transaction_id,
    }
    Payout.objects.filter(pk=payout.pk, status=PayoutStatus.CREATED).update(**fields)
    for name, value in fields.items():
        setattr(payout, name, value)
    vop = (
        f"VoP {check.result}{' / ' + check.choice if check.choice else ''}" if check else "VoP not applicable"
    )
    steps = [("", PayoutStatus.CREATED, detail), (PayoutStatus.CREATED, PayoutStatus.PAYEE_VERIFIED, vop)]
    steps.append((PayoutStatus.PAYEE_VERIFIED, PayoutStatus.SUBMITTED, ""))
    PayoutEvent.objects.bulk_create(
        PayoutEvent(
            payout=payout, brand_id=payout.brand_id, from_status=before, to_status=after, detail=text, at=now
        )
        for before, after, text in steps
    )
    return True
