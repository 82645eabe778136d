"""Enqueueing work for the task queue, after commit, through one broker per process.

django-q2 opens a new broker (a new Redis connection) on every async_task unless given one; a
webhook that enqueues on every request would spend most of its time connecting.
"""

import threading
from functools import partial

from django.db import DEFAULT_DB_ALIAS, transaction
from django.utils import timezone
from django_q.brokers import get_broker
from django_q.conf import Conf
from django_q.humanhash import uuid as humanhash_uuid
from django_q.signals import pre_enqueue
from django_q.signing import SignedPackage
from django_q.tasks import async_task

_local = threading.local()


def _broker():
    if getattr(_local, "broker", None) is None:
        _local.broker = get_broker()
    return _local.broker


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
    from django_q.models import Schedule

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
    async_task(func, *args, broker=_broker())


def broker_row(func: str, *args) -> tuple[str, str] | None:
    """The task row the database broker would store for func(*args): (queue name, signed package),
    built as django_q.tasks.async_task builds it, for a caller that inserts it within its own
    statement. None unless the database is the broker and tasks run in workers."""
    if not _database_broker():
        return None
    name, task_id = humanhash_uuid()
    task = {"id": task_id, "name": name, "func": func, "args": args}
    if Conf.CACHED:
        task["cached"] = Conf.CACHED
    if Conf.ACK_FAILURES:
        task["ack_failure"] = Conf.ACK_FAILURES
    task["kwargs"] = {}
    task["started"] = timezone.now()
    pre_enqueue.send(sender="django_q", task=task)
    return _broker().list_key or Conf.CLUSTER_NAME, SignedPackage.dumps(task)
