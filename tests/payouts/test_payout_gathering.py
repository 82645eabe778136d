"""People due are gathered into batches: the standing worker takes them once the oldest has waited
PAYOUT_GATHER_MS (or a full batch is due at once), so a moderate trickle of approvals is paid a
batch at a time, and someone approved while the worker waits goes in the same batch. Several
workers gathering at once still pay each person once."""

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import F

from joyback.queue import standing_work_run, standing_work_wait
from payouts import pipeline
from payouts.models import Payout
from tests.payouts.test_payout_batches import approve, assert_whole, ready_person, restart
from verification.models import Participant

pytestmark = pytest.mark.django_db


@pytest.fixture
def club(make_live_campaign):
    return make_live_campaign(slug="gathering-club", budget=10_000_00)


def age(person, *, seconds: float) -> None:
    """As if the person's mark was made this much earlier."""
    Participant.objects.filter(pk=person.pk).update(
        payout_due_at=F("payout_due_at") - timedelta(seconds=seconds)
    )


def test_a_person_due_waits_for_the_window_and_goes_with_those_approved_meanwhile(club, settings):
    settings.PAYOUT_GATHER_MS = 60_000
    first, identity = ready_person(club)
    approve(club, identity)

    assert pipeline.payouts_due_process() == 0  # the batch is still filling
    assert not Payout.objects.exists()
    assert 59 < standing_work_wait() <= 60  # the idle worker knows how long to sleep

    second, identity = ready_person(club)
    approve(club, identity)
    age(first, seconds=61)
    assert standing_work_wait() == 0
    assert pipeline.payouts_due_process() == 2  # the one approved meanwhile goes in the same batch

    assert_whole([(first, "settle"), (second, "settle")])
    assert len({p.submitted_at for p in Payout.objects.all()}) == 1


def test_a_full_batch_goes_at_once_without_waiting_for_the_window(club, settings):
    settings.PAYOUT_GATHER_MS = 60_000
    settings.PAYOUT_BATCH_SIZE = 3
    people = [ready_person(club) for _ in range(3)]
    for _person, identity in people[:2]:
        approve(club, identity)
    assert standing_work_wait() > 59
    approve(club, people[2][1])

    assert standing_work_wait() == 0
    assert pipeline.payouts_due_process() == 3
    assert_whole([(person, "settle") for person, _identity in people])


def test_a_later_mark_for_a_retry_does_not_wake_the_worker_before_its_time(club, settings):
    settings.PAYOUT_GATHER_MS = 200
    person, identity = ready_person(club)
    approve(club, identity)
    Participant.objects.filter(pk=person.pk).update(payout_due_at=F("payout_due_at") + timedelta(minutes=1))

    assert standing_work_wait() is None  # not due yet: the ordinary idle poll
    assert pipeline.payouts_due_process() == 0


def worker_threads(count: int, stop: threading.Event, failures: list) -> list[threading.Thread]:
    """Standing workers in threads, each on its own connection, running manage.py work's loop."""

    def work():
        try:
            standing_work_run(poll=0.05, stopping=stop.is_set)
        except Exception as error:  # the assertion on failures says which
            failures.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=work) for _ in range(count)]
    for thread in threads:
        thread.start()
    return threads


def wait_for(condition, *, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the standing worker did not get there in time"
        time.sleep(0.02)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_worker_waiting_in_its_window_pays_someone_approved_meanwhile_in_the_same_batch(
    club, settings, monkeypatch
):
    # The workers below take the people due, not a test's inline pass after each commit.
    monkeypatch.setattr("verification.services.rewards.standing_work_soon", lambda name: None)
    settings.PAYOUT_GATHER_MS = 700
    first, first_identity = ready_person(club)
    second, second_identity = ready_person(club)
    stop, failures = threading.Event(), []
    threads = worker_threads(1, stop, failures)
    try:
        time.sleep(0.1)  # the worker is idle, polling
        approved = time.monotonic()
        approve(club, first_identity)
        time.sleep(0.3)
        assert not Payout.objects.exists()  # waiting in its window
        approve(club, second_identity)
        wait_for(lambda: Payout.objects.filter(status="settled").count() == 2)
        took = time.monotonic() - approved
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert failures == []
    assert took >= 0.6  # the window, not the poll, decided when
    assert len({p.submitted_at for p in Payout.objects.all()}) == 1  # one batch
    assert_whole([(first, "settle"), (second, "settle")])


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_workers_gathering_at_once_never_pay_one_person_twice(club, settings, monkeypatch):
    monkeypatch.setattr("verification.services.rewards.standing_work_soon", lambda name: None)
    settings.PAYOUT_GATHER_MS = 100
    settings.PAYOUT_BATCH_SIZE = 3
    people = [ready_person(club, outcome="timeout" if n % 5 == 0 else "settle") for n in range(15)]
    stop, failures = threading.Event(), []
    threads = worker_threads(2, stop, failures)
    try:
        for number, (_person, identity) in enumerate(people):
            approve(club, identity)
            time.sleep(0.01 * (number % 4))
        wait_for(
            lambda: (
                Payout.objects.count() == len(people)
                and not Payout.objects.filter(status="submitted").exists()
            )
        )
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert failures == []
    restart()  # the lost answers (timeouts) are asked about

    assert_whole([(person, "timeout" if n % 5 == 0 else "settle") for n, (person, _i) in enumerate(people)])
    assert set(Payout.objects.values_list("submissions", flat=True)) == {1}
