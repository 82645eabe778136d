"""People marked due are paid by the payout pipeline's batches, never by the sweep, which pays only
what a crash or the bank left owed with no mark; bank details given after a reward are paid by a
batch too. A mark is never stranded: with no standing worker the cluster's sweep of standing work
takes it, a person a failed batch set aside is taken by a later one, and a person whose batch
died after taking the mark is the sweep's again."""

import threading

import pytest
from django.db import connection
from django.db.models import F
from django.urls import reverse
from django.utils.module_loading import import_string

from joyback.queue import standing_work_pass, standing_work_sweep
from payouts import pipeline
from payouts.models import Payout, SandboxBankPayment
from payouts.payees.services import payee_onboard
from payouts.submission import create
from payouts.submission.crash import SimulatedCrash, _crash_at
from payouts.submission.sweeps import participants_owed, payouts_sweep
from tests.conftest import rewarded_in_browser
from tests.payouts.conftest import enqueue_replace
from tests.payouts.test_payout_batches import approve, assert_whole, ready_person, restart
from verification.models import Participant

pytestmark = pytest.mark.django_db


@pytest.fixture
def club(make_live_campaign):
    return make_live_campaign(slug="payday-club", budget=10_000_00)


def marked(person) -> bool:
    return Participant.objects.filter(pk=person.pk, payout_due_at__isnull=False).exists()


def test_a_person_marked_due_is_left_to_the_batch_and_paid_once(club, monkeypatch):
    person, identity = ready_person(club)
    approve(club, identity)  # workers running: the approval only marks the person due
    queued = []
    enqueue_replace(monkeypatch, lambda func, *args: queued.append(func))

    payouts_sweep()  # the cluster's sweep comes first

    assert not Payout.objects.exists() and marked(person)
    assert participants_owed(limit=10) == []

    assert pipeline.payouts_due_process() == 1
    payouts_sweep()

    assert_whole([(person, "settle")])
    assert Payout.objects.get().submissions == 1
    assert queued == []  # no task for the payout, neither to make it nor to send it


def test_a_person_a_failed_batch_set_aside_is_paid_by_a_later_batch_not_the_sweep(club, monkeypatch):
    person, identity = ready_person(club)
    approve(club, identity)
    with monkeypatch.context() as broken:
        broken.setattr(create, "_payouts_plan", lambda *args, **kwargs: 1 / 0)
        broken.setattr(pipeline, "payout_for_participant", lambda **kwargs: 1 / 0)
        assert pipeline.payouts_due_process() == 1  # and their one-by-one payout failed too
    assert marked(person)  # for RETRY_AFTER later

    payouts_sweep()
    assert pipeline.payouts_due_process() == 0  # not yet
    assert not Payout.objects.exists()

    # RETRY_AFTER has passed.
    Participant.objects.filter(pk=person.pk).update(payout_due_at=F("payout_due_at") - pipeline.RETRY_AFTER)
    assert pipeline.payouts_due_process() == 1

    assert_whole([(person, "settle")])
    assert not marked(person)


def test_a_person_whose_batch_died_after_taking_the_mark_is_paid_by_the_sweep(club, monkeypatch):
    person, identity = ready_person(club)
    approve(club, identity)
    real, calls = create._payouts_plan, []

    def plan_failing_once(*args, **kwargs):
        # The batch fails; the making works again for the sweep after the restart.
        calls.append(1)
        if len(calls) == 1:
            raise ZeroDivisionError
        return real(*args, **kwargs)

    monkeypatch.setattr(create, "_payouts_plan", plan_failing_once)
    _crash_at.add("payout_locked")  # the one-by-one path, after it took the person's mark

    with pytest.raises(SimulatedCrash):
        pipeline.payouts_due_process()
    _crash_at.clear()
    assert not marked(person) and not Payout.objects.exists()

    restart()  # the sweep, then the standing worker

    assert_whole([(person, "settle")])


def test_with_no_standing_worker_the_clusters_sweep_of_standing_work_pays_a_person_due(club):
    person, identity = ready_person(club)
    approve(club, identity)

    assert standing_work_sweep(seconds=5) >= 1  # what the task cluster runs every minute

    assert_whole([(person, "settle")])


def test_bank_details_with_nothing_owed_mark_nobody(club):
    person, _identity = ready_person(club)  # details, no reward yet

    payee_onboard(payee_id=person.payee_accounts.get().pk)

    assert not marked(person)


@pytest.fixture
def task_workers(monkeypatch):
    """As production without Redis: tasks are rows in the database broker, run by the cluster's
    workers (run_tasks below), not inline."""
    from django_q.conf import Conf

    monkeypatch.setattr(Conf, "SYNC", False)
    monkeypatch.setattr(Conf, "ORM", "default")


def run_tasks() -> list[str]:
    """What the task cluster's workers do with the queued rows, until none is left: the functions
    run, in order."""
    from django_q.models import OrmQ

    ran = []
    while rows := list(OrmQ.objects.order_by("pk")):
        for row in rows:
            task = row.task
            row.delete()
            ran.append(task["func"])
            import_string(task["func"])(*task["args"], **task["kwargs"])
    return ran


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_bank_details_after_a_reward_are_paid_in_a_batch_with_no_task_per_payout(
    client, summer, task_workers
):
    from django_q.models import OrmQ

    person = rewarded_in_browser(client, summer)
    standing_work_pass()  # the standing worker takes the mark: no bank details yet, nothing to pay
    assert not marked(person) and not Payout.objects.exists()

    details = {"name": "Pat Example", "email": "pat@example.com", "iban": "DE89370400440532013000"}
    response = client.post(reverse("payouts:payee", args=[summer.slug]), details | {"consent": "on"})
    assert response.status_code == 302
    standing_work_pass()  # the details become Pat's payee account
    tasks = run_tasks()  # the name check and the status link's mail

    assert sorted(tasks) == ["payouts.tasks.payee_verify_task", "payouts.tasks.status_link_send_task"]
    assert marked(person) and not Payout.objects.exists()

    standing_work_pass()  # the batch

    payout = Payout.objects.get()
    assert (payout.status, payout.amount, payout.submissions) == ("settled", 1_00, 1)
    assert [e.to_status for e in payout.events.order_by("pk")] == [
        "created",
        "payee_verified",
        "submitted",
        "settled",
    ]
    assert SandboxBankPayment.objects.filter(end_to_end_id=payout.end_to_end_id).count() == 1
    assert not OrmQ.objects.exists()  # nothing queued for the payout, neither made nor sent by a task
    assert not marked(person)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_batch_workers_and_a_sweep_racing_pay_each_person_once(club, monkeypatch):
    # Set up without the inline pass a test's commit would run: the workers below take them.
    monkeypatch.setattr("verification.services.rewards.standing_work_soon", lambda name: None)
    due, left = [], []
    for number in range(12):
        person, identity = ready_person(club)
        approve(club, identity)
        (due if number % 3 else left).append(person)
    # A crash or a lost task left these owed with no mark: the sweep's.
    Participant.objects.filter(pk__in=[p.pk for p in left]).update(payout_due_at=None)
    by_sweep = []  # the payouts the sweep made one at a time, each with its queued task to send it

    def queued(func, payout_id):
        by_sweep.append(payout_id)

    monkeypatch.setattr(create, "enqueue_on_commit", queued)
    barrier = threading.Barrier(3)
    failures = []

    def run(work):
        try:
            barrier.wait()
            work()
        except Exception as error:  # the assertion below says which
            failures.append(error)
        finally:
            connection.close()

    def batches():
        while pipeline.payouts_due_process(limit=1):
            pass

    workers = [threading.Thread(target=run, args=(batches,)) for _ in range(2)]

    def sweeps():
        passes = 0
        while passes < 2 or any(worker.is_alive() for worker in workers):  # as long as they work
            payouts_sweep()
            passes += 1

    threads = [*workers, threading.Thread(target=run, args=(sweeps,))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    restart()  # the sweep's payouts are sent once they are due

    assert_whole([(person, "settle") for person in due + left])
    assert set(Payout.objects.values_list("submissions", flat=True)) == {1}
    swept = set(Payout.objects.filter(pk__in=by_sweep).values_list("participant_id", flat=True))
    assert swept == {p.pk for p in left}  # the people marked due all went by batch
    assert not Participant.objects.filter(payout_due_at__isnull=False).exists()


def test_bank_details_after_a_reward_end_in_the_batch_inline_too(owed, monkeypatch):
    """Without task workers (the tests' setting, a one-process run) the same path runs after each
    commit: the name check's task, then the batch, and no task per payout."""
    import joyback.queue

    real, queued = joyback.queue._enqueue, []
    monkeypatch.setattr(joyback.queue, "_enqueue", lambda func, *a: queued.append(func) or real(func, *a))

    person = owed()

    payout = Payout.objects.get()
    assert (payout.status, payout.submissions) == ("settled", 1)
    assert "payouts.tasks.payee_verify_task" in queued
    assert not [func for func in queued if "payout_submit" in func or "payout_for_participant" in func]
    assert not marked(person)
