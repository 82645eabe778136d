"""Django's PostgreSQL backend with a health check that needs no round trip.

With CONN_HEALTH_CHECKS, Django asks a reused connection `SELECT 1` before the first query of every
request: one more round trip per request. A server that restarts, terminates a backend or drops
an idle connection says so on the socket (an error message, then the end of the stream), so a
connection whose socket has nothing to read is as healthy as a `SELECT 1` would find it; only
when something has arrived is it asked properly.
"""

import select

from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self):
        connection = self.connection
        if connection is None or connection.closed or connection.broken:
            return False
        poller = select.poll()
        poller.register(connection.fileno(), select.POLLIN | select.POLLPRI)
        if poller.poll(0):  # the server spoke (or hung up) while we were idle
            return super().is_usable()
        return True
