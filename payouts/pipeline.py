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

Who may be paid, the making, the posting and the settling are payouts.submission's, written once
for N payouts (the single payout is N=1); this module gathers the people due and sends.

Crash safety is the single payout's: a payout is committed as submitted before its request leaves,
so if the worker dies after that the sweep asks the provider about it (payout_status_check) and
sends again, with the same Idempotency-Key, only what the provider never received. A batch that
fails is rolled back whole and its people are paid one by one through the single-payout path.
"""

import contextlib
import logging
import threading
from concurrent.futures import BrokenExecutor, ThreadPoolExecutor
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from joyback.queue import standing_work_ready
from payouts import psp, sql
from payouts.funding.selectors import balance_accounts_remembered, brands_custody_blocked
from payouts.models import PayeeAccount, Payout
from payouts.models.payouts import PayoutStatus
from payouts.submission.crash import SimulatedCrash, crash_point
from payouts.submission.create import payees_payable, payout_for_participant, payouts_make
from payouts.submission.outcomes import payouts_settle
from payouts.submission.states import payout_transition
from payouts.submission.submit import payout_payment_order, payout_status_apply, payout_submit
from verification.models import Participant
from verification.services.rewards import PAYOUTS_DUE

logger = logging.getLogger(__name__)

# After a failure outside the batch (a person whose payout raised), look again this much later,
# not on every pass.
RETRY_AFTER = timedelta(seconds=60)

_idle = True

_pool: ThreadPoolExecutor | None = None


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
        with balance_accounts_remembered():
            claimed, to_send, to_continue = _batch_make(limit=limit)
    except SimulatedCrash:
        raise
    except Exception:
        logger.exception("a payout batch failed and was rolled back; paying its people one by one")
        return _one_by_one(limit=limit)
    if to_send:
        with balance_accounts_remembered():
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
    with transaction.atomic(durable=True):
        people = sql.participants_due_claim(now=now, limit=limit)
        _idle = len(people) < limit  # a full batch: more are likely waiting, no need to ask first
        if not people:
            return 0, [], []
        crash_point("batch_claimed")
        # A brand whose verification staff withdrew pays nothing (the sweep pays it once verified).
        brand_of = {pk: brand_id for pk, brand_id, verified_at in people if verified_at is not None}
        # Nor one the payment provider does not allow to pay from its own account, or whose
        # account there drifted from its ledger account (that brand alone waits).
        blocked = brands_custody_blocked(brand_ids=set(brand_of.values()))
        brand_of = {pk: brand_id for pk, brand_id in brand_of.items() if brand_id not in blocked}
        payees = {
            payee.participant_id: payee for payee in payees_payable().filter(participant_id__in=brand_of)
        }
        payouts = payouts_make(payees=payees, brand_of=brand_of, now=now, claim=True)
        crash_point("batch_posted")
    crash_point("batch_committed")
    to_send = [p for p in payouts if p.status == PayoutStatus.SUBMITTED]
    return len(people), to_send, [p.pk for p in payouts if p.status != PayoutStatus.SUBMITTED]


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
        payouts_settle([(payout, answer.bank_reference or "") for payout, answer in settled])
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
                "answer_lost",
                detail=str(answer),
                next_check_at=timezone.now() + timedelta(seconds=2 * settings.PSP_TIMEOUT_SECONDS),
            )
        return
    payout_status_apply(payout=payout, status=answer)


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
