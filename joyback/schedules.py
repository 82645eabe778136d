"""The recurring schedules in the database made to match joyback.background.SCHEDULES.

Run when the task cluster starts (`manage.py qcluster`), after every `manage.py migrate` (a
post_migrate receiver) and by hand with `manage.py schedules_sync`. Every recurring schedule is the
code's: one declared is created or brought up to date, one no longer declared is removed, so a
recurring schedule made in the admin lasts until the next start. One-off schedules (retries and
re-checks the running code sets for a time, the tasks kept while Redis is down) are never touched.
"""

import logging
from dataclasses import dataclass, field

from django.db import connections, transaction
from django.utils import timezone
from django_q.models import Schedule

from joyback import sql
from joyback.background import SCHEDULES, Recurring

logger = logging.getLogger(__name__)

# Any fixed number, used for nothing else: two machines starting at once sync one after the other
# (schedule names are not unique in django-q2's table, so both would otherwise create a row).
SCHEDULES_SYNC_LOCK = 0x4A6F795363686564  # "JoySched"


@dataclass
class SchedulesSynced:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.created or self.updated or self.removed)


def _wanted(recurring: Recurring) -> dict:
    return {
        "func": recurring.func,
        "schedule_type": (
            Schedule.MONTHLY if recurring.monthly else Schedule.DAILY if recurring.daily else Schedule.MINUTES
        ),
        "minutes": recurring.minutes,
        "repeats": -1,
        "args": None,
        "kwargs": None,
        "hook": None,
        "cron": None,
        "cluster": None,
    }


def schedules_sync(*, declared: tuple[Recurring, ...] = SCHEDULES) -> SchedulesSynced:
    """Make the database's recurring schedules exactly `declared`; what changed. Safe to run on
    every start and from several machines at once; a second run changes nothing."""
    synced = SchedulesSynced()
    with transaction.atomic(durable=True):
        sql.advisory_xact_lock(SCHEDULES_SYNC_LOCK)
        existing = {}
        for schedule in Schedule.objects.exclude(schedule_type=Schedule.ONCE).order_by("pk"):
            if schedule.name in existing or schedule.name not in {r.name for r in declared}:
                synced.removed.append(schedule.name)
                schedule.delete()
            else:
                existing[schedule.name] = schedule
        for recurring in declared:
            wanted = _wanted(recurring)
            schedule = existing.get(recurring.name)
            if schedule is None:
                Schedule.objects.create(name=recurring.name, next_run=timezone.now(), **wanted)
                synced.created.append(recurring.name)
                continue
            changed = {key: value for key, value in wanted.items() if getattr(schedule, key) != value}
            if not changed:
                continue
            if {"schedule_type", "minutes"} & changed.keys():
                # The new cadence counts from now, not from a next run the old one set.
                changed["next_run"] = timezone.now()
            Schedule.objects.filter(pk=schedule.pk).update(**changed)
            synced.updated.append(recurring.name)
    if synced:
        logger.info(
            "schedules synced: created %s, updated %s, removed %s",
            synced.created,
            synced.updated,
            synced.removed,
        )
    return synced


def schedules_sync_after_migrate(sender, *, using, plan=None, **kwargs) -> None:
    """post_migrate: the schedules the migrated code declares (a test database's too)."""
    # A migrate that left django-q2's tables out (one app's, or back to before them) has none.
    if using != "default" or Schedule._meta.db_table not in connections[using].introspection.table_names():
        return
    schedules_sync()
