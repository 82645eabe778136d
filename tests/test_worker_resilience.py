"""Workers that never die of a dropped connection, and a health check that sees one that did.

The standing worker backs off and reconnects when its database connection is killed (a primary
restart, a failover, PgBouncer gone) and goes on with the next item; each worker writes a
heartbeat row, and /healthz/work/ fails within WORKER_STALE_SECONDS of the last one, naming the
worker; a killed worker's leased rows are taken by another once its short lease ends, while a
live worker's leases are renewed as long as it holds them."""

import threading
import time
import uuid
from datetime import timedelta

import psycopg
import pytest
from django.conf import settings
from django.db import OperationalError, connection, connections
from django.urls import reverse
from django.utils import timezone
from django_q.conf import Conf

from joyback import queue
from joyback.heartbeats import WORKER_KINDS, Heartbeat, heartbeat_start
from joyback.models import WorkerHeartbeat
from joyback.queue import broker_resilient, lease_claim, leases_renew, standing_work_run
from payouts.models import PayeeSubmission
from tests.conftest import MONITORING, rewarded_in_browser

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("monitoring"),
]

PAT = {"name": "Pat Example", "email": "pat@example.com", "iban": "DE89370400440532013000", "consent": "on"}


@pytest.fixture
def with_workers(monkeypatch):
    """As production: requests store rows, workers process them later."""
    monkeypatch.setattr(Conf, "SYNC", False)


def wait_for(condition, seconds: float = 15.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def own_backend_pid() -> int:
    connection.ensure_connection()
    return connection.connection.info.backend_pid


def others_terminate() -> int:
    """pg_terminate_backend for every other session on this test database, as a primary restart
    or a killed PgBouncer ends them; how many."""
    url = settings.DATABASES["default"]
    with psycopg.connect(
        host=url["HOST"] or "localhost",
        port=url["PORT"] or 5432,
        user=url["USER"],
        dbname=url["NAME"],
        password=url["PASSWORD"] or None,
        autocommit=True,
    ) as admin:
        return admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid() AND pid <> %s",
            [own_backend_pid()],
        ).fetchone()[0]


class Worker(threading.Thread):
    """`manage.py work`'s loop in a thread, with its own connection."""

    def __init__(self):
        super().__init__(daemon=True)
        self.stopping, self.errors = threading.Event(), []

    def run(self):
        try:
            standing_work_run(poll=0.05, stopping=self.stopping.is_set)
        except BaseException as error:  # the test says what ended it
            self.errors.append(error)
        finally:
            connections.close_all()

    def stop(self):
        self.stopping.set()
        self.join(timeout=20)


def test_a_worker_whose_connection_is_killed_keeps_running_and_processes_the_next_item(
    client, summer, with_workers
):
    rewarded_in_browser(client, summer)
    worker = Worker()
    worker.start()
    try:
        assert wait_for(lambda: others_terminate() >= 1, 10), "the worker never connected"
        # The worker meets its dead connection (or a refused one) on its next statement.
        client.post(reverse("payouts:payee", args=[summer.slug]), PAT)
        submission = PayeeSubmission.objects.get()

        assert wait_for(
            lambda: PayeeSubmission.objects.filter(pk=submission.pk, processed_at__isnull=False).exists()
        )
        assert worker.is_alive() and not worker.errors
    finally:
        worker.stop()
    assert not worker.is_alive() and not worker.errors


def test_every_database_error_in_the_loop_is_backed_off_never_fatal(monkeypatch, caplog):
    failures = iter([OperationalError("the primary restarted"), OperationalError("still down")])
    passes = []

    def wait(**kwargs):
        error = next(failures, None)
        if error is not None:
            raise error
        passes.append(True)
        return None

    monkeypatch.setattr(queue, "standing_work_wait", wait)
    monkeypatch.setattr(queue, "BACKOFF_FIRST_SECONDS", 0.01)
    standing_work_run(poll=0.01, stopping=lambda: len(passes) >= 2)

    assert len(passes) == 2
    assert caplog.text.count("trying again in") == 2


def test_the_task_brokers_dequeue_survives_a_killed_connection(monkeypatch):
    monkeypatch.setattr(Conf, "ORM", "default")
    monkeypatch.setattr(queue, "BACKOFF_FIRST_SECONDS", 0.01)
    broker = broker_resilient(list_key="resilience-test")
    broker.dequeue()  # connected
    connection.connection.close()  # as a restart leaves it: the next statement fails

    assert broker.dequeue() is None  # logged, backed off, no exception
    assert broker.dequeue() is None  # connected again, nothing queued


def beat_age(name: str, seconds: float) -> None:
    WorkerHeartbeat.objects.filter(name=name).update(beat_at=timezone.now() - timedelta(seconds=seconds))


def work_health(client):
    response = client.get(reverse("healthz_work"), **MONITORING)
    return response.status_code, response.json()


def test_health_fails_naming_the_worker_once_its_heartbeat_is_older_than_the_stale_seconds(
    client, with_workers, settings
):
    stale = settings.WORKER_STALE_SECONDS
    # Four missed beats, so that a frozen worker shows within the 30 s the health check promises.
    assert stale + settings.WORKER_HEARTBEAT_SECONDS <= 30 - 5
    for kind in WORKER_KINDS:
        heartbeat_start(name=f"{kind}@machine-a:100", kind=kind)
    assert work_health(client)[0] == 200

    beat_age("work@machine-a:100", stale - 1)
    assert work_health(client)[0] == 200

    beat_age("work@machine-a:100", stale + 1)
    status, body = work_health(client)
    assert status == 503 and body["status"] == "failing"
    assert any(
        "no work worker alive" in problem and "work@machine-a:100" in problem for problem in body["problems"]
    )
    assert client.get(reverse("healthz_work"))["Retry-After"]


def test_a_silent_worker_that_may_hold_leases_fails_health_even_with_another_alive(
    client, with_workers, settings
):
    settings.STANDING_WORK_LEASE_SECONDS = 30
    for kind in WORKER_KINDS:
        heartbeat_start(name=f"{kind}@machine-a:100", kind=kind)
    heartbeat_start(name="work@machine-b:200", kind="work")
    beat_age("work@machine-b:200", 32)  # frozen (SIGSTOP) just after a claim: its lease runs on

    status, body = work_health(client)
    assert status == 503
    assert any(problem.startswith("work@machine-b:200 silent for") for problem in body["problems"])

    beat_age("work@machine-b:200", 40)  # past a beat and a lease: nothing it took is still its
    status, body = work_health(client)
    assert status == 200, body


def test_a_worker_that_stopped_cleanly_is_not_missed(client, with_workers):
    heartbeat_start(name="qcluster@machine-a:100", kind="qcluster")
    beat = Heartbeat("work")
    beat.beat()
    assert work_health(client)[0] == 200
    beat.stop()

    status, body = work_health(client)
    assert status == 503 and "no work worker alive" in body["problems"][0]


def test_without_task_workers_no_heartbeat_is_expected(client):
    assert Conf.SYNC and work_health(client)[0] == 200


def submissions(client, summer, count: int) -> list:
    person = rewarded_in_browser(client, summer)
    now = timezone.now()
    PayeeSubmission.objects.bulk_create(
        PayeeSubmission(
            id=uuid.uuid4(), participant=person, brand_id=person.brand_id, details="{}", created_at=now
        )
        for _ in range(count)
    )
    return PayeeSubmission.objects.filter(processed_at__isnull=True)


def test_a_lease_held_by_a_dead_worker_is_taken_by_another_once_it_ends(
    client, summer, settings, with_workers
):
    settings.STANDING_WORK_LEASE_SECONDS = 1
    waiting = submissions(client, summer, 3)
    dead = lease_claim(waiting, limit=3, order_by="created_at")  # then killed: nothing renews them
    assert len(dead) == 3 and lease_claim(waiting, limit=3, order_by="created_at") == []

    time.sleep(1.1)

    assert sorted(lease_claim(waiting, limit=3, order_by="created_at")) == sorted(dead)


def test_a_live_workers_leases_are_renewed_while_it_holds_them(client, summer, settings, with_workers):
    settings.STANDING_WORK_LEASE_SECONDS = 1
    waiting = submissions(client, summer, 2)
    held = lease_claim(waiting, limit=2, order_by="created_at")
    queue._leases_hold(PayeeSubmission, held)
    try:
        for _ in range(3):
            time.sleep(0.5)
            assert leases_renew() == 2  # the heartbeat's renewal
            assert lease_claim(waiting, limit=2, order_by="created_at") == []
    finally:
        for pk in held:
            queue._lease_release(PayeeSubmission, pk)
    time.sleep(1.1)
    assert len(lease_claim(waiting, limit=2, order_by="created_at")) == 2


def test_the_heartbeat_thread_beats_and_says_what_it_holds(settings, with_workers):
    settings.WORKER_HEARTBEAT_SECONDS = 0.05
    beat = Heartbeat("work")
    beat.start()
    try:
        assert wait_for(lambda: WorkerHeartbeat.objects.filter(name=beat.worker).exists(), 5)
        first = WorkerHeartbeat.objects.get(name=beat.worker).beat_at
        assert wait_for(lambda: WorkerHeartbeat.objects.get(name=beat.worker).beat_at > first, 5)
    finally:
        beat.stop()
    row = WorkerHeartbeat.objects.get(name=beat.worker)
    assert row.stopped_at is not None and row.holding == 0
