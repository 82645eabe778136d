"""Approved rewards to the bank in batches: the payout pipeline the standing worker runs.

An approval marks the person due (verification.services.participant_payout_due: one column on
their row, indexed while set), instead of queueing a task per reward. Each pass of `manage.py work`
claims up to PAYOUT_BATCH_SIZE people due, clearing their marks in the statement that locks them
(FOR NO KEY UPDATE SKIP LOCKED, so workers racing each other take disjoint people), and, in one
transaction, makes their payouts, posts them to the ledger as one batch and claims as submitted
those whose name check is settled. Then it sends them to the provider concurrently (a small thread
pool, each thread with its kept httpx client) and applies the answers: the settlements in one more
transaction with one more ledger batch.

A pass costs nearly the same for one person as for dozens, so people due are gathered: a batch is
taken once its oldest mark has waited PAYOUT_GATHER_MS (or a full batch is due at once), and the
idle worker sleeps until then (joyback.queue.standing_work_wait) instead of paying people one or
two at a time as they trickle in.

Crash safety is the single payout's: a payout is committed as submitted before its request leaves,
so if the worker dies after that the sweep asks the provider about it (payout_status_check) and
sends again, with the same Idempotency-Key, only what the provider never received. A batch that
fails is rolled back whole and its people are paid one by one through the single-payout path.
"""

import contextlib
import logging
import threading
import time
from concurrent.futures import BrokenExecutor, ThreadPoolExecutor
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from joyback.api.selectors import webhook_endpoints_enabled
from joyback.ledger.models import AccountKind
from joyback.ledger.selectors import accounts_of_kind
from joyback.ledger.services import Posting, accounts_lock, postings_post, transfer
from joyback.queue import standing_work_ready
from payouts import psp, sql
from payouts.models import PayeeAccount, Payout, PayoutEvent, VopCheck
from payouts.models.payees import Rail
from payouts.models.payouts import OPEN_STATUSES, PayoutScheme, PayoutStatus
from payouts.notifications import payouts_notify
from payouts.reconciliation.bank_health import payouts_paused
from payouts.selectors import manual_payout_unpaid
from payouts.submission.crash import SimulatedCrash, crash_point
from payouts.submission.create import payout_for_participant
from payouts.submission.outcomes import payout_event_emit
from payouts.submission.states import (
    INSTANT_UNREACHABLE_CODES,
    SENT,
    payout_in_transit_account,
    payout_platform_bank,
    payout_transition,
    scheme_for,
)
from payouts.submission.submit import payout_payment_order, payout_status_apply, payout_submit
from payouts.vop import payee_unpayable_mark
from verification.models import ActionClaim, ClaimStatus, Participant
from verification.services.rewards import PAYOUTS_DUE

logger = logging.getLogger(__name__)

# After a failure outside the batch (a person whose payout raised), look again this much later,
# not on every pass.
RETRY_AFTER = timedelta(seconds=60)

# How long a busy worker trusts its last reading of payouts_paused.
PAUSED_READ_EVERY = 1.0

_pool: ThreadPoolExecutor | None = None
_paused_read: tuple[float, bool] | None = None
_idle = True


SENDER_NAME = "payout-send"


def _sender(*, fresh: bool = False) -> ThreadPoolExecutor:
    """The process's senders: made on first use (after a fork), kept, so each thread keeps its
    provider client and its connections (payouts.psp.psp_client) from one batch to the next.
    fresh=True replaces a broken executor (one whose thread failed to start refuses all work for
    the rest of its life)."""
    global _pool
    if fresh and _pool is not None:
        _pool.shutdown(wait=False)
        _pool = None
    if _pool is None:
        _pool = ThreadPoolExecutor(
            max_workers=settings.PAYOUT_SEND_THREADS,
            thread_name_prefix=SENDER_NAME,
            initializer=_sender_start,
        )
    return _pool


def _sender_start() -> None:
    """The thread's name for the operating system too (top -H, /proc/<pid>/task/*/comm show where
    a worker's CPU goes). Nothing here may touch the database: a failure in an initializer breaks
    the executor for good."""
    try:
        import ctypes  # deferred: only naming threads needs it, and a failure must not escape

        libc = ctypes.CDLL(None)
        libc.prctl(15, SENDER_NAME.encode(), 0, 0, 0)  # PR_SET_NAME
    except (OSError, AttributeError):
        pass


def payouts_senders_stop() -> None:
    """The senders closed, each thread's database connection with it (a kept connection outlives
    its thread otherwise): for a worker's orderly exit, and tests."""
    global _pool
    pool, _pool = _pool, None
    if pool is None:
        return
    # One closing job per thread: each waits for the others, so no thread takes two.
    together = threading.Barrier(settings.PAYOUT_SEND_THREADS)

    def close() -> None:
        with contextlib.suppress(threading.BrokenBarrierError):
            together.wait(timeout=5)
        connection.close()

    with contextlib.suppress(BrokenExecutor, RuntimeError):
        for _ in range(settings.PAYOUT_SEND_THREADS):
            pool.submit(close)
    pool.shutdown(wait=True)


SANDBOX_BANK = "joyback-sandbox-bank"


def _send(order: psp.PaymentOrder):
    """_submit in a sender thread. In the sandbox the bank answers in this thread, on its own
    database connection, named on connect so the bank's share of the database shows apart.
    With Django's pool the connection is given back after each send: a sender holding one between
    batches would starve the process's other threads. A direct connection is kept (a new backend
    per payment would cost more than the payment), and dropped only once it has failed."""
    try:
        if settings.SANDBOX and connection.connection is None:
            sql.application_name_set(SANDBOX_BANK)
        return _submit(order)
    finally:
        if "pool" in connection.settings_dict["OPTIONS"]:
            if settings.SANDBOX and connection.connection is not None:
                # The pool hands this connection to any thread next: not under the bank's name.
                with contextlib.suppress(DatabaseError):
                    sql.application_name_reset()
            connection.close()
        elif connection.errors_occurred:
            # Not close_old_connections(): it would make the next send ask the server whether the
            # connection still works (CONN_HEALTH_CHECKS), one more round trip per payment.
            connection.close_if_unusable_or_obsolete()


def payouts_gather() -> tuple[float, int]:
    """How the people due are gathered into batches: taken once the oldest mark has waited
    PAYOUT_GATHER_MS, or at once when a full batch is due. A pass costs about as much for one
    person as for a few dozen, so at a moderate rate a short wait fills it (joyback.queue)."""
    return settings.PAYOUT_GATHER_MS / 1000, settings.PAYOUT_BATCH_SIZE


def payouts_due_process(*, limit: int | None = None) -> int:
    """One tick: claim up to `limit` people due, pay them; how many people were claimed."""
    limit = limit or settings.PAYOUT_BATCH_SIZE
    try:
        claimed, to_send, to_continue = _batch_make(limit=limit)
    except SimulatedCrash:
        raise
    except Exception:
        logger.exception("a payout batch failed and was rolled back; paying its people one by one")
        return _one_by_one(limit=limit)
    if to_send:
        _batch_send(to_send)
    for payout_id in to_continue:
        # A name check to ask for, a batch SEPA file to wait for, payouts on hold: the single
        # payout's path, as before.
        try:
            payout_submit(payout_id=payout_id)
        except Exception:
            logger.exception("payout %s could not be submitted; the sweep tries again", payout_id)
    return claimed


def _batch_make(*, limit: int) -> tuple[int, list[Payout], list[int]]:
    """The payouts of up to `limit` people due, made, posted and (where they may go at once) claimed
    as submitted, in one transaction: (people claimed, payouts to send, payouts left to the single
    path)."""
    global _idle
    now = timezone.now()
    if _idle and not standing_work_ready(PAYOUTS_DUE, now=now):
        # The idle worker's usual answer, and a batch still filling (PAYOUT_GATHER_MS): one
        # statement, no transaction.
        return 0, [], []
    paused = _paused()
    with transaction.atomic(durable=True):
        people = sql.participants_due_claim(now=now, limit=limit)
        _idle = len(people) < limit  # a full batch: more are likely waiting, no need to ask first
        if not people:
            return 0, [], []
        crash_point("batch_claimed")
        # A brand whose verification staff withdrew pays nothing (the sweep pays it once verified).
        brand_of = {pk: brand_id for pk, brand_id, verified_at in people if verified_at is not None}
        # Flagged people wait for a person's decision (which marks them again), and one payout at
        # a time: a person with one under way is marked again when it settles.
        in_review = ActionClaim.objects.filter(
            participant_id=OuterRef("participant_id"), status=ClaimStatus.NEEDS_REVIEW
        )
        under_way = Payout.objects.filter(
            participant_id=OuterRef("participant_id"),
            currency=OuterRef("currency"),
            manual=False,
            status__in=OPEN_STATUSES,
        )
        payees = {
            payee.participant_id: payee
            for payee in PayeeAccount.objects.filter(
                participant_id__in=brand_of, replaced_at__isnull=True, unusable_code=""
            ).filter(
                ~Exists(in_review),
                ~Exists(under_way),
                # A returned manual payout is paid again by hand, within the manual controls.
                ~Exists(manual_payout_unpaid(OuterRef("participant_id"))),
            )
        }
        # Details the bank would refuse (stored before a name's Latin spelling or an international
        # transfer's address was asked for) are marked, and their person asked, instead of paid.
        payees = {key: payee for key, payee in payees.items() if not payee_unpayable_mark(payee)}
        if not payees:
            return len(people), [], []
        accounts = _accounts_lock(payees, brand_of)
        payouts, postings, netted_of = _payouts_plan(payees, brand_of, accounts, now=now, paused=paused)
        if payouts:
            Payout.objects.bulk_create(payouts)
        for payout in payouts:
            postings.append(_payout_posting(payout, accounts, netted=netted_of[payout.participant_id]))
        # A failure rolls the whole batch back: no savepoint to fall back to.
        results = postings_post(postings=postings, savepoint=False) if postings else []
        failed = next((result.error for result in results if result.error), None)
        if failed is not None:
            raise failed
        posted = {
            result.posting.idempotency_key: result.transaction.pk
            for result in results
            if result.posting.idempotency_key
        }
        for payout in payouts:
            payout.ledger_transaction_id = posted[f"payout:{payout.pk}"]
        if payouts:
            Payout.objects.bulk_update(payouts, ["ledger_transaction_id"])
            PayoutEvent.objects.bulk_create(
                event
                for payout in payouts
                for event in _events(payout, netted_of[payout.participant_id], now)
            )
        crash_point("batch_posted")
    crash_point("batch_committed")
    to_send = [p for p in payouts if p.status == PayoutStatus.SUBMITTED]
    return len(people), to_send, [p.pk for p in payouts if p.status != PayoutStatus.SUBMITTED]


def _paused() -> bool:
    """payouts_paused, read at most once every PAUSED_READ_EVERY by a busy worker (a pass every
    few hundred ms would otherwise ask each time). A drift found or cleared is acted on that much
    later, which the daily statement's reconciliation that finds it does not notice. Not kept in
    a test's transaction, where each test opens or clears its own drift."""
    global _paused_read
    if connection.in_atomic_block:
        return payouts_paused()
    now = time.monotonic()
    if _paused_read is None or now - _paused_read[0] > PAUSED_READ_EVERY:
        _paused_read = (now, payouts_paused())
    return _paused_read[1]


def _accounts_lock(payees: dict, brand_of: dict) -> dict:
    """The people's payable and receivable accounts and their brands' in-transit accounts, locked
    together in id order (the ledger's lock order) and read fresh: (kind, subject, currency,
    brand id) -> account."""
    in_transit = {
        payout_in_transit_account(brand_id=brand_id, currency=currency).pk
        for brand_id, currency in {(brand_of[pk], payee.currency) for pk, payee in payees.items()}
    }
    subjects = [f"participant:{pk}" for pk in payees]
    brands = set(brand_of.values())
    owed = accounts_of_kind(kind=AccountKind.PARTICIPANT_PAYABLE) | accounts_of_kind(
        kind=AccountKind.PARTICIPANT_RECEIVABLE
    )
    owed = owed.filter(subject__in=subjects, brand_id__in=brands).values_list("pk", flat=True)
    locked = accounts_lock(account_ids=[*in_transit, *owed]).values()
    return {(a.kind, a.subject, a.currency, a.brand_id): a for a in locked}


def _payouts_plan(payees: dict, brand_of: dict, accounts: dict, *, now, paused: bool):
    """The unsaved payouts (and the postings of people whose rewards only net a clawback)."""
    vops = _vop_latest(payees.values())
    last = {
        payee_id: (status, code)
        for payee_id, status, code in Payout.objects.filter(payee_id__in=[p.pk for p in payees.values()])
        .order_by("payee_id", "-created_at")
        .distinct("payee_id")
        .values_list("payee_id", "status", "reason_code")
    }
    repays = {
        (participant_id, currency): pk
        for participant_id, currency, pk in Payout.objects.filter(
            participant_id__in=payees,
            status__in=[PayoutStatus.REJECTED, PayoutStatus.RETURNED],
            repaid_by__isnull=True,
        )
        .order_by("participant_id", "currency", "-pk")
        .distinct("participant_id", "currency")
        .values_list("participant_id", "currency", "pk")
    }
    stale = now + timedelta(seconds=settings.PAYOUT_STALE_SECONDS)
    payouts, postings, netted_of = [], [], {}
    for pk, payee in sorted(payees.items()):
        subject, brand_id = f"participant:{pk}", brand_of[pk]
        payable = accounts.get((AccountKind.PARTICIPANT_PAYABLE, subject, payee.currency, brand_id))
        receivable = accounts.get((AccountKind.PARTICIPANT_RECEIVABLE, subject, payee.currency, brand_id))
        gross = payable.balance if payable else 0
        if gross <= 0:
            continue
        netted = min(gross, receivable.balance if receivable else 0)
        amount = gross - netted
        if amount <= 0:
            postings.append(
                Posting(
                    reason="clawback_netted",
                    legs=((payable, netted), (receivable, -netted)),
                    reference=subject,
                    description="Rewards netted against a clawback",
                )
            )
            continue
        payee._vop_current = vops.get(payee.pk)
        scheme = _scheme(payee, last.get(payee.pk))
        check = payee._vop_current
        settled_check = payee.rail != Rail.SEPA or (check is not None and check.settled)
        at_once = scheme != PayoutScheme.SEPA and settled_check and not paused
        netted_of[pk] = netted
        payouts.append(
            Payout(
                brand_id=brand_id,
                participant_id=pk,
                payee=payee,
                amount=amount,
                currency=payee.currency,
                scheme=scheme,
                repays_id=repays.get((pk, payee.currency)),
                status=PayoutStatus.SUBMITTED if at_once else PayoutStatus.CREATED,
                submissions=1 if at_once else 0,
                submitted_at=now if at_once else None,
                next_check_at=stale,
            )
        )
    return payouts, postings, netted_of


def _scheme(payee: PayeeAccount, last) -> str:
    """payouts.submission.states.scheme_for with the payee's last payout read for the whole batch at once."""
    if payee.rail != Rail.SEPA:
        return scheme_for(payee)  # asks the database for SEPA payees only
    unreachable = last is not None and last[0] == PayoutStatus.REJECTED
    unreachable = unreachable and last[1] in INSTANT_UNREACHABLE_CODES
    if settings.PAYOUT_SEPA_MODE == "instant" and not unreachable:
        return PayoutScheme.SEPA_INSTANT
    return PayoutScheme.SEPA


def _vop_latest(payees) -> dict:
    """payee id -> its latest name check (payouts.selectors.vop_latest for many payees)."""
    return {
        check.payee_id: check
        for check in VopCheck.objects.filter(payee_id__in=[p.pk for p in payees if p.rail == Rail.SEPA])
        .order_by("payee_id", "-checked_at", "-pk")
        .distinct("payee_id")
    }


def _payout_posting(payout: Payout, accounts: dict, *, netted: int) -> Posting:
    subject = f"participant:{payout.participant_id}"
    key = (subject, payout.currency, payout.brand_id)
    payable = accounts[(AccountKind.PARTICIPANT_PAYABLE, *key)]
    in_transit = accounts.get((AccountKind.PAYOUT_IN_TRANSIT, "", payout.currency, payout.brand_id))
    in_transit = in_transit or payout_in_transit_account(brand_id=payout.brand_id, currency=payout.currency)
    legs = [(payable, payout.amount + netted), (in_transit, -payout.amount)]
    if netted:
        legs.append((accounts[(AccountKind.PARTICIPANT_RECEIVABLE, *key)], -netted))
    return Posting(
        reason="payout",
        legs=tuple(legs),
        idempotency_key=f"payout:{payout.pk}",
        reference=f"payout:{payout.end_to_end_id}",
        description=f"Payout {payout.end_to_end_id}"
        + (f", {netted} netted against clawbacks" if netted else ""),
    )


def _events(payout: Payout, netted: int, now) -> list[PayoutEvent]:
    """Every step recorded, as the single path records them, with one insert for the batch."""
    detail = f"netted {netted}" if netted else ""
    steps = [("", PayoutStatus.CREATED, detail)]
    if payout.status == PayoutStatus.SUBMITTED:
        check = payout.payee._vop_current
        vop = (
            f"VoP {check.result}{' / ' + check.choice if check.choice else ''}"
            if check
            else "VoP not applicable"
        )
        steps += [
            (PayoutStatus.CREATED, PayoutStatus.PAYEE_VERIFIED, vop),
            (PayoutStatus.PAYEE_VERIFIED, PayoutStatus.SUBMITTED, ""),
        ]
    return [
        PayoutEvent(
            payout=payout, brand_id=payout.brand_id, from_status=before, to_status=after, detail=text, at=now
        )
        for before, after, text in steps
    ]


def _submit(order: psp.PaymentOrder):
    """One transfer; a lost answer is returned (PspUnknown), not raised, so one does not hide the
    others' answers."""
    try:
        return psp.payment_submit(order)
    except Exception as error:  # PspUnknown; a PspError (a bug) is logged by the caller
        return error


def _batch_send(payouts: list[Payout]) -> None:
    """Send payouts already committed as submitted, concurrently, then apply the answers."""
    orders = [payout_payment_order(payout) for payout in payouts]
    # In a test's transaction the senders' own connections could not see the batch: send in turn.
    concurrent = settings.PAYOUT_SEND_THREADS > 1 and not connection.in_atomic_block
    answers = _answers_concurrent(orders) if concurrent else map(_submit, orders)
    settled, others = [], []
    for number, (payout, answer) in enumerate(zip(payouts, answers, strict=True)):
        if number == 1:
            crash_point("batch_sending")  # one answer in, the others out or on their way
        if isinstance(answer, psp.PaymentStatus) and answer.settled:
            settled.append((payout, answer))
        else:
            others.append((payout, answer))
    crash_point("batch_sent")
    if settled:
        _batch_settle(settled)
    for payout, answer in others:
        try:
            _answer_apply(payout, answer)
        except Exception:
            logger.exception("the answer for payout %s was not applied; the sweep asks again", payout.pk)


def _answers_concurrent(orders: list[psp.PaymentOrder]):
    """The answers in order, sent from the sender threads. A broken executor is replaced before
    anything is sent; one that breaks mid-batch leaves its unsent payouts as lost answers (the
    sweep asks the provider and sends, with the same Idempotency-Key, what it never got)."""
    pool, futures = _sender(), []
    for order in orders:
        try:
            futures.append(pool.submit(_send, order))
        except BrokenExecutor as error:
            if futures:  # some may be on their way: the rest waits for the sweep
                futures.append(error)
                continue
            logger.warning("the payout senders were broken; starting new ones")
            pool = _sender(fresh=True)
            futures.append(pool.submit(_send, order))
    for future in futures:
        try:
            answer = future if isinstance(future, BrokenExecutor) else future.result()
        except BrokenExecutor as error:
            answer = error
        yield psp.PspUnknown(f"not sent: {answer}") if isinstance(answer, BrokenExecutor) else answer


def _answer_apply(payout: Payout, answer) -> None:
    if isinstance(answer, Exception) and not isinstance(answer, psp.PspUnknown):
        # The provider refused the request itself: left submitted, the sweep asks about it.
        logger.error("payout %s: the provider refused the request: %s", payout.pk, answer)
        return
    if isinstance(answer, psp.PspUnknown):
        with transaction.atomic(durable=True):
            payout_transition(
                payout,
                to=PayoutStatus.UNKNOWN,
                allowed_from=[PayoutStatus.SUBMITTED],
                detail=str(answer),
                next_check_at=timezone.now() + timedelta(seconds=2 * settings.PSP_TIMEOUT_SECONDS),
            )
        return
    payout_status_apply(payout=payout, status=answer)


def _batch_settle(settled: list[tuple[Payout, psp.PaymentStatus]]) -> None:
    """payouts.submission.outcomes.payout_settle for many payouts, in one transaction and one ledger batch."""
    now = timezone.now()
    by_id = {payout.pk: (payout, answer) for payout, answer in settled}
    with transaction.atomic(durable=True):
        # The people first, as payout_settle takes them: a batch making payouts either sees these
        # settled or has made its payout already.
        people = sorted({payout.participant_id for payout, _answer in settled})
        list(
            Participant.objects.select_for_update(no_key=True)
            .filter(pk__in=people)
            .order_by("pk")
            .values("pk")
        )
        ids = sorted(by_id)
        # Only from the states a settlement may leave (a webhook may have got there first).
        before = sql.payouts_settle(
            ids=ids,
            references=[by_id[pk][1].bank_reference or "" for pk in ids],
            allowed_from=list(SENT),
            now=now,
        )
        if not before:
            return
        ids = sorted(before)
        moved = []
        for pk in ids:
            payout, answer = by_id[pk]
            payout.status, payout.reason_code, payout.settled_at = PayoutStatus.SETTLED, "", now
            payout.next_check_at = None
            payout.psp_reference = answer.bank_reference or payout.psp_reference
            moved.append(payout)
        PayoutEvent.objects.bulk_create(
            PayoutEvent(
                payout=p,
                brand_id=p.brand_id,
                from_status=before[p.pk],
                to_status=PayoutStatus.SETTLED,
                at=now,
            )
            for p in moved
        )
        in_transit = {
            (brand_id, currency): payout_in_transit_account(brand_id=brand_id, currency=currency)
            for brand_id, currency in {(p.brand_id, p.currency) for p in moved}
        }
        # The platform bank of each payout's mode: a test brand's payouts settle against the sandbox's.
        banks = {
            (brand_id, currency): payout_platform_bank(currency=currency, brand_id=brand_id)
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
            Participant.objects.filter(pk__in=again, payout_due_at__isnull=True).update(payout_due_at=now)


def _one_by_one(*, limit: int) -> int:
    """The single-payout path for the people a failed batch left due: one failing person does not
    hold up the others, and is looked at again RETRY_AFTER later."""
    now = timezone.now()
    due = list(
        Participant.objects.filter(payout_due_at__lte=now)
        .order_by("payout_due_at")
        .values_list("pk", flat=True)[:limit]
    )
    claimed = 0
    for participant_id in due:
        with transaction.atomic(durable=True):
            took = Participant.objects.filter(pk=participant_id, payout_due_at__lte=now).update(
                payout_due_at=None
            )
        if not took:
            continue
        claimed += 1
        currencies = PayeeAccount.objects.filter(
            participant_id=participant_id, replaced_at__isnull=True
        ).values_list("currency", flat=True)
        try:
            for currency in currencies:
                payout_for_participant(participant_id=participant_id, currency=currency, send_now=True)
        except SimulatedCrash:
            raise
        except Exception:
            logger.exception("the payout of participant %s failed; tried again later", participant_id)
            Participant.objects.filter(pk=participant_id, payout_due_at__isnull=True).update(
                payout_due_at=now + RETRY_AFTER
            )
    return claimed
