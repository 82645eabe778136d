"""Reused database connections: a dead one is replaced before the request uses it, a live one is
reused without a query; the statements that ask to be prepared are, and Django's own are not."""

import socket
import threading
import time

import psycopg
import pytest
from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.backends.postgresql import base

from joyback.postgresql import base as postgresql_base
from joyback.postgresql.base import DatabaseWrapper
from joyback.postgresql.prepared import prepared_fetchall, prepared_pipeline

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


def test_statements_sent_together_run_in_order_each_seeing_the_one_before():
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("CREATE TEMPORARY TABLE sent (n int PRIMARY KEY) ON COMMIT DROP")
        written, counted = prepared_pipeline(
            ("INSERT INTO sent VALUES (%s) RETURNING n", [7]), ("SELECT count(*) FROM sent", [])
        )

        assert (written, counted) == ([(7,)], [(1,)])
        assert prepared_fetchall("SELECT n FROM sent", []) == [(7,)]  # and the connection goes on
    assert "SELECT count(*) FROM sent" in prepared_statements()


def test_an_error_among_statements_sent_together_fails_the_transaction():
    with pytest.raises(IntegrityError), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("CREATE TEMPORARY TABLE sent (n int PRIMARY KEY)")
        prepared_pipeline(("INSERT INTO sent VALUES (%s)", [1]), ("INSERT INTO sent VALUES (%s)", [1]))

    assert prepared_fetchall("SELECT 1", []) == [(1,)]  # rolled back, the connection usable


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


class FreezableProxy:
    """A TCP relay in front of the database that can go silent without closing anything, as a
    server behind a dropped route or a crashed host does: bytes sent are accepted, none come back."""

    def __init__(self, settings_dict):
        host = settings_dict["HOST"] or "127.0.0.1"
        port = int(settings_dict["PORT"] or 5432)
        if host.startswith("/"):
            self.upstream = (socket.AF_UNIX, f"{host}/.s.PGSQL.{port}")
        else:
            self.upstream = (socket.AF_INET, (host, port))
        self.frozen = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.socket(self.upstream[0], socket.SOCK_STREAM)
            server.connect(self.upstream[1])
            self.sockets += [client, server]
            for source, target in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(source, target), daemon=True).start()

    def _pipe(self, source, target):
        frozen_here = self.frozen.is_set()  # a connection made while frozen is a healthy new route
        while True:
            try:
                data = source.recv(65536)
            except OSError:
                return
            if not data:
                return
            if self.frozen.is_set() and not frozen_here:
                continue  # swallowed: neither side hears anything, neither side is told
            target.sendall(data)

    def close(self):
        self.listener.close()
        for sock in self.sockets:
            sock.close()


def test_a_connection_to_a_server_gone_silent_is_replaced_within_the_check_deadline(monkeypatch):
    """A half-open connection: before, its silent socket passed as healthy and the request's first
    query waited for the kernel's TCP timeout."""
    proxy = FreezableProxy(settings.DATABASES["default"])
    through_proxy = {**settings.DATABASES["default"], "HOST": "127.0.0.1", "PORT": str(proxy.port)}
    wrapper = DatabaseWrapper(through_proxy, alias="through_proxy")
    first_pid = None
    try:
        wrapper.ensure_connection()
        with wrapper.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            first_pid = cursor.fetchone()[0]
        proxy.frozen.set()
        monkeypatch.setattr(postgresql_base, "IDLE_TRUST_SECONDS", 0.0)  # as after a quiet minute
        monkeypatch.setattr(postgresql_base, "CHECK_TIMEOUT_SECONDS", 0.5)

        started = time.monotonic()
        wrapper.health_check_done = False
        wrapper.close_if_health_check_failed()

        assert wrapper.connection is None  # given up on, not handed to the request
        assert time.monotonic() - started < 5
        with wrapper.cursor() as cursor:  # the request's query runs on a new connection
            cursor.execute("SELECT pg_backend_pid()")
            assert cursor.fetchone()[0] != first_pid
    finally:
        wrapper.close()
        proxy.close()
        if first_pid:
            terminate(first_pid)  # its backend may not have read the end of its socket yet


def test_a_connection_idle_past_the_trust_window_that_answers_is_kept(monkeypatch):
    pid = backend_pid()
    monkeypatch.setattr(postgresql_base, "IDLE_TRUST_SECONDS", 0.0)

    next_request()

    assert connection.connection is not None and backend_pid() == pid
