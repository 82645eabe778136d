"""Django's database sessions, read with one plain statement on PostgreSQL.

Every page of the claim flow reads its session; building the ORM query for it cost more than the
database took to answer it. Writing, expiry and everything else are Django's own."""

from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.db import router
from django.utils import timezone

from joyback.sql import session_data_get


class SessionStore(DatabaseSessionStore):
    def load(self):
        if not self.session_key:
            return super().load()
        data = session_data_get(
            using=router.db_for_read(self.model),
            table=self.model._meta.db_table,
            session_key=self.session_key,
            now=timezone.now(),
        )
        if data is None:
            self._session_key = None
            return {}
        return self.decode(data)
