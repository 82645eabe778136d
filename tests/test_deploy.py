"""The deployment: the container's entrypoint picks the role, migrates one machine at a time and
refuses to start without the settings production needs; the image's files are all there.

The entrypoint runs for real (sh), with PYTHON pointing at a stand-in that records what it was
asked to run, so each role's command is what the test reads."""

import base64
import os
import re
import stat
import subprocess
import sys
import threading
from pathlib import Path

import psycopg
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from joyback.management.commands.migrate_locked import MIGRATE_LOCK

ROOT = Path(__file__).resolve().parent.parent
ENTRYPOINT = ROOT / "deploy" / "entrypoint.sh"
PRODUCTION = {
    "SECRET_KEY": "s3cret",
    "DATABASE_URL": "postgres://joyback@db.internal:5432/joyback",
    "ALLOWED_HOSTS": "joyback.example",
    "SITE_URL": "https://joyback.example",
    "PAYEE_ENCRYPTION_KEYS": "a2V5",
    "PAYEE_FINGERPRINT_KEY": "fingerprints",
    "ADYEN_API_KEY": "key",
    "ADYEN_BALANCE_ACCOUNT_ID": "BA1",
    "ADYEN_HMAC_KEYS": "00",
    "PAYOUT_DEBTOR_IBAN": "DE02100100100006820101",
    "INVOICE_ISSUER_ADDRESS": "Example Street 1, 10115 Berlin",
    "INVOICE_ISSUER_VAT_ID": "DE811907980",
}


def entrypoint(tmp_path, *args, env=None, python_fails_on=""):
    """Run the entrypoint; (exit code, stderr, the commands the stand-in python was given)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    calls = tmp_path / "calls"
    fake = tmp_path / "python"
    fake.write_text(
        "#!/bin/sh\n"
        f'echo "DATABASE_URL=$DATABASE_URL $*" >> {calls}\n'
        + (f'case "$*" in *{python_fails_on}*) exit 3 ;; esac\n' if python_fails_on else "")
        + "exit 0\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    done = subprocess.run(
        ["sh", str(ENTRYPOINT), *args],
        cwd=ROOT,
        env={"PATH": os.environ["PATH"], "PYTHON": str(fake), **(env or {})},
        capture_output=True,
        text=True,
        timeout=30,
    )
    ran = calls.read_text().splitlines() if calls.exists() else []
    return done.returncode, done.stderr, ran


@pytest.mark.parametrize(
    ("role", "command"),
    [
        ("web", "-m gunicorn -c deploy/gunicorn.conf.py config.wsgi"),
        ("worker", "manage.py qcluster"),
        ("standing", "manage.py work"),
    ],
)
def test_each_role_migrates_under_the_lock_then_runs_its_process(tmp_path, role, command):
    code, err, ran = entrypoint(tmp_path, role, env=PRODUCTION)

    assert code == 0, err
    assert ran == [
        f"DATABASE_URL={PRODUCTION['DATABASE_URL']} manage.py migrate_locked --no-input",
        f"DATABASE_URL={PRODUCTION['DATABASE_URL']} {command}",
    ]


def test_the_migrations_go_to_the_primary_itself_when_the_app_talks_to_a_pooler(tmp_path):
    env = {**PRODUCTION, "MIGRATE_DATABASE_URL": "postgres://joyback@primary.internal:5432/joyback"}

    code, err, ran = entrypoint(tmp_path, "web", env=env)

    assert code == 0, err
    assert ran[0].startswith(
        "DATABASE_URL=postgres://joyback@primary.internal:5432/joyback manage.py migrate"
    )
    assert ran[1].startswith(f"DATABASE_URL={PRODUCTION['DATABASE_URL']} -m gunicorn")


def test_a_release_step_migrates_and_the_processes_then_skip_it(tmp_path):
    assert entrypoint(tmp_path / "a", "migrate", env=PRODUCTION)[2] == [
        f"DATABASE_URL={PRODUCTION['DATABASE_URL']} manage.py migrate_locked --no-input"
    ]
    code, _err, ran = entrypoint(tmp_path / "b", "worker", env={**PRODUCTION, "MIGRATE_ON_START": "0"})
    assert code == 0
    assert ran == [f"DATABASE_URL={PRODUCTION['DATABASE_URL']} manage.py qcluster"]


def test_a_failed_migration_starts_nothing(tmp_path):
    code, _err, ran = entrypoint(tmp_path, "web", env=PRODUCTION, python_fails_on="migrate_locked")

    assert code == 3
    assert len(ran) == 1 and "migrate_locked" in ran[0]


@pytest.mark.parametrize(
    "missing", ["SECRET_KEY", "DATABASE_URL", "SITE_URL", "PAYEE_ENCRYPTION_KEYS", "ADYEN_HMAC_KEYS"]
)
def test_it_refuses_to_start_without_a_setting_production_needs(tmp_path, missing):
    env = {key: value for key, value in PRODUCTION.items() if key != missing}

    code, err, ran = entrypoint(tmp_path, "web", env=env)

    assert code == 78
    assert f"not set: {missing}" in err
    assert ran == []  # nothing ran, not even the migrations


def test_the_sandbox_needs_no_payment_provider_keys(tmp_path):
    env = {key: value for key, value in PRODUCTION.items() if not key.startswith(("ADYEN", "PAYOUT"))}

    code, err, _ran = entrypoint(
        tmp_path, "standing", env={**env, "SANDBOX": "1", "JOYBACK_ENV": "development"}
    )

    assert code == 0, err


@pytest.mark.parametrize("sandbox", ["1", "true", "ON"])
def test_the_sandbox_is_refused_in_production(tmp_path, sandbox):
    code, err, ran = entrypoint(tmp_path, "web", env={**PRODUCTION, "SANDBOX": sandbox})

    assert code == 78
    assert "SANDBOX is on in production (unset it)" in err
    assert ran == []


def test_an_unknown_role_is_refused(tmp_path):
    code, err, ran = entrypoint(tmp_path, "cron", env=PRODUCTION)

    assert code == 64
    assert "unknown role 'cron'" in err
    assert ran == [] or all("migrate" in line for line in ran)


def _lock_holder(url_params: dict, ready: threading.Event, release: threading.Event):
    with psycopg.connect(**url_params, autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(%s)", [MIGRATE_LOCK])
        ready.set()
        release.wait(30)
        other.execute("SELECT pg_advisory_unlock(%s)", [MIGRATE_LOCK])


@pytest.mark.django_db(transaction=True)
def test_migrations_wait_for_the_machine_that_is_migrating(capsys):
    params = connection.get_connection_params()
    params = {key: params[key] for key in ("host", "port", "user", "dbname", "password") if params.get(key)}
    ready, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=_lock_holder, args=(params, ready, release))
    holder.start()
    try:
        assert ready.wait(10)
        with pytest.raises(CommandError, match="held the migration lock"):
            call_command("migrate_locked", wait=1.5)
        assert "another machine is migrating" in capsys.readouterr().out
    finally:
        release.set()
        holder.join(10)

    call_command("migrate_locked", wait=5)  # the lock is free: it migrates (nothing left to do)

    with connection.cursor() as cursor:  # and lets go of the lock afterwards
        cursor.execute(
            "SELECT pg_try_advisory_lock(%s), pg_advisory_unlock(%s)", [MIGRATE_LOCK, MIGRATE_LOCK]
        )
        assert cursor.fetchone() == (True, True)


def test_every_file_the_containerfile_copies_is_in_the_repository():
    text = (ROOT / "deploy" / "Containerfile").read_text()
    sources = []
    for found in re.finditer(r"^COPY (?!--from)(?:--\S+ )*(.+) \S+$", text, re.MULTILINE):
        sources += found.group(1).split()
    assert "requirements.lock" in sources and "joyback" in sources
    for source in sources:
        assert (ROOT / source).exists(), source
    # Every app the settings install is copied into the image.
    for app in ("joyback", "campaigns", "compliance", "verification", "payouts"):
        assert app in sources
    assert os.access(ENTRYPOINT, os.X_OK)


def test_the_units_and_the_procfile_run_the_entrypoints_roles():
    units = {path.name: path.read_text() for path in (ROOT / "deploy" / "systemd").glob("*.service")}
    roles = {name: re.search(r"entrypoint\.sh (\w+)", text).group(1) for name, text in units.items()}
    assert roles == {
        "joyback-migrate.service": "migrate",
        "joyback-web@.service": "web",
        "joyback-worker.service": "worker",
        "joyback-standing.service": "standing",
    }
    for name, text in units.items():
        if name != "joyback-migrate.service":
            assert "Restart=always" in text and "Requires=joyback-migrate.service" in text
    procfile = dict(
        line.split(": ", 1) for line in (ROOT / "deploy" / "Procfile").read_text().splitlines() if line
    )
    assert set(procfile) == {"release", "web", "worker", "standing"}


def test_the_gunicorn_config_takes_its_settings_from_the_environment(monkeypatch):
    import runpy

    monkeypatch.setenv("GUNICORN_BIND", "127.0.0.1:10650")
    monkeypatch.setenv("WEB_CONCURRENCY", "3")
    monkeypatch.setenv("GUNICORN_THREADS", "4")

    config = runpy.run_path(str(ROOT / "deploy" / "gunicorn.conf.py"))

    assert config["bind"] == "127.0.0.1:10650"
    assert config["workers"] == 3
    assert config["worker_class"] == "gthread" and config["threads"] == 4
    assert config["preload_app"] is False


def test_a_folder_on_one_machines_disk_is_reported_before_a_second_machine_runs(settings):
    from joyback.deploy_checks import shared_files_check

    settings.BANK_DROP_FOLDER = "/var/lib/joyback/bank-drop"
    settings.SHARED_FOLDERS = False

    assert [problem.id for problem in shared_files_check()] == ["joyback.W001", "joyback.W002"]

    settings.SHARED_FOLDERS = True  # mounted on every machine
    assert shared_files_check() == []
    settings.SHARED_FOLDERS = False
    settings.BANK_DROP_FOLDER = ""
    settings.STORAGES = {
        **settings.STORAGES,
        "video_uploads": {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": {}},
    }
    assert shared_files_check() == []


@pytest.mark.slow
def test_the_images_static_files_are_collected_as_production_serves_them(tmp_path):
    # The Containerfile's step: production's storage hashes every file and rewrites the references
    # between them; a reference to a file that is not there fails the build.
    # The values the Containerfile's build step gives, the keys random as its key() makes them.
    containerfile = (ROOT / "deploy" / "Containerfile").read_text()
    start, end = containerfile.index("JOYBACK_ENV=production"), containerfile.index("collectstatic")
    build_step = containerfile[start:end]
    given = {
        name: base64.urlsafe_b64encode(os.urandom(32)).decode() if value == '"$(key)"' else value
        for name, value in re.findall(r"([A-Z_]+)=(\S+)", build_step)
    }
    env = {
        **{key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "DATABASE"))},
        **given,
        "STATIC_ROOT": str(tmp_path),
    }
    done = subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--no-input", "--verbosity", "0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "staticfiles.json").exists()
    assert 'PAYEE_ENCRYPTION_KEYS="$(key)"' in containerfile and "build-only" not in containerfile
