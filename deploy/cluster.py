"""The production topology on one machine: `make cluster`, and the scale run of `make bench`.

    python -m deploy.cluster [--nodes 2] [--pooling direct|django|pgbouncer] [--no-ha]  # until Ctrl-C
    python -m deploy.cluster down                                                        # what a crash left

- PostgreSQL 15, never the shared server on 5432, data under tmp/cluster/, pg_stat_statements
  loaded. With Patroni and etcd installed (the Makefile installs them): etcd and two nodes each
  run by Patroni, which elects the primary through etcd, makes the other a streaming replica,
  replicates synchronously (`synchronous_mode`: a commit is acknowledged once the replica has it,
  so an acknowledged payout or posting survives the primary's loss) and promotes the replica when
  the primary dies. The processes reach the primary by a libpq multi-host URL with
  `target_session_attrs=read-write` (whichever node is primary now) and the replica with
  `target_session_attrs=standby`. Without them (--no-ha): a primary made with initdb and a
  streaming replica made from it with pg_basebackup, each started with pg_ctl.
- PgBouncer in front of the primary: transaction mode for the web nodes (the pooling measured
  against Django's own psycopg pool), session mode (a database of its own, `<name>_session`) for
  the workers, whose session advisory locks transaction mode would break. It follows a failover
  (its primary rewritten and reloaded).
- Redis: a redis-server of its own (task broker and shared cache), no persistence.
- Two web nodes: gunicorn with deploy/gunicorn.conf.py, each its own process group, as two
  machines would run them; and two worker groups: the task cluster (`manage.py qcluster`) and the
  standing worker (`manage.py work`).

Every process is started in a session of its own, so killing one group (SIGKILL, as a machine
dies) leaves the others running. `make cluster` supervises them as systemd would: one that exits is
started again after a pause that doubles (1 s up to 30 s) while it keeps dying, and each start is
logged. A port counts as served only when the process this module started (or one of its
children) owns the listening socket, not whatever else listens there. The ports are PORT_BASE + 1
(primary, or Patroni node 1), + 2 (replica, or node 2), + 3 (PgBouncer), + 4 (Redis), + 5 and + 6
(etcd's clients and peers), + 7 and + 8 (the Patroni nodes' REST APIs), + 10 + n (web node n).
"""

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
PG_BIN = Path(os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin"))
PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
PATRONI = shutil.which("patroni") or "/usr/bin/patroni"
ETCD = shutil.which("etcd") or "/usr/bin/etcd"
PORT_BASE = int(os.environ.get("CLUSTER_PORT_BASE", "10600"))
POOLINGS = ("direct", "django", "pgbouncer")
# Patroni's timings (seconds): the leader key lives TTL without renewal, each node loops every
# LOOP_WAIT; a dead primary is replaced within about TTL + LOOP_WAIT.
PATRONI_TTL, PATRONI_LOOP_WAIT, PATRONI_RETRY_TIMEOUT = 10, 1, 4
NODES = ("pg1", "pg2")
# A process that keeps dying is started again after 1, 2, 4 ... up to 30 s; one that ran a minute
# starts over at 1 s.
RESTART_FIRST, RESTART_MAX, RESTART_RESET_AFTER = 1.0, 30.0, 60.0


def ha_available() -> bool:
    """Patroni and etcd are installed (Debian's packages `patroni` and `etcd-server`)."""
    return Path(PATRONI).exists() and Path(ETCD).exists()


def listeners(port: int) -> set[int]:
    """The pids owning a socket listening on TCP `port` (the kernel's table, /proc/net/tcp, joined
    to each process's open sockets)."""
    return {
        connection.pid
        for connection in psutil.net_connections(kind="tcp")
        if connection.status == psutil.CONN_LISTEN
        and connection.laddr
        and connection.laddr.port == port
        and connection.pid is not None
    }


def tree(pid: int) -> set[int]:
    """A process and all its descendants."""
    try:
        root = psutil.Process(pid)
        return {pid, *(child.pid for child in root.children(recursive=True))}
    except psutil.NoSuchProcess:
        return set()


def log(text: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} cluster: {text}", file=sys.stderr, flush=True)


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
    restart: bool = True  # started again by Cluster.supervise when it exits
    started_at: float = 0.0
    pause: float = 0.0  # the pause before the next restart
    restart_at: float | None = None
    starts: int = 0

    def start(self) -> None:
        self.started_at, self.restart_at = time.monotonic(), None
        self.starts += 1
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

    def owns(self, port: int) -> bool:
        """Whether this group's process, or one it started, listens on `port`."""
        return self.alive() and bool(tree(self.pid) & listeners(port))

    def kill(self, sig=signal.SIGKILL) -> None:
        """The whole group at once, as when its machine goes away."""
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)
            if sig in (signal.SIGKILL, signal.SIGTERM):
                self.process.wait(timeout=30)

    def send_signal(self, sig) -> None:
        """A signal to the whole group (SIGSTOP, SIGCONT: a machine that freezes and wakes)."""
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)

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
    ha: bool | None = None  # Patroni and etcd; None: when installed
    _pgbouncer_primary: int | None = None

    def __post_init__(self):
        if self.ha is None:
            self.ha = ha_available()

    @property
    def primary_port(self) -> int:
        """The primary's port: Patroni's node 1 to begin with, whichever node leads now with ha."""
        if self.ha:
            node = self.primary_node()
            return self.node_port(node) if node else PORT_BASE + 1
        return PORT_BASE + 1

    @property
    def replica_port(self) -> int:
        if self.ha:
            node = self.replica_node()
            return self.node_port(node) if node else PORT_BASE + 2
        return PORT_BASE + 2

    def node_port(self, node: str) -> int:
        return PORT_BASE + 1 + NODES.index(node)

    def rest_port(self, node: str) -> int:
        return PORT_BASE + 7 + NODES.index(node)

    @property
    def etcd_port(self) -> int:
        return PORT_BASE + 5

    @property
    def etcd_peer_port(self) -> int:
        return PORT_BASE + 6

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

    def nodes_url(self, attrs: str, database: str | None = None) -> str:
        """Both Patroni nodes in one libpq multi-host URL: the first whose session has `attrs`."""
        hosts = ",".join(f"127.0.0.1:{self.node_port(node)}" for node in NODES)
        return (
            f"postgres://postgres@{hosts}/{database or self.database}"
            f"?target_session_attrs={attrs}&connect_timeout=2"
        )

    @property
    def primary_url(self) -> str:
        """Whichever server takes writes: with ha, whichever node is primary when a connection is made."""
        return self.nodes_url("read-write") if self.ha else self.url(PORT_BASE + 1)

    @property
    def replica_url(self) -> str:
        return self.nodes_url("standby") if self.ha else self.url(PORT_BASE + 2)

    # -- Patroni ------------------------------------------------------------------------------

    def _rest(self, node: str, path: str, *, method: str = "GET", timeout: float = 2) -> int | None:
        """The status of a Patroni node's REST answer (None: no answer)."""
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.rest_port(node)}{path}",
            method=method,
            data=b"{}" if method == "POST" else None,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:  # noqa: S310 - http://127.0.0.1
                return answer.status
        except urllib.error.HTTPError as error:
            return error.code
        except OSError:
            return None

    def primary_node(self) -> str | None:
        """The node Patroni says is the running primary now (None while there is none)."""
        return next((node for node in NODES if self._rest(node, "/primary", timeout=1) == 200), None)

    def replica_node(self) -> str | None:
        return next((node for node in NODES if self._rest(node, "/replica", timeout=1) == 200), None)

    def data_dir(self, role: str) -> Path:
        """The data folder of the primary or the replica, as things stand."""
        if not self.ha:
            return self.home / role
        node = self.primary_node() if role == "primary" else self.replica_node()
        return self.node_dir(node or (NODES[0] if role == "primary" else NODES[1]))

    def node_dir(self, node: str) -> Path:
        """A Patroni node's data folder, in a folder of the postgres user's (Patroni makes, moves
        and removes data folders there)."""
        return self.home / "nodes" / node

    def etcd_start(self) -> None:
        data = self._folder(self.home / "etcd", 0o700)
        client, peer = f"http://127.0.0.1:{self.etcd_port}", f"http://127.0.0.1:{self.etcd_peer_port}"
        self._start(
            "etcd",
            [
                ETCD,
                "--name=joyback",
                f"--data-dir={data}",
                f"--listen-client-urls={client}",
                f"--advertise-client-urls={client}",
                f"--listen-peer-urls={peer}",
                f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=joyback={peer}",
                "--initial-cluster-state=new",
                "--log-level=warn",
            ],
            env=dict(os.environ),
        )
        self._wait_port(self.etcd_port, "etcd")

    def patroni_config(self, node: str) -> dict:
        run = self._folder(self.home / "run")
        port, rest = self.node_port(node), self.rest_port(node)
        postgres = {"username": "postgres"}
        return {
            "scope": f"joyback-{PORT_BASE}",
            "namespace": "/joyback/",
            "name": node,
            "log": {"level": "WARNING"},
            "restapi": {"listen": f"127.0.0.1:{rest}", "connect_address": f"127.0.0.1:{rest}"},
            "etcd3": {"hosts": [f"127.0.0.1:{self.etcd_port}"]},
            "bootstrap": {
                "dcs": {
                    "ttl": PATRONI_TTL,
                    "loop_wait": PATRONI_LOOP_WAIT,
                    "retry_timeout": PATRONI_RETRY_TIMEOUT,
                    "maximum_lag_on_failover": 1024 * 1024,
                    # A commit waits for the replica to have it (synchronous_commit on): what was
                    # acknowledged survives the primary's loss; only the synchronous replica is
                    # promoted.
                    "synchronous_mode": True,
                    "postgresql": {
                        "use_pg_rewind": True,
                        "use_slots": True,
                        "parameters": {
                            "max_connections": 300,
                            "wal_level": "replica",
                            "hot_standby": "on",
                            "max_wal_senders": 10,
                            "max_replication_slots": 10,
                            "wal_log_hints": "on",
                            "synchronous_commit": "on",
                        },
                    },
                },
                "initdb": [{"encoding": "UTF8"}, "data-checksums"],
            },
            "postgresql": {
                "listen": f"127.0.0.1:{port}",
                "connect_address": f"127.0.0.1:{port}",
                "data_dir": str(self.node_dir(node)),
                "bin_dir": str(PG_BIN),
                "pgpass": str(run / f"{node}.pgpass"),
                # The standby's copy starts at once, not after a spread checkpoint.
                "basebackup": {"checkpoint": "fast"},
                "authentication": {"superuser": postgres, "replication": postgres, "rewind": postgres},
                "parameters": {
                    "unix_socket_directories": str(run),
                    "shared_buffers": "256MB",
                    "shared_preload_libraries": "pg_stat_statements",
                    "pg_stat_statements.track": "all",
                    "track_io_timing": "on",
                    "log_lock_waits": "on",
                    "deadlock_timeout": "200ms",
                    "log_min_messages": "warning",
                },
                "pg_hba": [
                    "local all all trust",
                    "host all all 127.0.0.1/32 trust",
                    "host replication all 127.0.0.1/32 trust",
                ],
            },
        }

    def patroni_start(self, node: str) -> None:
        self._folder(self.home / "nodes", 0o700)
        folder = self._folder(self.home / "patroni")
        config = folder / f"{node}.yml"
        config.write_text(json.dumps(self.patroni_config(node), indent=1))  # JSON is YAML
        if os.geteuid() == 0:
            shutil.chown(config, "postgres", "postgres")
        self._start(node, [*_as_postgres(), PATRONI, str(config)], env=dict(os.environ))

    def _wait_rest(self, node: str, path: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._rest(node, path) == 200:
                return
            if not self.groups[node].alive():
                raise ClusterError(f"Patroni node {node} exited:\n{self.groups[node].tail()}")
            time.sleep(0.5)
        raise ClusterError(
            f"Patroni node {node} did not answer {path} in {timeout:.0f} s:\n{self.groups[node].tail()}"
        )

    def postmaster_pid(self, node: str) -> int | None:
        try:
            return int((self.node_dir(node) / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def node_kill(self, node: str) -> None:
        """A Patroni node's machine gone: Patroni and its PostgreSQL (which runs detached from it)
        killed with SIGKILL at once."""
        postmaster = self.postmaster_pid(node)
        self.groups[node].kill()
        if postmaster:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(os.getpgid(postmaster), signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                os.kill(postmaster, signal.SIGKILL)

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

    def _pg_ctl(self, data: Path, port: int, action: str, *, mode: str | None = None) -> None:
        run = self._folder(self.home / "run")
        self._pg(
            PG_BIN / "pg_ctl",
            *(["-m", mode] if mode else []),
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
        if self.ha:
            began = time.monotonic()
            self.etcd_start()
            self.patroni_start(NODES[0])
            self._wait_rest(NODES[0], "/primary")
            log(f"Patroni made {NODES[0]} the primary ({time.monotonic() - began:.0f} s)")
            self._admin(f"CREATE DATABASE {self.database}", ignore="already exists")
            self._admin("CREATE EXTENSION IF NOT EXISTS pg_stat_statements", database=self.database)
            self.patroni_start(NODES[1])
            self._wait_rest(NODES[1], "/replica")
            self._sync_wait()
            log(f"{NODES[1]} streams from it as the synchronous standby ({time.monotonic() - began:.0f} s)")
            return
        self.primary_make()
        if not self._running(self.home / "primary"):
            self._pg_ctl(self.home / "primary", self.primary_port, "start")
        self._admin(f"CREATE DATABASE {self.database}", ignore="already exists")
        self._admin("CREATE EXTENSION IF NOT EXISTS pg_stat_statements", database=self.database)
        self.replica_make()
        if not self._running(self.home / "replica"):
            self._pg_ctl(self.home / "replica", self.replica_port, "start")

    def primary_restart(self) -> None:
        """The primary's PostgreSQL dies and starts again, as `pg_ctl -m immediate restart` does:
        with Patroni, its postmaster is killed (SIGKILL) and Patroni starts it again (crash
        recovery, no failover: the node still holds the leader key)."""
        if not self.ha:
            self._pg_ctl(self.home / "primary", PORT_BASE + 1, "restart", mode="immediate")
            return
        node = self.primary_node()
        postmaster = self.postmaster_pid(node) if node else None
        if postmaster is None:
            raise ClusterError("no primary's postmaster to kill")
        os.kill(postmaster, signal.SIGKILL)

    def _sync_wait(self, timeout: float = 60) -> None:
        """Until the replica is the synchronous standby (commits wait for it from then on)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._admin("SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'") == "1":
                return
            time.sleep(0.5)
        raise ClusterError(f"the replica did not become the synchronous standby in {timeout:.0f} s")

    def replica_restart(self) -> None:
        if self.ha:
            node = self.replica_node()
            if node is None or self._rest(node, "/restart", method="POST", timeout=60) != 200:
                raise ClusterError(f"Patroni could not restart the replica ({node})")
            return
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
        self._pgbouncer_write()
        self._start(
            "pgbouncer",
            [*_as_postgres(), PGBOUNCER, str(self.home / "pgbouncer" / "pgbouncer.ini")],
            env=dict(os.environ),
        )
        self._wait_port(self.pgbouncer_port, "pgbouncer")

    def pgbouncer_follow(self) -> None:
        """After a failover, PgBouncer's primary rewritten and its configuration reloaded (SIGHUP
        to pgbouncer itself): new server connections go to the new primary."""
        group = self.groups.get("pgbouncer")
        port = self.primary_port
        if group is None or not group.alive() or port == self._pgbouncer_primary or not self.primary_node():
            return
        self._pgbouncer_write()
        for pid in tree(group.pid) - {group.pid}:
            with contextlib.suppress(psutil.NoSuchProcess):
                if psutil.Process(pid).name() == "pgbouncer":
                    os.kill(pid, signal.SIGHUP)
        log(f"PgBouncer now sends to the primary on port {port}")

    def _pgbouncer_write(self) -> None:
        folder = self._folder(self.home / "pgbouncer")
        users = folder / "users.txt"
        users.write_text('"postgres" ""\n')
        ini = folder / "pgbouncer.ini"
        port = self._pgbouncer_primary = self.primary_port
        ini.write_text(
            "[databases]\n"
            # The web nodes: transaction mode (a server connection per transaction).
            f"{self.database} = host=127.0.0.1 port={port} dbname={self.database}\n"
            # The workers: session mode, a server connection for as long as theirs lasts, as their
            # session advisory locks and kept prepared statements need.
            f"{self.database}_session = host=127.0.0.1 port={port} dbname={self.database} "
            "pool_mode=session pool_size=60\n"
            f"* = host=127.0.0.1 port={port}\n"
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
            # Used in session mode only (the workers'): a server connection a worker gave back
            # keeps none of its session (advisory locks, prepared statements, settings).
            "server_reset_query = DISCARD ALL\n"
        )
        if os.geteuid() == 0:
            for path in (users, ini):
                shutil.chown(path, "postgres", "postgres")

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
        """The settings of a web node, or of a worker: a worker never goes through PgBouncer's
        transaction mode (docs/deploy.md), but through its session-mode database."""
        database = {
            "direct": self.primary_url,
            "django": self.primary_url,
            "pgbouncer": self.url(self.pgbouncer_port, f"{self.database}_session" if worker else None),
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
        if self.pooling == "pgbouncer" and not worker:
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
                    pass
            except OSError:
                time.sleep(0.3)
                continue
            if self.groups[f"web{node}"].owns(self.web_port(node)):
                return
            raise ClusterError(
                f"port {self.web_port(node)} answers, but not from web node {node}: "
                f"pids {sorted(listeners(self.web_port(node)))} listen there"
            )
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
        self.redis_start()
        self.postgres_start()
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
        # Last started, first stopped: the web nodes and workers before the servers they use, the
        # Patroni nodes before etcd.
        for name in reversed(list(self.groups)):
            if postgres or name not in (*NODES, "etcd"):
                self.groups.pop(name).stop(timeout=60 if name in NODES else 20)
        if postgres:
            data = [
                self.home / "replica",
                self.home / "primary",
                *(self.node_dir(n) for n in reversed(NODES)),
            ]
            for folder in data:
                if (folder / "PG_VERSION").exists() and self._running(folder):
                    self._pg(PG_BIN / "pg_ctl", "-D", folder, "-m", "fast", "-w", "stop", check=False)
        (self.home / "state.json").unlink(missing_ok=True)

    def destroy(self) -> None:
        """Down, and the data folders gone (the next up starts from an empty primary)."""
        self.down()
        for name in ("primary", "replica", "pgbouncer", "run", "etcd", "patroni", "nodes"):
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
        """Until the process started as `name` (or a child of it) listens on `port`; whatever else
        may listen there does not count (a server that failed to bind exits, or never shows)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.groups[name].owns(port):
                return
            if not self.groups[name].alive():
                raise ClusterError(f"{name} exited:\n{self.groups[name].tail()}")
            time.sleep(0.1)
        others = listeners(port)
        raise ClusterError(
            f"{name} did not listen on {port} within {timeout:.0f} s"
            + (f" (pids {sorted(others)}, not started as {name}, listen there)" if others else "")
        )

    def supervise(self) -> list[str]:
        """One look over the process groups, as systemd's Restart=always: each that exited is
        started again after its pause (1 s, doubling to 30 s while it keeps dying, back to 1 s
        after a minute up). What was done, as lines (also logged)."""
        done, now = [], time.monotonic()
        for name, group in list(self.groups.items()):
            if group.alive() or not group.restart:
                continue
            if group.restart_at is None:
                if now - group.started_at > RESTART_RESET_AFTER:
                    group.pause = 0.0
                group.pause = min(RESTART_MAX, max(RESTART_FIRST, group.pause * 2))
                group.restart_at = now + group.pause
                done.append(
                    f"{name} (pid {group.pid}) exited with {group.process.returncode}; "
                    f"starting it again in {group.pause:.0f} s"
                )
            elif now >= group.restart_at:
                group.start()
                done.append(f"{name} started again (start {group.starts}, pid {group.pid})")
                self._state_write()
        if self.ha and self.pooling == "pgbouncer":
            self.pgbouncer_follow()
        for line in done:
            log(line)
        return done

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
    parser.add_argument(
        "--no-ha", action="store_true", help="a primary and a replica by pg_ctl, without Patroni and etcd"
    )
    args = parser.parse_args(argv)
    home = ROOT / "tmp" / "cluster"
    if args.action == "down":
        stale_down(home)
        return 0
    if args.action == "destroy":
        stale_down(home)
        Cluster(home=home).destroy()
        return 0
    cluster = Cluster(home=home, nodes=args.nodes, pooling=args.pooling, ha=False if args.no_ha else None)
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
            + (
                f"\n  Patroni nodes {', '.join(NODES)} (primary now: {cluster.primary_node()}), etcd port "
                f"{cluster.etcd_port}; synchronous replication"
                if cluster.ha
                else ""
            )
            + (f", PgBouncer port {cluster.pgbouncer_port}" if args.pooling == "pgbouncer" else "")
            + f"\n  workers: qcluster and work; logs in {cluster.logs}; Ctrl-C stops everything",
            flush=True,
        )
        while not stopping:
            for line in cluster.supervise():
                name = line.split()[0]
                if "exited" in line:
                    print(f"{name}'s log:\n{cluster.groups[name].tail(800)}", file=sys.stderr, flush=True)
            time.sleep(1)
    except ClusterError as error:
        print(f"make cluster failed: {error}", file=sys.stderr)
        return 1
    finally:
        cluster.down()
    return 0


if __name__ == "__main__":
    sys.exit(main())
