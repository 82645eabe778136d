"""Django's PostgreSQL backend with a health check that needs no round trip, and prepared statements
where the code asks for them (joyback.postgresql.prepared).

With CONN_HEALTH_CHECKS, Django asks a reused connection `SELECT 1` before the first query of every
request: one more round trip per request. A server that restarts, terminates a backend or drops
an idle connection says so on the socket (an error message, then the end of the stream), so a
connection whose socket has nothing to read is as healthy as a `SELECT 1` would find it; only
when something has arrived is it asked properly.
"""

import select

import psycopg
from django.db.backends.postgresql import base

# psycopg prepares a statement after this many runs; none of Django's queries is meant to reach it.
PREPARE_ONLY_WHEN_ASKED = 2**31 - 1


class DatabaseWrapper(base.DatabaseWrapper):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._prepared_cursor = None

    def get_connection_params(self):
        params = super().get_connection_params()
        if "prepare_threshold" not in self.settings_dict["OPTIONS"]:
            # Django's default threshold, None, keeps connection poolers working by preparing
            # nothing, and psycopg then ignores even execute(prepare=True). A threshold no query
            # reaches prepares only the statements that ask; a pooler that cannot keep prepared
            # statements is configured with OPTIONS["prepare_threshold"] = None.
            params["prepare_threshold"] = PREPARE_ONLY_WHEN_ASKED
        return params

    def is_usable(self):
        connection = self.connection
        if connection is None or connection.closed or connection.broken:
            return False
        poller = select.poll()
        poller.register(connection.fileno(), select.POLLIN | select.POLLPRI)
        if poller.poll(0):  # the server spoke (or hung up) while we were idle
            return super().is_usable()
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
