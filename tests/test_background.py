"""Recurring background work is declared in one place (joyback/background.py): the database's
recurring schedules follow the declaration, the standing worker's kinds come from it, and the
design page's "What runs where" is its table."""

import dataclasses
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone
from django.utils.module_loading import import_string
from django_q.models import Schedule

from joyback.background import SCHEDULES, STANDING_WORK, Recurring, background_work_table
from joyback.queue import standing_work_health
from joyback.schedules import schedules_sync
from verification.services.rewards import PAYOUTS_DUE

ROOT = Path(__file__).resolve().parent.parent


def recurring() -> dict[str, Schedule]:
    rows = list(Schedule.objects.exclude(schedule_type=Schedule.ONCE))
    assert len({row.name for row in rows}) == len(rows), "a schedule name twice"
    return {row.name: row for row in rows}


@pytest.mark.django_db
def test_a_migrated_database_has_exactly_the_declared_schedules():
    rows = recurring()
    assert set(rows) == {schedule.name for schedule in SCHEDULES}
    for schedule in SCHEDULES:
        row = rows[schedule.name]
        assert row.func == schedule.func and row.repeats == -1
        if schedule.monthly:
            assert row.schedule_type == Schedule.MONTHLY
        elif schedule.daily:
            assert row.schedule_type == Schedule.DAILY
        else:
            assert (row.schedule_type, row.minutes) == (Schedule.MINUTES, schedule.minutes)


@pytest.mark.django_db
def test_syncing_again_changes_nothing():
    before = {name: (row.pk, row.next_run, row.func) for name, row in recurring().items()}
    assert not schedules_sync()
    assert not schedules_sync()
    assert {name: (row.pk, row.next_run, row.func) for name, row in recurring().items()} == before


@pytest.mark.django_db
def test_a_changed_declaration_updates_its_schedule_and_keeps_it_one_row():
    sweep = next(schedule for schedule in SCHEDULES if schedule.name == "api-webhook-sweep")
    later = timezone.now() + timedelta(hours=1)
    Schedule.objects.filter(name=sweep.name).update(next_run=later)
    declared = tuple(
        dataclasses.replace(schedule, minutes=2) if schedule is sweep else schedule for schedule in SCHEDULES
    )

    synced = schedules_sync(declared=declared)

    assert synced.updated == [sweep.name] and not synced.created and not synced.removed
    row = recurring()[sweep.name]
    assert row.minutes == 2
    assert row.next_run < later  # the new cadence counts from now
    assert not schedules_sync(declared=declared)


@pytest.mark.django_db
def test_a_schedule_no_longer_declared_is_removed_and_a_new_one_created():
    new = Recurring(name="tests-new", func="verification.tasks.spark_codes_expire", purpose="-", daily=True)
    declared = (*[schedule for schedule in SCHEDULES if schedule.name != "privacy-retention"], new)

    synced = schedules_sync(declared=declared)

    assert synced.removed == ["privacy-retention"] and synced.created == ["tests-new"]
    assert set(recurring()) == {schedule.name for schedule in declared}


@pytest.mark.django_db
def test_one_off_schedules_are_left_alone_and_recurring_ones_made_elsewhere_are_removed():
    one_off = Schedule.objects.create(
        name="engagement-recheck-1",
        func="verification.tasks.engagement_recheck_task",
        args="1",
        schedule_type=Schedule.ONCE,
        repeats=1,
        next_run=timezone.now() + timedelta(days=1),
    )
    # A row the old migrations made with an old task name, and a second row for one name.
    Schedule.objects.filter(name="payouts-bank-statements-fetch").update(
        func="payouts.reconciliation_tasks.bank_statements_fetch_task"
    )
    Schedule.objects.create(
        name="payouts-sweep", func="payouts.tasks.payouts_sweep_task", schedule_type="I", minutes=1
    )
    Schedule.objects.create(name="made-in-the-admin", func="math.floor", schedule_type=Schedule.HOURLY)

    synced = schedules_sync()

    assert sorted(synced.removed) == ["made-in-the-admin", "payouts-sweep"]
    assert synced.updated == ["payouts-bank-statements-fetch"]
    assert Schedule.objects.filter(pk=one_off.pk).exists()
    assert set(recurring()) == {schedule.name for schedule in SCHEDULES}


@pytest.mark.django_db
def test_the_command_syncs_and_says_so(capsys):
    Schedule.objects.filter(name="standing-work").delete()
    call_command("schedules_sync")
    assert "created standing-work" in capsys.readouterr().out
    call_command("schedules_sync")
    assert "already match" in capsys.readouterr().out


def test_every_declared_path_imports():
    for schedule in SCHEDULES:
        assert callable(import_string(schedule.func)), schedule.name
    for kind in STANDING_WORK:
        for path in (kind.process, kind.unfinished, kind.gather, kind.stop):
            if path is not None:
                assert callable(import_string(path)), (kind.name, path)
        if kind.max_attempts is not None:
            assert isinstance(import_string(kind.max_attempts), int), kind.name
    assert len({s.name for s in SCHEDULES}) == len(SCHEDULES)
    assert len({k.name for k in STANDING_WORK}) == len(STANDING_WORK)


@pytest.mark.django_db
def test_the_standing_worker_does_every_declared_kind():
    assert PAYOUTS_DUE in {kind.name for kind in STANDING_WORK}
    assert [health.name for health in standing_work_health()] == [kind.name for kind in STANDING_WORK]


def test_the_design_page_lists_what_the_code_declares():
    design = (ROOT / "docs" / "design.md").read_text()
    table = background_work_table()
    assert table in design, f"docs/design.md's 'What runs where' should carry, as it is:\n\n{table}"


def test_no_migration_writes_schedules():
    apps = ("joyback", "campaigns", "compliance", "verification", "payouts")
    paths = [path for app in apps for path in (ROOT / app).glob("**/migrations/*.py")]
    assert len(paths) > 50
    for path in paths:
        assert '"Schedule"' not in path.read_text(), f"{path}: declare it in joyback/background.py"


def test_the_task_clusters_command_finds_the_django_q2_internals_it_relies_on():
    # joyback/management/commands/qcluster.py says why it uses each; an upgrade that moves one fails
    # here, at once, rather than in the slow shutdown test or in production.
    import inspect

    from django_q import cluster

    start = inspect.getsource(cluster.Cluster.start)
    assert "target=Sentinel" in start
    init = inspect.getsource(cluster.Cluster.__init__)
    assert all(f"self.{name} =" in init for name in ("sentinel", "stop_event", "start_event", "timeout"))
    sentinel_init = inspect.getsource(cluster.Sentinel.__init__)
    assert sentinel_init.index("signal.SIGTERM, signal.SIG_DFL") < sentinel_init.index("self.start()")
    spawn = inspect.getsource(cluster.Sentinel.spawn_process)
    assert "p.timer = " in spawn and "self.pool.append(p)" in spawn
    assert "process.timer.value == 0" in inspect.getsource(cluster.Sentinel.reincarnate)


@pytest.mark.django_db
def test_the_task_cluster_syncs_the_schedules_before_it_starts(monkeypatch):
    from django_q import cluster

    from joyback.management.commands import qcluster

    monkeypatch.setattr(cluster, "Sentinel", cluster.Sentinel)  # the command replaces it
    Schedule.objects.filter(name="standing-work").delete()
    seen_at_start = []

    class NoCluster:
        def start(self):
            seen_at_start.append(set(recurring()))

    monkeypatch.setattr(qcluster, "Cluster", NoCluster)
    call_command("qcluster")
    assert seen_at_start == [{schedule.name for schedule in SCHEDULES}]
