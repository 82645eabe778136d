"""Sessions come from the cache only when every web process shares it (Redis)."""

import os
import subprocess
import sys


def session_engine(**env) -> str:
    environment = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    environment.update(JOYBACK_ENV="test", **env)
    result = subprocess.run(
        [sys.executable, "-c", "import config.settings as s; print(getattr(s, 'SESSION_ENGINE', 'db'))"],
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


def test_with_redis_sessions_are_read_from_the_shared_cache():
    assert (
        session_engine(REDIS_URL="redis://127.0.0.1:6379/0") == "django.contrib.sessions.backends.cached_db"
    )


def test_without_redis_sessions_stay_in_the_database():
    # A per-process LocMemCache would keep a session alive in one worker after a logout in another.
    assert session_engine() == "joyback.sessions"


def test_a_session_read_without_the_orm_is_the_same_session(client, db):
    from django.contrib.sessions.models import Session
    from django.utils import timezone

    from joyback.sessions import SessionStore

    session = SessionStore()
    session["joyback.participant.1"] = 42
    session.create()

    assert SessionStore(session.session_key).load() == {"joyback.participant.1": 42}
    assert SessionStore("no-such-session-key-at-all-000000").load() == {}
    Session.objects.filter(pk=session.session_key).update(expire_date=timezone.now())
    expired = SessionStore(session.session_key)
    assert expired.load() == {} and expired.session_key is None  # a new one is made, never reused
