"""Django's database sessions, read with one plain statement on PostgreSQL.

Every page of the claim flow reads its session; building the ORM query for it cost more than the
database took to answer it. Writing, expiry and everything else are Django's own."""

from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.db import connections, router
from django.utils import timezone


class SessionStore(DatabaseSessionStore):
    def load(self):
        connection = connections[router.db_for_read(self.model)]
        if not self.session_key:
            return super().load()
        with connection.cursor() as cursor:
            cursor.execute(
                _SESSION_SELECT.format(table=self.model._meta.db_table), [self.session_key, timezone.now()]
            )
            row = cursor.fetchone()
        if row is None:
            self._session_key = None
            return {}
        return self.decode(row[0])


_SESSION_SELECT = "SELECT session_data FROM {table} WHERE session_key = %s AND expire_date > %s"
