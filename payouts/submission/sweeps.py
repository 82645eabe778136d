"""The sweep: payouts due for another try and people owed money without a payout."""

from django.db.models import CharField, Exists, OuterRef, Value
from django.db.models.functions import Cast, Concat
from django.utils import timezone

from joyback.ledger.models import AccountKind
from joyback.ledger.selectors import accounts_of_kind
from payouts.models import Payout
from payouts.models.payouts import PayoutStatus
from payouts.notifications import notifications_due, notifications_send
from payouts.providers.test_mode_bank import webhooks_deliver
from payouts.submission.create import payees_payable, payout_for_participant
from payouts.submission.states import SENT
from payouts.submission.submit import payout_status_check, payout_submit
from payouts.submission.webhooks import transfer_events_process


def payouts_due(*, now=None, limit: int = 200) -> list[tuple[int, str]]:
    now = now or timezone.now()
    return list(
        Payout.objects.filter(
            next_check_at__lte=now, status__in=[*SENT, PayoutStatus.CREATED, PayoutStatus.PAYEE_VERIFIED]
        )
        .order_by("next_check_at")
        .values_list("pk", "status")[:limit]
    )


def payouts_sweep(*, now=None) -> dict:
    """The standing worker pass: finish what a crash or a lost task left, ask about what is
    overdue, and read the bank's feed. Safe to run in several workers at once."""
    done = {"submitted": 0, "checked": 0, "events": 0}
    for payout_id, status in payouts_due(now=now):
        if status in (PayoutStatus.CREATED, PayoutStatus.PAYEE_VERIFIED):
            payout_submit(payout_id=payout_id)
            done["submitted"] += 1
        else:
            payout_status_check(payout_id=payout_id)
            done["checked"] += 1
    # The test-mode bank's webhooks, as the provider would send them (test-mode payouts' everywhere).
    webhooks_deliver()
    done["events"] = transfer_events_process()
    for participant_id, currency in participants_owed(limit=200):
        done["created"] = done.get("created", 0) + bool(
            payout_for_participant(participant_id=participant_id, currency=currency)
        )
    notifications_send(ids=notifications_due(now=now))
    return done


def participants_owed(*, limit: int) -> list[tuple[int, str]]:
    """People with usable bank details, money owed, no payout under way and not marked due: normally
    none, since every reward and every new payee marks the person due for the payout pipeline's
    batches; these are the ones a crash or a lost task left behind, and those a bank gave back.

    People marked due are the batches' (payouts.pipeline): a mark is always taken, by the standing
    worker or by the task cluster's standing-work sweep when none runs, and one a failed batch set
    for later (RETRY_AFTER) is taken then. Paying them here, one at a time with a queued task
    each, only raced the batches and made them wait behind the task queue."""
    subject = Concat(Value("participant:"), Cast("participant_id", CharField()))
    owed = accounts_of_kind(kind=AccountKind.PARTICIPANT_PAYABLE).filter(
        subject=OuterRef("subject"),
        currency=OuterRef("currency"),
        balance__gt=0,
    )
    return list(
        payees_payable()
        .filter(participant__brand__verified_at__isnull=False, participant__payout_due_at__isnull=True)
        # Waiting for their tax details: giving them marks the person due (payouts.tax).
        .filter(tax_details_missing=False)
        .annotate(subject=subject)
        .filter(Exists(owed))
        .values_list("participant_id", "currency")[:limit]
    )
