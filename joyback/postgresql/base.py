"""Django's PostgreSQL backend with a health check that needs no round trip, and prepared statements
where the code asks for them (joyback.postgresql.prepared).

With CONN_HEALTH_CHECKS, Django asks a reused connection `SELECT 1` before the first query of every
request: one more round trip per request. A server that restarts, terminates a backend or drops
an idle connection says so on the socket (an error message, then the end of the stream), so a
connection whose socket has nothing to read, and that answered within the last few seconds, is
as healthy as a `SELECT 1` would find it. A silent socket is not proof on its own: a server that
vanished (a crashed host, a failover, a dropped route) says nothing at all, and a query sent there
waits for the kernel's TCP timeout, many minutes. So a connection idle for longer than
IDLE_TRUST_SECONDS, or whose socket has something to read, is asked `SELECT 1` with a deadline,
and replaced when it does not answer in time. TCP keepalives make the kernel notice a dead peer of
an idle connection too.
"""

import select
import time

import psycopg
from django.db.backends.postgresql import base
from psycopg import pq

# psycopg prepares a statement after this many runs; none of Django's queries is meant to reach it.
PREPARE_ONLY_WHEN_ASKED = 2**31 - 1
# A connection that answered this recently, with nothing waiting on its socket, is used unasked.
IDLE_TRUST_SECONDS = 5.0
# How long an asked connection gets to answer SELECT 1 before it is given up for a new one.
CHECK_TIMEOUT_SECONDS = 2.0
KEEPALIVES = {"keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10, "keepalives_count": 3}


class DatabaseWrapper(base.DatabaseWrapper):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._prepared_cursor = None
        self._answered_at = 0.0

    def get_connection_params(self):
        params = super().get_connection_params()
        if "prepare_threshold" not in self.settings_dict["OPTIONS"]:
            # Django's default threshold, None, keeps connection poolers working by preparing
            # nothing, and psycopg then ignores even execute(prepare=True). A threshold no query
            # reaches prepares only the statements that ask; a pooler that cannot keep prepared
            # statements is configured with OPTIONS["prepare_threshold"] = None.
            params["prepare_threshold"] = PREPARE_ONLY_WHEN_ASKED
        if not (params.get("host") or "").startswith("/"):  # TCP only: a Unix socket has no peer to lose
            params = {**KEEPALIVES, **params}
        return params

    def get_new_connection(self, conn_params):
        connection = super().get_new_connection(conn_params)
        self._answered_at = time.monotonic()
        return connection

    def is_usable(self):
        connection = self.connection
        if connection is None or connection.closed or connection.broken:
            return False
        poller = select.poll()
        poller.register(connection.fileno(), select.POLLIN | select.POLLPRI)
        spoke = poller.poll(0)  # the server spoke (or hung up, or the kernel saw the peer die)
        if not spoke and time.monotonic() - self._answered_at < IDLE_TRUST_SECONDS:
            return True
        if not _answers_in_time(connection.pgconn, timeout=CHECK_TIMEOUT_SECONDS):
            return False
        self._answered_at = time.monotonic()
        return True

    def prepared_cursor(self) -> psycopg.Cursor:
        """A plain psycopg cursor of the current connection (connected and health-checked as for
        Django's own cursors), kept for the connection's life: the statements that run on every
        request are executed through it without a new cursor and Django's wrapper each time."""
        self.close_if_health_check_failed()
        self.ensure_connection()
        if self._prepared_cursor is None or self._prepared_cursor.connection is not self.connection:
            self._prepared_cursor = psycopg.Cursor(self.connection)
        return self._prepared_cursor


def _answers_in_time(pgconn: pq.abc.PGconn, *, timeout: float) -> bool:
    """`SELECT 1` through libpq's asynchronous calls, waiting at most `timeout` seconds in all:
    psycopg's own execute would wait for the kernel to give up on a silent peer."""
    deadline = time.monotonic() + timeout
    try:
        if pgconn.transaction_status != pq.TransactionStatus.IDLE:
            return False  # never reused mid-transaction; anything else is not a state to build on
        pgconn.nonblocking = 1
        pgconn.send_query(b"SELECT 1")
        while pgconn.flush():
            if not _wait(pgconn.socket, select.POLLOUT, deadline):
                return False
        ok = True
        while True:
            while pgconn.is_busy():
                if not _wait(pgconn.socket, select.POLLIN, deadline):
                    return False
                pgconn.consume_input()
            result = pgconn.get_result()
            if result is None:
                return ok
            ok = ok and result.status == pq.ExecStatus.TUPLES_OK
    except psycopg.Error:
        return False
    finally:
        if not pgconn.status:  # still CONNECTION_OK (0): leave it as psycopg expects it
            pgconn.nonblocking = 0


def _wait(fileno: int, events: int, deadline: float) -> bool:
    poller = select.poll()
    poller.register(fileno, events)
    left = deadline - time.monotonic()
    return left > 0 and bool(poller.poll(left * 1000))
