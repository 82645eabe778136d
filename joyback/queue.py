"""Enqueueing work for the task queue, after commit, through one broker per process.

django-q2 opens a new broker (a new Redis connection) on every async_task unless given one; a
webhook that enqueues on every request would spend most of its time connecting.
"""

import threading
from functools import partial

from django.db import transaction
from django_q.brokers import get_broker
from django_q.tasks import async_task

_local = threading.local()


def _broker():
    if getattr(_local, "broker", None) is None:
        _local.broker = get_broker()
    return _local.broker


def enqueue_on_commit(func: str, *args) -> None:
    """Queue func(*args) once the current transaction commits (at once outside one)."""
    transaction.on_commit(partial(_enqueue, func, *args))


def _enqueue(func: str, *args) -> None:
    async_task(func, *args, broker=_broker())
