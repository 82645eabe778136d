"""Sessions come from the cache only when every web process shares it (Redis)."""

import os
import subprocess
import sys


def session_engine(**env) -> str:
    environment = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    environment.update(JOYBACK_ENV="test", **env)
    result = subprocess.run(
        [sys.executable, "-c", "import joyback.settings as s; print(getattr(s, 'SESSION_ENGINE', 'db'))"],
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
    assert session_engine() == "db"
