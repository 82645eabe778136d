"""Reused database connections: a dead one is replaced before the request uses it, a live one is
reused without a query."""

import psycopg
import pytest
from django.conf import settings
from django.db import connection
from django.db.backends.postgresql import base

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def next_request():
    """What Django does when a request starts with a kept connection."""
    connection.health_check_done = False
    connection.close_if_health_check_failed()


def test_a_live_connection_is_reused_without_a_round_trip(monkeypatch):
    pid = backend_pid()
    asked = []  # Django's own check: a SELECT 1 round trip
    monkeypatch.setattr(base.DatabaseWrapper, "is_usable", lambda self: asked.append(True) or True)

    next_request()

    assert asked == [] and backend_pid() == pid


def test_a_connection_the_server_terminated_is_replaced():
    pid = backend_pid()
    url = settings.DATABASES["default"]
    with psycopg.connect(
        host=url["HOST"] or "localhost",
        port=url["PORT"] or 5432,
        user=url["USER"],
        dbname=url["NAME"],
        password=url["PASSWORD"] or None,
        autocommit=True,
    ) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])
        admin.execute("SELECT pg_sleep(0.2)")  # its farewell reaches our socket

    next_request()

    assert backend_pid() != pid  # a new connection, and the request's query worked
