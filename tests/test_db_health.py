"""Reused database connections: a dead one is replaced before the request uses it, a live one is
reused without a query; the statements that ask to be prepared are, and Django's own are not."""

import psycopg
import pytest
from django.conf import settings
from django.db import connection
from django.db.backends.postgresql import base

from joyback.postgresql.prepared import prepared_fetchall

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


def terminate(pid: int) -> None:
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


def test_a_connection_the_server_terminated_is_replaced():
    pid = backend_pid()
    terminate(pid)

    next_request()

    assert backend_pid() != pid  # a new connection, and the request's query worked


def prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def test_a_statement_run_through_prepared_fetchall_is_prepared_on_its_connection():
    statement = "SELECT %s::int + 1"

    assert prepared_fetchall(statement, [1]) == [(2,)]
    assert prepared_fetchall(statement, [41]) == [(42,)]

    assert prepared_statements() == ["SELECT $1::int + 1"]


def test_django_queries_are_not_prepared_however_often_they_run():
    for number in range(20):
        with connection.cursor() as cursor:
            cursor.execute("SELECT %s::int", [number])

    assert prepared_statements() == []


def test_prepared_statements_run_on_the_connection_that_replaced_a_terminated_one():
    pid = backend_pid()
    assert prepared_fetchall("SELECT pg_backend_pid()", []) == [(pid,)]
    terminate(pid)

    next_request()

    replacement = backend_pid()
    assert replacement != pid
    assert prepared_fetchall("SELECT pg_backend_pid()", []) == [(replacement,)]
    assert prepared_statements() == ["SELECT pg_backend_pid()"]
