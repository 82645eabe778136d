"""The production topology on one machine: `make cluster`, and the scale run of `make bench`.

    python -m deploy.cluster [--nodes 2] [--pooling direct|django|pgbouncer]   # up, until Ctrl-C
    python -m deploy.cluster down                                               # what a crash left

- PostgreSQL: a primary made with the machine's PostgreSQL 15 (initdb, its own data folder under
  tmp/cluster/, pg_stat_statements loaded) and a streaming replica made from it with
  pg_basebackup, hot standby, each on its own port; never the shared server on 5432.
- PgBouncer in front of the primary (transaction mode), for the pooling that is measured against
  Django's own psycopg pool.
- Redis: a redis-server of its own (task broker and shared cache), no persistence.
- Two web nodes: gunicorn with deploy/gunicorn.conf.py, each its own process group, as two
  machines would run them; and two worker groups: the task cluster (`manage.py qcluster`) and the
  standing worker (`manage.py work`).

Every process is started in a session of its own, so killing one group (SIGKILL, as a machine
dies) leaves the others running. The ports are PORT_BASE + 1 (primary), + 2 (replica), + 3
(PgBouncer), + 4 (Redis), + 10 + n (web node n).
"""

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PG_BIN = Path(os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin"))
PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
PORT_BASE = int(os.environ.get("CLUSTER_PORT_BASE", "10600"))
POOLINGS = ("direct", "django", "pgbouncer")


class ClusterError(RuntimeError):
    pass


def _as_postgres() -> list[str]:
    """PostgreSQL and PgBouncer refuse to run as root: as root, they run as the postgres user."""
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


@dataclass
class Group:
    """One process group: a web node, a worker group or a server."""

    name: str
    command: list
    env: dict
    log: Path
    process: subprocess.Popen | None = None

    def start(self) -> None:
        with self.log.open("a") as output:
            self.process = subprocess.Popen(
                self.command,
                cwd=ROOT,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=output,
                start_new_session=True,
            )

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self, sig=signal.SIGKILL) -> None:
        """The whole group at once, as when its machine goes away."""
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)
            self.process.wait(timeout=30)

    def stop(self, timeout: float = 20) -> None:
        if not self.alive():
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        # Children that outlived their parent (a killed master's workers) go with the group.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def tail(self, chars: int = 2000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


@dataclass
class Cluster:
    home: Path = ROOT / "tmp" / "cluster"
    nodes: int = 2
    pooling: str = "direct"
    database: str = "joyback"
    env: dict = field(default_factory=dict)  # the Django processes' settings, on top of ours
    q_workers: int = 2
    web_workers: int = 2
    groups: dict = field(default_factory=dict)

    @property
    def primary_port(self) -> int:
        return PORT_BASE + 1

    @property
    def replica_port(self) -> int:
        return PORT_BASE + 2

    @property
    def pgbouncer_port(self) -> int:
        return PORT_BASE + 3

    @property
    def redis_port(self) -> int:
        return PORT_BASE + 4

    def web_port(self, node: int) -> int:
        return PORT_BASE + 10 + node

    def url(self, port: int, database: str | None = None) -> str:
        return f"postgres://postgres@127.0.0.1:{port}/{database or self.database}"

    @property
    def primary_url(self) -> str:
        return self.url(self.primary_port)

    @property
    def replica_url(self) -> str:
        return self.url(self.replica_port)

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}/0"

    @property
    def logs(self) -> Path:
        return self.home / "logs"

    # -- PostgreSQL ---------------------------------------------------------------------------

    def _pg(self, *command, check=True) -> subprocess.CompletedProcess:
        done = subprocess.run([*_as_postgres(), *map(str, command)], capture_output=True, text=True)
        if check and done.returncode != 0:
            raise ClusterError(f"{' '.join(map(str, command))} failed:\n{done.stdout}{done.stderr}")
        return done

    def _folder(self, path: Path, mode: int = 0o755) -> Path:
        path.mkdir(parents=True, exist_ok=True)
        path.chmod(mode)  # a data folder: PostgreSQL starts only from one no one else may read
        if os.geteuid() == 0:
            shutil.chown(path, "postgres", "postgres")
        return path

    def _pg_ctl(self, data: Path, port: int, action: str) -> None:
        run = self._folder(self.home / "run")
        self._pg(
            PG_BIN / "pg_ctl",
            "-D",
            data,
            "-o",
            f"-p {port} -k {run}",
            "-l",
            self.logs / f"{data.name}.log",
            "-w",
            "-t",
            "60",
            action,
        )

    def primary_make(self) -> None:
        data = self.home / "primary"
        if (data / "PG_VERSION").exists():
            return
        self._folder(data, 0o700)
        self._pg(
            PG_BIN / "initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-instructions"
        )
        with (data / "postgresql.conf").open("a") as conf:
            conf.write(
                "\n# deploy/cluster.py\nlisten_addresses = '127.0.0.1'\nmax_connections = 300\n"
                "shared_buffers = 256MB\nwal_level = replica\nmax_wal_senders = 5\nhot_standby = on\n"
                "shared_preload_libraries = 'pg_stat_statements'\npg_stat_statements.track = all\n"
                "track_io_timing = on\nlog_lock_waits = on\ndeadlock_timeout = 200ms\n"
                "log_min_messages = warning\n"
            )

    def replica_make(self) -> None:
        data = self.home / "replica"
        if (data / "PG_VERSION").exists():
            return
        self._folder(data, 0o700)
        self._pg(
            PG_BIN / "pg_basebackup",
            "-h",
            "127.0.0.1",
            "-p",
            self.primary_port,
            "-U",
            "postgres",
            "-D",
            data,
            "-R",  # standby.signal and primary_conninfo: a streaming replica from the start
            "-X",
            "stream",
            "-c",
            "fast",
        )

    def postgres_start(self) -> None:
        self._folder(self.logs)
        self.primary_make()
        if not self._running(self.home / "primary"):
            self._pg_ctl(self.home / "primary", self.primary_port, "start")
        self._admin(f"CREATE DATABASE {self.database}", ignore="already exists")
        self._admin("CREATE EXTENSION IF NOT EXISTS pg_stat_statements", database=self.database)
        self.replica_make()
        if not self._running(self.home / "replica"):
            self._pg_ctl(self.home / "replica", self.replica_port, "start")

    def replica_restart(self) -> None:
        self._pg_ctl(self.home / "replica", self.replica_port, "restart")

    def _running(self, data: Path) -> bool:
        return self._pg(PG_BIN / "pg_ctl", "-D", data, "status", check=False).returncode == 0

    def _admin(self, statement: str, *, database: str = "postgres", ignore: str = "", port=None) -> str:
        done = subprocess.run(
            [
                "psql",
                "-X",
                "-At",
                "-h",
                "127.0.0.1",
                "-p",
                str(port or self.primary_port),
                "-U",
                "postgres",
                "-d",
                database,
                "-c",
                statement,
            ],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0 and not (ignore and ignore in done.stderr):
            raise ClusterError(f"{statement}: {done.stderr}")
        return done.stdout.strip()

    # -- PgBouncer and Redis ------------------------------------------------------------------

    def pgbouncer_start(self) -> None:
        folder = self._folder(self.home / "pgbouncer")
        users = folder / "users.txt"
        users.write_text('"postgres" ""\n')
        ini = folder / "pgbouncer.ini"
        ini.write_text(
            "[databases]\n"
            f"* = host=127.0.0.1 port={self.primary_port}\n"
            "[pgbouncer]\n"
            f"listen_addr = 127.0.0.1\nlisten_port = {self.pgbouncer_port}\n"
            f"unix_socket_dir = {self._folder(self.home / 'run')}\n"
            "auth_type = trust\n"
            f"auth_file = {users}\n"
            # Transaction mode: a server connection per transaction, so many client connections
            # share few; statements cannot stay prepared across transactions (PgBouncer < 1.21).
            "pool_mode = transaction\n"
            "default_pool_size = 20\nmax_client_conn = 1000\n"
            "ignore_startup_parameters = extra_float_digits,options\n"
            "server_reset_query =\n"
        )
        if os.geteuid() == 0:
            for path in (users, ini):
                shutil.chown(path, "postgres", "postgres")
        self._start(
            "pgbouncer",
            [*_as_postgres(), PGBOUNCER, str(ini)],
            env=dict(os.environ),
        )
        self._wait_port(self.pgbouncer_port, "pgbouncer")

    def redis_start(self) -> None:
        self._start(
            "redis",
            [
                REDIS_SERVER,
                "--port",
                str(self.redis_port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            env=dict(os.environ),
        )
        self._wait_port(self.redis_port, "redis")

    # -- JoyBack --------------------------------------------------------------------------------

    def django_env(self, *, worker: bool = False) -> dict:
        database = {
            "direct": self.primary_url,
            "django": self.primary_url,
            "pgbouncer": self.url(self.pgbouncer_port),
        }[self.pooling]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DB_"))}
        env.update(
            JOYBACK_ENV=os.environ.get("JOYBACK_ENV", "development"),
            DEBUG="0",
            DATABASE_URL=database,
            DATABASE_REPLICA_URL=self.replica_url,
            REDIS_URL=self.redis_url,
            Q_WORKERS=str(self.q_workers),
            Q_SYNC="0",
            LOG_LEVEL="WARNING",
            PYTHONPATH=str(ROOT),
        )
        if self.pooling == "django":
            env.update(DB_POOL_MAX_SIZE="4", DB_POOL_MIN_SIZE="1")
        if self.pooling == "pgbouncer":
            env.update(DB_SERVER_PREPARE="0", DB_CONN_MAX_AGE="60")
        env.update(self.env)
        if self.pooling == "django" and worker:
            # A worker's payout sender threads keep a connection each for as long as the process
            # runs (the in-process sandbox bank books in them): a pool smaller than the threads
            # and the loop's own would starve the loop until it fails.
            threads = env.get("PAYOUT_SEND_THREADS") or ("1" if env["JOYBACK_ENV"] == "test" else "8")
            env["DB_POOL_MAX_SIZE"] = str(max(int(env.get("DB_POOL_MAX_SIZE", "4")), int(threads) + 2))
        return env

    def migrate(self) -> None:
        env = dict(self.django_env(), DATABASE_URL=self.primary_url)  # DDL and its lock: the primary itself
        done = subprocess.run(
            [sys.executable, "manage.py", "migrate_locked", "--no-input"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise ClusterError(f"migrate failed:\n{done.stdout}{done.stderr}")

    def web_start(self, node: int) -> None:
        env = dict(
            self.django_env(),
            GUNICORN_BIND=f"127.0.0.1:{self.web_port(node)}",
            WEB_CONCURRENCY=str(self.web_workers),
        )
        self._start(
            f"web{node}",
            [
                sys.executable,
                "-m",
                "gunicorn",
                "-c",
                str(ROOT / "deploy" / "gunicorn.conf.py"),
                "config.wsgi",
            ],
            env=env,
        )

    def web_ready(self, node: int, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.groups[f"web{node}"].alive():
                raise ClusterError(f"web node {node} exited:\n{self.groups[f'web{node}'].tail()}")
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{self.web_port(node)}/healthz/live", timeout=2
                ):
                    return
            except OSError:
                time.sleep(0.3)
        raise ClusterError(
            f"web node {node} did not answer in {timeout:.0f} s:\n{self.groups[f'web{node}'].tail()}"
        )

    def workers_start(self) -> None:
        self.worker_start("qcluster")
        self.worker_start("work")

    def worker_start(self, kind: str) -> None:
        self._start(kind, [sys.executable, "manage.py", kind], env=self.django_env(worker=True))

    # -- the whole ----------------------------------------------------------------------------

    def up(self, *, web: bool = True, workers: bool = True) -> "Cluster":
        self.home.mkdir(parents=True, exist_ok=True)
        self._folder(self.logs)
        self.postgres_start()
        self.redis_start()
        if self.pooling == "pgbouncer":
            self.pgbouncer_start()
        self.migrate()
        if web:
            for node in range(1, self.nodes + 1):
                self.web_start(node)
            for node in range(1, self.nodes + 1):
                self.web_ready(node)
        if workers:
            self.workers_start()
        self._state_write()
        return self

    def down(self, *, postgres: bool = True) -> None:
        for name in list(self.groups):
            self.groups.pop(name).stop()
        if postgres:
            for name in ("replica", "primary"):
                if (self.home / name / "PG_VERSION").exists() and self._running(self.home / name):
                    self._pg(
                        PG_BIN / "pg_ctl", "-D", self.home / name, "-m", "fast", "-w", "stop", check=False
                    )
        (self.home / "state.json").unlink(missing_ok=True)

    def destroy(self) -> None:
        """Down, and the data folders gone (the next up starts from an empty primary)."""
        self.down()
        for name in ("primary", "replica", "pgbouncer", "run"):
            shutil.rmtree(self.home / name, ignore_errors=True)

    def _start(self, name: str, command: list, *, env: dict) -> Group:
        if name in self.groups and self.groups[name].alive():
            raise ClusterError(f"{name} is already running")
        # Each group's database sessions carry its name (pg_stat_activity.application_name).
        env = dict(env, PGAPPNAME=name)
        group = Group(name=name, command=command, env=env, log=self.logs / f"{name}.log")
        group.start()
        self.groups[name] = group
        self._state_write()
        return group

    def _wait_port(self, port: int, name: str, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    return
            if not self.groups[name].alive():
                raise ClusterError(f"{name} exited:\n{self.groups[name].tail()}")
            time.sleep(0.1)
        raise ClusterError(f"{name} did not listen on {port} within {timeout:.0f} s")

    def _state_write(self) -> None:
        state = {name: group.pid for name, group in self.groups.items() if group.alive()}
        (self.home / "state.json").write_text(json.dumps(state))


def stale_down(home: Path) -> None:
    """Stop what an earlier run left behind (its process groups, then PostgreSQL)."""
    state = home / "state.json"
    if state.exists():
        for pid in json.loads(state.read_text()).values():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGTERM)
    Cluster(home=home).down()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deploy.cluster", description=__doc__.split("\n")[0])
    parser.add_argument("action", nargs="?", choices=("up", "down", "destroy"), default="up")
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--pooling", choices=POOLINGS, default="direct")
    args = parser.parse_args(argv)
    home = ROOT / "tmp" / "cluster"
    if args.action == "down":
        stale_down(home)
        return 0
    if args.action == "destroy":
        stale_down(home)
        Cluster(home=home).destroy()
        return 0
    cluster = Cluster(home=home, nodes=args.nodes, pooling=args.pooling)
    stopping = []

    def stop(*_):
        stopping.append(True)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        cluster.up()
        print(
            f"JoyBack runs as {args.nodes} web nodes: "
            + ", ".join(f"http://127.0.0.1:{cluster.web_port(n)}/" for n in range(1, args.nodes + 1))
            + f"\n  primary {cluster.primary_url}, replica {cluster.replica_url}, Redis {cluster.redis_url}"
            + (f", PgBouncer port {cluster.pgbouncer_port}" if args.pooling == "pgbouncer" else "")
            + f"\n  workers: qcluster and work; logs in {cluster.logs}; Ctrl-C stops everything",
            flush=True,
        )
        while not stopping:
            for name, group in list(cluster.groups.items()):
                if not group.alive():
                    print(f"{name} stopped; its log:\n{group.tail(800)}", file=sys.stderr, flush=True)
                    cluster.groups.pop(name)
            time.sleep(1)
    except ClusterError as error:
        print(f"make cluster failed: {error}", file=sys.stderr)
        return 1
    finally:
        cluster.down()
    return 0


if __name__ == "__main__":
    sys.exit(main())
