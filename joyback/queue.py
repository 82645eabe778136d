"""Work done later: tasks queued after commit through one broker per process, and the standing
work that `manage.py work` claims from the rows requests stored.

django-q2 opens a new broker (a new Redis connection) on every async_task unless given one; a
webhook that enqueues on every request would spend most of its time connecting.
"""

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from functools import cache, partial

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, close_old_connections, connections, transaction
from django.db.models import Count, F, Min, Model, Q, QuerySet
from django.utils import timezone
from django.utils.module_loading import import_string
from django_q.brokers import get_broker
from django_q.conf import Conf
from django_q.models import Schedule
from django_q.tasks import async_task
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from joyback import sql
from joyback.background import STANDING_WORK
from joyback.observability import request_id_bound

logger = logging.getLogger(__name__)
_local = threading.local()
REDIS_DOWN = (RedisConnectionError, RedisTimeoutError)
# A worker loop that meets one of these (the database restarting or failing over, PgBouncer or Redis
# gone) drops its connection and tries again after a pause that doubles up to BACKOFF_MAX_SECONDS:
# it never exits for them.
TRANSIENT = (DatabaseError, *REDIS_DOWN, ConnectionError, TimeoutError)
BACKOFF_FIRST_SECONDS = 0.5
BACKOFF_MAX_SECONDS = 15.0


def _broker():
    if getattr(_local, "broker", None) is None:
        _local.broker = get_broker()
    return _local.broker


class _Resilient:
    """The broker's loops in the task cluster, kept alive: the pusher's dequeue and the monitor's
    acknowledge meet a database or Redis that went away with a pause and a new connection, where
    django-q2 would end the process (its sentinel starts a new one ten seconds later)."""

    def dequeue(self):
        if not hasattr(self, "_backoff"):
            self._backoff = Backoff(maximum=5.0)
        try:
            tasks = super().dequeue()
        except TRANSIENT as error:
            connection_drop()  # the ORM broker's; Redis's pool reconnects by itself
            self._backoff.failed("the task broker's dequeue", error)
            return None
        self._backoff.succeeded()
        return tasks

    def acknowledge(self, task_id):
        try:
            return super().acknowledge(task_id)
        except TRANSIENT as error:
            # Not acknowledged: the broker hands the task out again after Q_CLUSTER's retry.
            connection_drop()
            logger.warning("task %s could not be acknowledged, it will run again: %s", task_id, error)
            return None


def broker_resilient(list_key: str | None = None):
    """Q_CLUSTER's broker_class: django-q2's Redis or database broker, as configured, with _Resilient's
    loops."""
    # deferred: django-q2's brokers import their client libraries; only the configured one is needed
    from django_q.brokers import orm, redis_broker

    base = orm.ORM if Conf.ORM else redis_broker.Redis
    resilient = _RESILIENT.get(base) or _RESILIENT.setdefault(
        base, type(f"Resilient{base.__name__}", (_Resilient, base), {})
    )
    return resilient(list_key=list_key)


_RESILIENT: dict = {}


def enqueue_on_commit(func: str, *args) -> None:
    """Queue func(*args) once the current transaction commits (at once outside one).

    With the database as the broker, inside a transaction the task row is written in that very
    transaction: the workers see it exactly when the data it concerns commits (a transactional
    outbox: no task lost between the commit and the enqueue, none for data rolled back), and a
    request commits once instead of once more per task. Redis cannot join the transaction, so
    there the task is queued after the commit."""
    if _in_transaction_with_broker():
        _enqueue(func, *args)
    else:
        transaction.on_commit(partial(_enqueue, func, *args))


def task_schedule_once(*, name: str, func: str, arg, at) -> None:
    """func(arg) run by a worker at `at`: a one-off schedule, kept in the database whatever the
    broker (the cluster's scheduler queues it when it is due)."""
    Schedule.objects.create(
        name=name, func=func, args=str(arg), schedule_type=Schedule.ONCE, next_run=at, repeats=1
    )


def _database_broker() -> bool:
    """The default database is the broker and tasks run in workers (Q_SYNC runs a task at once,
    in process: it must wait for the commit like any side effect)."""
    return not Conf.SYNC and Conf.ORM == DEFAULT_DB_ALIAS


def _in_transaction_with_broker() -> bool:
    return _database_broker() and transaction.get_connection().in_atomic_block


def _enqueue(func: str, *args) -> None:
    try:
        async_task(func, *args, broker=_broker())
    except REDIS_DOWN as error:
        # The data this task concerns is committed: losing the task is not an option, and failing
        # the request now would only make the client retry what was done. The task waits in the
        # database as a one-off schedule, which the cluster's scheduler queues once Redis is back.
        _local.broker = None
        logger.warning("Redis unreachable, %s kept as a schedule in the database: %s", func, error)
        _task_keep_in_database(func, args)


def _task_keep_in_database(func: str, args: tuple) -> None:
    Schedule.objects.create(
        name=f"redis-down:{func}:{time.time_ns()}",
        func=func,
        args=repr(tuple(args)),
        schedule_type=Schedule.ONCE,
        next_run=timezone.now(),
        repeats=1,
    )


# Standing work: rows a request stored for later (a webhook's events, a claim's bank details, an API
# event) are claimed and processed by `manage.py work` as they arrive. No task row per item: the
# request writes its one row and commits once, and the row itself says what is left to do.
# Every kind is declared in joyback.background.STANDING_WORK (by dotted path: the apps that own the
# rows are to this module's right) and resolved the first time the work is looked at.


@dataclass(frozen=True)
class StandingWork:
    name: str
    claim_and_process: Callable[[], int]
    unfinished: QuerySet  # the rows not processed yet, however often they were tried
    max_attempts: int | None  # joyback.background.StandingKind says what each field means
    arrived_field: str
    gather: Callable[[], tuple[float, int]] | None = None
    stop: Callable[[], None] | None = None


@dataclass(frozen=True)
class StandingWorkHealth:
    name: str
    waiting: int
    oldest_waiting_seconds: int | None
    given_up: int

    @property
    def failing(self) -> bool:
        """Rows given up on, or waiting longer than a running worker (or the cluster's one-minute
        sweep) would ever leave them: nothing processes them."""
        stale = (self.oldest_waiting_seconds or 0) > settings.STANDING_WORK_STALE_SECONDS
        return self.given_up > 0 or stale


@cache
def _standing_work() -> dict[str, StandingWork]:
    def optional(path):
        return None if path is None else import_string(path)

    return {
        kind.name: StandingWork(
            name=kind.name,
            claim_and_process=import_string(kind.process),
            unfinished=import_string(kind.unfinished)(),
            max_attempts=optional(kind.max_attempts),
            arrived_field=kind.arrived_field,
            gather=optional(kind.gather),
            stop=optional(kind.stop),
        )
        for kind in STANDING_WORK
    }


def standing_work_pass() -> dict[str, int]:
    """Each kind of standing work once: how many rows of each were claimed."""
    done = {}
    for name, work in _standing_work().items():
        try:
            done[name] = work.claim_and_process()
        except DatabaseError:
            if connection_broken():
                raise  # every kind would fail alike: the worker's loop backs off and reconnects
            logger.exception("standing work %s: the database failed; trying again", name)
            done[name] = 0
    return done


def connection_broken(alias: str = DEFAULT_DB_ALIAS) -> bool:
    """Whether this thread's connection is gone (never made, closed, or lost mid-statement), as
    opposed to a statement that failed on a good one."""
    raw = connections[alias].connection
    return raw is None or raw.closed or getattr(raw, "broken", False)


def connection_drop(alias: str = DEFAULT_DB_ALIAS) -> None:
    """Forget this thread's connection after a failure, so the next statement connects afresh (to
    whichever server is the primary by then). Closing one whose server is gone may fail too."""
    connection = connections[alias]
    if connection.in_atomic_block:  # a test's transaction: it is the test's to end
        return
    try:
        connection.close()
    except DatabaseError:
        connection.connection = None


class Backoff:
    """The pause after a failure: BACKOFF_FIRST_SECONDS, doubling up to `maximum`, back to nothing
    after a success. The wait ends early when `stopping` says so."""

    def __init__(self, stopping: Callable[[], bool] = lambda: False, *, maximum: float = BACKOFF_MAX_SECONDS):
        self.stopping, self.maximum, self.seconds = stopping, maximum, 0.0

    def failed(self, what: str, error: BaseException) -> None:
        self.seconds = min(self.maximum, max(BACKOFF_FIRST_SECONDS, self.seconds * 2))
        logger.warning(
            "%s failed (%s: %s); trying again in %.1f s", what, type(error).__name__, error, self.seconds
        )
        deadline = time.monotonic() + self.seconds
        while not self.stopping() and time.monotonic() < deadline:
            time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))

    def succeeded(self) -> None:
        if self.seconds:
            logger.warning("back after a pause of %.1f s", self.seconds)
        self.seconds = 0.0


def standing_work_run(
    *, poll: float, once: bool = False, stopping: Callable[[], bool] = lambda: False
) -> None:
    """The standing worker's loop (`manage.py work`): passes back to back while they find work,
    otherwise one statement a poll. once: passes until one finds nothing ready, then return.
    stopping is asked between passes, never during one; each kind's stop runs on the way out."""
    try:
        _standing_work_loop(poll=poll, once=once, stopping=stopping)
    finally:
        for work in _standing_work().values():
            if work.stop is not None:
                work.stop()


def _standing_work_loop(*, poll: float, once: bool, stopping: Callable[[], bool]) -> None:
    backoff = Backoff(stopping)
    while not stopping():
        try:
            done = _standing_work_step(poll=poll, once=once)
        except TRANSIENT as error:
            # The database restarted or failed over, PgBouncer or Redis went away: the connection
            # is dropped and the loop goes on once it is back. Rows this worker held are leased:
            # another worker takes them when their lease ends, or this one after it reconnects.
            connection_drop()
            backoff.failed("the standing worker's pass", error)
            continue
        backoff.succeeded()
        if done:
            return


def _standing_work_step(*, poll: float, once: bool) -> bool:
    """One turn of the loop; whether a `once` run is done."""
    if not connections[DEFAULT_DB_ALIAS].in_atomic_block:  # (a test's transaction)
        close_old_connections()  # honours CONN_MAX_AGE and drops a broken connection
    wait = None if once else standing_work_wait()
    if wait != 0 and not once:
        # Idle, or a gathering kind filling its batch: never longer than a poll, so the other
        # kinds wait no longer than they would without gathering.
        time.sleep(poll if wait is None else min(wait, poll))
        return False
    claimed = sum(standing_work_pass().values())
    if once and not claimed:
        return True
    if not claimed:
        time.sleep(poll)
    return False


def standing_work_waiting() -> bool:
    """Whether a pass would find work to do now (standing_work_wait in a yes or no)."""
    return standing_work_wait() == 0


def standing_work_wait(*, now=None) -> float | None:
    """How long until a pass finds work, in one statement over every kind (an idle worker asks
    this every poll instead of passing over every kind): 0 when rows are ready now, the seconds
    until a gathering kind's oldest row has waited its window, None when nothing waits."""
    querysets, gathered = [], []
    for work in _standing_work().values():
        rows = work.unfinished
        if work.max_attempts is not None:
            rows = rows.filter(attempts__lt=work.max_attempts)
        if work.gather is None:
            querysets.append(rows)
        else:
            gathered.append((rows, work.arrived_field, *work.gather()))
    if not querysets and not gathered:
        return None
    return sql.standing_work_wait_seconds(querysets=querysets, gathered=gathered, now=now or timezone.now())


def standing_work_ready(name: str, *, now=None) -> bool:
    """Whether the gathering kind `name` has a batch ready: its oldest row has waited its window, or
    enough rows wait (one statement, on the index of its unprocessed rows)."""
    work = _standing_work()[name]
    gathered = [(work.unfinished, work.arrived_field, *work.gather())]
    return sql.standing_work_wait_seconds(querysets=[], gathered=gathered, now=now or timezone.now()) == 0


def standing_work_health(*, now=None) -> list[StandingWorkHealth]:
    """Per kind of standing work: how many rows wait, for how long the oldest has, and how many
    used up their attempts (one query per kind, on the indexes of unprocessed rows)."""
    now = now or timezone.now()
    health = []
    for work in _standing_work().values():
        if work.max_attempts is None:
            counts = work.unfinished.aggregate(waiting=Count("pk"), oldest=Min(work.arrived_field))
            counts["given_up"] = 0
        else:
            tries_left = Q(attempts__lt=work.max_attempts)
            counts = work.unfinished.aggregate(
                waiting=Count("pk", filter=tries_left),
                oldest=Min(work.arrived_field, filter=tries_left),
                given_up=Count("pk", filter=~tries_left),
            )
        oldest = counts["oldest"]
        health.append(
            StandingWorkHealth(
                name=work.name,
                waiting=counts["waiting"],
                oldest_waiting_seconds=None if oldest is None else int((now - oldest).total_seconds()),
                given_up=counts["given_up"],
            )
        )
    return health


def standing_work_retry(*, rows: QuerySet) -> list:
    """Give rows the standing worker gave up on their attempts back (once a person has fixed what
    made them fail); the next pass claims them. The keys of those rows; rows still being tried are
    left as they are. Run it in the transaction that records who asked."""
    for work in _standing_work().values():
        if work.unfinished.model is rows.model and work.max_attempts is not None:
            given_up = work.unfinished.filter(attempts__gte=work.max_attempts, pk__in=rows.values("pk"))
            retried = list(given_up.select_for_update().values_list("pk", flat=True))
            work.unfinished.filter(pk__in=retried).update(attempts=0, claimed_until=None)
            return retried
    raise ValueError(f"{rows.model.__name__} is no standing work")


def standing_work_sweep(seconds: float = 50) -> int:
    """The cluster's safety net behind `manage.py work`: everything waiting, for at most `seconds`
    (the cluster's timeout is 60), so nothing waits long even when no standing worker runs."""
    deadline = time.monotonic() + seconds
    claimed, total = 1, 0
    while claimed and time.monotonic() < deadline:
        claimed = sum(standing_work_pass().values())
        total += claimed
    return total


def standing_work_soon(name: str) -> None:
    """Rows of the standing work `name` are waiting. Without task workers (Q_SYNC: the tests, a
    one-process run) that work runs once the transaction commits, as a standing worker's next pass
    would; with workers their polling finds it, so nothing is done here. By name: the app that
    stores the rows need not import the one that processes them."""
    if Conf.SYNC:
        transaction.on_commit(lambda: _standing_work()[name].claim_and_process())


def standing_work_inline(func: Callable, /, **kwargs) -> None:
    """Without task workers (Q_SYNC: the tests, a one-process run) func(**kwargs) runs once the
    transaction commits, as the standing worker would; with workers nothing is done here."""
    if Conf.SYNC:
        transaction.on_commit(partial(func, **kwargs))


def standing_lease() -> timedelta:
    """How long a claimed row is a worker's: short, so the rows of a worker that died are taken
    by another within it, and renewed while the worker holds them (leases_renew)."""
    return timedelta(seconds=settings.STANDING_WORK_LEASE_SECONDS)


# The rows this process holds leased, by model: renewed by the worker's heartbeat
# (joyback.heartbeats) and between items of a long batch, released once processed.
_held_lock = threading.Lock()
_held: dict[type[Model], dict] = {}


def _leases_hold(model, pks) -> None:
    with _held_lock:
        _held.setdefault(model, {}).update(dict.fromkeys(pks))


def _lease_release(model, pk) -> None:
    with _held_lock:
        _held.get(model, {}).pop(pk, None)


def leases_held() -> int:
    with _held_lock:
        return sum(len(pks) for pks in _held.values())


def leases_renew(*, model=None) -> int:
    """The leases this process holds (of `model`, or all) extended by a lease from now; how many
    rows. Only rows whose lease has not ended: one that ended may be another worker's now."""
    with _held_lock:
        held = {m: list(pks) for m, pks in _held.items() if pks and model in (None, m)}
    now, renewed = timezone.now(), 0
    for rows_model, pks in held.items():
        renewed += rows_model._base_manager.filter(pk__in=pks, claimed_until__gt=now).update(
            claimed_until=now + standing_lease()
        )
    return renewed


def claim_and_process(
    pending: QuerySet,
    *,
    process: Callable,
    limit: int,
    order_by: str,
    ids=None,
    lease: timedelta | None = None,
) -> int:
    """Claim up to `limit` rows of `pending` (only these ids, if given) and process(pk) each; how
    many were claimed. One whose processing raises is logged and claimed again once its lease ends,
    so `process` must be safe to repeat. The rows not processed yet have their lease renewed
    while a long batch goes on."""
    if ids is not None:
        pending = pending.filter(pk__in=ids)
    lease = lease or standing_lease()
    model = pending.model
    claimed = lease_claim(pending, limit=limit, lease=lease, order_by=order_by)
    _leases_hold(model, claimed)
    renew_at = time.monotonic() + lease.total_seconds() / 3
    name = model._meta.verbose_name
    try:
        for pk in claimed:
            if time.monotonic() > renew_at:
                leases_renew(model=model)
                renew_at = time.monotonic() + lease.total_seconds() / 3
            # Each item's log lines share an id, as a request's do.
            with request_id_bound(f"work-{model._meta.model_name}-{pk}"):
                try:
                    process(pk)
                except Exception:
                    if connection_broken():
                        raise  # the rest of the batch would fail alike; their leases run out
                    logger.exception("%s %s could not be processed; it will be tried again", name, pk)
            _lease_release(model, pk)
    finally:
        for pk in claimed:
            _lease_release(model, pk)
    return len(claimed)


def lease_claim(pending: QuerySet, *, limit: int, order_by: str, lease: timedelta | None = None) -> list:
    """Up to `limit` primary keys of `pending` (rows with `claimed_until` and `attempts` fields)
    that no worker holds, each leased to this one for `lease` (standing_lease by default): workers
    racing each other claim disjoint rows (FOR UPDATE SKIP LOCKED), and a row whose worker died is
    claimed again once its lease ends. `pending` says what is still to do and how many attempts are
    allowed."""
    lease = lease or standing_lease()
    now = timezone.now()
    free = pending.filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
    if not free.exists():
        # The idle worker's usual answer, in one statement: no transaction, no locks.
        return []
    with transaction.atomic(durable=True):
        claimed = list(
            free.select_for_update(skip_locked=True).order_by(order_by).values_list("pk", flat=True)[:limit]
        )
        if claimed:
            pending.model.objects.filter(pk__in=claimed).update(
                claimed_until=now + lease, attempts=F("attempts") + 1
            )
    return claimed
