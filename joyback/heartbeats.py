"""Each worker process says that it is alive: a WorkerHeartbeat row it writes every
WORKER_HEARTBEAT_SECONDS from a thread of its own, renewing on the way the leases its standing
work holds (joyback.queue.leases_renew).

A worker that dies or freezes (SIGKILL, SIGSTOP, its machine gone) stops writing: /healthz/work/
sees it within WORKER_STALE_SECONDS and names it, and the leases it held, no longer renewed, end
within STANDING_WORK_LEASE_SECONDS, when another worker takes their rows. A database that goes
away for a while stops the beats too; the thread keeps trying, and the worker is seen alive again
with its first beat once the database is back.
"""

import logging
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connections
from django.utils import timezone

from joyback.models import WorkerHeartbeat
from joyback.queue import connection_drop, leases_held, leases_renew

logger = logging.getLogger(__name__)

# The kinds of worker a deployment runs, each at least once (deploy/cluster.py, docs/deploy.md).
WORKER_KINDS = ("work", "qcluster")
FORGOTTEN_AFTER = timedelta(days=1)  # rows of workers gone this long are deleted by the next start


def heartbeat_name(kind: str) -> str:
    return f"{kind}@{socket.gethostname()}:{os.getpid()}"


def heartbeat_start(*, name: str, kind: str) -> None:
    """This worker's row, made (or made new again: a pid is reused after a restart) with its
    first beat; the rows of workers gone for a day deleted."""
    now = timezone.now()
    WorkerHeartbeat.objects.filter(beat_at__lt=now - FORGOTTEN_AFTER).delete()
    WorkerHeartbeat.objects.update_or_create(
        name=name,
        defaults={"kind": kind, "started_at": now, "beat_at": now, "holding": 0, "stopped_at": None},
    )


def heartbeat_beat(*, name: str, kind: str, holding: int = 0) -> None:
    """One beat: a conditional update of this worker's row (one statement), the row made again if
    it is missing or was marked stopped."""
    now = timezone.now()
    updated = WorkerHeartbeat.objects.filter(name=name, stopped_at__isnull=True).update(
        beat_at=now, holding=holding
    )
    if not updated:
        heartbeat_start(name=name, kind=kind)


def heartbeat_stop(*, name: str) -> None:
    """The worker stopped cleanly: it holds nothing, and /healthz/work/ no longer counts it."""
    WorkerHeartbeat.objects.filter(name=name).update(stopped_at=timezone.now(), holding=0)


class Heartbeat(threading.Thread):
    """The beats of this process, from a thread of its own, for as long as `alive()` says so:
    leases renewed first, then the row written. Database errors are logged and tried again at the
    next beat, with a new connection."""

    def __init__(self, kind: str, *, alive: Callable[[], bool] = lambda: True):
        super().__init__(name=f"heartbeat-{kind}", daemon=True)
        self.kind, self.alive = kind, alive
        self.worker = heartbeat_name(kind)
        self.stopping = threading.Event()
        self.failures = 0

    def run(self) -> None:
        try:
            while not self.stopping.is_set() and self.alive():
                self.beat()
                self.stopping.wait(settings.WORKER_HEARTBEAT_SECONDS)
        finally:
            connections.close_all()  # this thread's own connections

    def beat(self) -> None:
        try:
            leases_renew()
            heartbeat_beat(name=self.worker, kind=self.kind, holding=leases_held())
        except DatabaseError as error:
            self.failures += 1
            logger.warning("%s: the heartbeat could not be written: %s", self.worker, error)
            connection_drop()
        else:
            self.failures = 0

    def stop(self) -> None:
        """The thread ended, and the row marked stopped (from the caller's thread)."""
        self.stopping.set()
        if self.ident is not None and self is not threading.current_thread():  # run() as a thread
            self.join(timeout=settings.WORKER_HEARTBEAT_SECONDS + 5)
        try:
            heartbeat_stop(name=self.worker)
        except DatabaseError as error:
            logger.warning("%s: could not be marked stopped: %s", self.worker, error)


@dataclass(frozen=True)
class WorkerState:
    name: str
    kind: str
    seconds_since_beat: int
    holding: int
    stopped: bool

    @property
    def alive(self) -> bool:
        return not self.stopped and self.seconds_since_beat <= settings.WORKER_STALE_SECONDS

    @property
    def may_hold_leases(self) -> bool:
        """Stale, and the leases it may have taken before its last beat have not all ended yet
        (a lease taken just before it froze ends a beat and a lease after its last beat)."""
        horizon = settings.WORKER_HEARTBEAT_SECONDS + settings.STANDING_WORK_LEASE_SECONDS
        return not self.stopped and not self.alive and self.seconds_since_beat <= horizon


def workers_state(*, now=None) -> list[WorkerState]:
    """Every worker seen in the last day, newest beat first."""
    now = now or timezone.now()
    rows = WorkerHeartbeat.objects.filter(beat_at__gte=now - FORGOTTEN_AFTER).order_by("-beat_at")
    return [
        WorkerState(
            name=row.name,
            kind=row.kind,
            seconds_since_beat=max(0, int((now - row.beat_at).total_seconds())),
            holding=row.holding,
            stopped=row.stopped_at is not None,
        )
        for row in rows
    ]


def workers_problems(states: list[WorkerState]) -> list[str]:
    """What /healthz/work/ fails for: a kind with no live worker, a stale worker that may still
    hold leases; each named."""
    problems = []
    for kind in WORKER_KINDS:
        of_kind = [state for state in states if state.kind == kind]
        if not any(state.alive for state in of_kind):
            last = next((state for state in of_kind if not state.stopped), None)
            problems.append(
                f"no {kind} worker alive"
                + (f" (last: {last.name}, {last.seconds_since_beat} s ago)" if last else "")
            )
    for state in states:
        if state.may_hold_leases:
            problems.append(
                f"{state.name} silent for {state.seconds_since_beat} s may still hold leased rows "
                f"({state.holding} at its last beat)"
            )
    return problems
