"""The settings fail safe: production refuses to start without a SECRET_KEY."""

import os
import subprocess
import sys


def load_settings(**env):
    environment = {
        key: value for key, value in os.environ.items() if key not in {"SECRET_KEY", "JOYBACK_ENV"}
    }
    environment.update(env)
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import config.settings as s; print(s.DEBUG, s.SESSION_COOKIE_SECURE)",
        ],
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )


def test_production_without_secret_key_refuses_to_start():
    result = load_settings()
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_production_with_secret_key_is_secure_by_default():
    result = load_settings(
        SECRET_KEY="s" * 50,
        ALLOWED_HOSTS="joyback.example",
        PAYEE_ENCRYPTION_KEYS="b3BlbnNlc2FtZS1vcGVuc2VzYW1lLW9wZW5zZXNhbWU=",
        PAYEE_FINGERPRINT_KEY="f" * 40,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True"]


def test_production_without_payee_encryption_keys_refuses_to_start():
    result = load_settings(SECRET_KEY="s" * 50)
    assert "PAYEE_ENCRYPTION_KEYS must be set" in result.stderr


def test_production_without_a_fingerprint_key_refuses_to_start():
    result = load_settings(
        SECRET_KEY="s" * 50, PAYEE_ENCRYPTION_KEYS="b3BlbnNlc2FtZS1vcGVuc2VzYW1lLW9wZW5zZXNhbWU="
    )
    assert "PAYEE_FINGERPRINT_KEY must be set" in result.stderr


def test_an_unknown_environment_name_is_refused():
    result = load_settings(JOYBACK_ENV="staging")
    assert "JOYBACK_ENV must be" in result.stderr
