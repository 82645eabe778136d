"""Ctrl-C or a TERM stops `make run` whole: the task cluster, the standing worker and the web server
each exit within seconds, nothing is left listening, and the standing worker finishes its pass and
closes its payout senders on the way out."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import quote

import psutil
import pytest
from django.db import connection

from joyback.queue import standing_work_run
from payouts import pipeline
from payouts.models import Payout
from tests.payouts.test_payout_batches import approve, ready_person

ROOT = Path(__file__).resolve().parent.parent
STOPPED_WITHIN_SECONDS = 15
SERVER_STOPPED_WITHIN_SECONDS = 60  # pg_ctl stop's own wait
Q_WORKERS = 2


def _database_url() -> str:
    """The test database, for processes of their own (dj-database-url form)."""
    db = connection.settings_dict
    password = f":{quote(db['PASSWORD'], safe='')}" if db["PASSWORD"] else ""
    port = f":{db['PORT']}" if db["PORT"] else ""
    return f"postgres://{db['USER']}{password}@{quote(db['HOST'] or '', safe='')}{port}/{db['NAME']}"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _alive(processes: list[psutil.Process]) -> list[psutil.Process]:
    left = []
    for process in processes:
        try:
            if process.status() != psutil.STATUS_ZOMBIE:
                left.append(process)
        except psutil.NoSuchProcess:
            pass
    return left


def _command(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())
    except psutil.NoSuchProcess:  # (a short-lived one, such as a health check)
        return ""


def _wait_until(condition, *, seconds: float, what: str, log: Path) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what} not within {seconds} s:\n{log.read_text()[-3000:]}"
        time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "Ctrl-C"])
def test_make_runs_processes_all_stop_when_their_group_is_signalled(signum, tmp_path):
    port = _free_port()
    log = tmp_path / "run.log"
    env = {
        **{key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "REDIS_"))},
        "JOYBACK_ENV": "development",  # what make run runs: the tasks in the cluster's workers
        "DATABASE_URL": _database_url(),
        "EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend",
        "BIN": str(Path(sys.executable).parent),
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "Q_WORKERS": str(Q_WORKERS),
    }
    with log.open("w") as output:
        # make run's recipe in a group of its own, as a terminal or a supervisor starts it.
        run = subprocess.Popen(
            [sys.executable, "-m", "joyback.embedded_db", "deploy/run.sh"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        top = psutil.Process(run.pid)
        # The task cluster's main process, its sentinel, the workers, the pusher and the monitor.
        qcluster_processes = 1 + 1 + Q_WORKERS + 2

        def everything_up() -> bool:
            commands = [_command(p) for p in top.children(recursive=True)]
            return (
                "JoyBack runs on" in log.read_text()
                and sum("manage.py qcluster" in c for c in commands) == qcluster_processes
                and any("manage.py work" in c for c in commands)
                and not any("demo_seed" in c for c in commands)  # the sign-ins printed: it waits
            )

        _wait_until(everything_up, seconds=120, what="make run's processes up", log=log)
        time.sleep(1.5)  # the sentinel is asleep between its guard's rounds
        processes = [top, *top.children(recursive=True)]

        os.killpg(run.pid, signum)

        _wait_until(
            lambda: not _alive(processes), seconds=STOPPED_WITHIN_SECONDS, what="every process gone", log=log
        )
        assert run.wait(timeout=5) == 0
        assert not _listening(port)
        assert "Traceback" not in log.read_text(), log.read_text()[-3000:]
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_standing_worker_finishes_its_pass_and_closes_its_payout_senders_when_stopped(
    make_live_campaign, settings, monkeypatch
):
    # The worker below takes the people due, not a test's inline pass after each commit.
    monkeypatch.setattr("verification.services.rewards.standing_work_soon", lambda name: None)
    settings.PAYOUT_GATHER_MS = 0
    settings.PAYOUT_SEND_THREADS = 2
    club = make_live_campaign(slug="closing-club", budget=1_000_00)
    for _ in range(3):
        _person, identity = ready_person(club)
        approve(club, identity)
    passes = []

    def stopping() -> bool:  # asked as a TERM would be, after the first pass that paid
        passes.append(Payout.objects.exists())
        return passes[-1]

    standing_work_run(poll=0.05, stopping=stopping)

    assert Payout.objects.filter(status="settled").count() == 3
    assert not [t for t in threading.enumerate() if t.name.startswith(pipeline.SENDER_NAME)]


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "Ctrl-C"])
def test_the_embedded_postgresql_stops_when_its_command_is_stopped(signum):
    data = Path(tempfile.mkdtemp(prefix="jbpg-"))  # short: the server's socket is in it
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    server_up = "import joyback.embedded_db as e, pathlib, sys; e.DATA_DIR = pathlib.Path(sys.argv[1]); "
    run = subprocess.Popen(
        [sys.executable, "-c", server_up + "sys.exit(e.main(sys.argv[2:]))", str(data), "sleep", "120"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert "PostgreSQL (embedded" in run.stderr.readline()
        postmaster = psutil.Process(int((data / "postmaster.pid").read_text().split()[0]))
        assert postmaster.is_running()
        wrapper = psutil.Process(run.pid)
        _wait_until(  # as a person presses Ctrl-C: once the command runs
            lambda: any(_command(child) == "sleep 120" for child in wrapper.children()),
            seconds=STOPPED_WITHIN_SECONDS,
            what="the command running",
            log=Path(os.devnull),
        )

        os.killpg(run.pid, signum)

        # pg_ctl waits up to a minute for the server's shutdown checkpoint, which a loaded machine can
        # take more than seconds to write: what must hold is that the server stops, not how fast.
        try:
            run.wait(timeout=SERVER_STOPPED_WITHIN_SECONDS)
        except subprocess.TimeoutExpired:
            still = [_command(p) for p in _alive([wrapper, *wrapper.children(recursive=True), postmaster])]
            pytest.fail(f"still running after {SERVER_STOPPED_WITHIN_SECONDS} s: {still}")
        postmaster.wait(timeout=STOPPED_WITHIN_SECONDS)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
        shutil.rmtree(data, ignore_errors=True)
