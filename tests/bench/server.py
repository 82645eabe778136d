"""The PostgreSQL side of the benchmarks: scratch databases and the pgbench reference.

Everything here talks to the server named by DATABASE_URL, but only ever to databases whose
names this harness made up (<dbname>_bench, <dbname>_pgbench), so a test run on the same server
is left alone.
"""

import math
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

import psycopg
from psycopg import sql

PGBENCH = "/usr/bin/pgbench"
TPS_RE = re.compile(r"tps = ([0-9.]+) \(without initial connection time\)")


class BenchSetupError(RuntimeError):
    pass


@dataclass(frozen=True)
class Server:
    url: str  # DATABASE_URL as given
    host: str
    port: int
    user: str
    password: str | None
    dbname: str

    @classmethod
    def from_url(cls, url: str) -> "Server":
        parts = urlsplit(url)
        if parts.scheme not in {"postgres", "postgresql", "pgsql", "postgis"}:
            raise BenchSetupError("not a PostgreSQL URL")
        return cls(
            url=url,
            host=parts.hostname or "127.0.0.1",
            port=parts.port or 5432,
            user=unquote(parts.username or "postgres"),
            password=unquote(parts.password) if parts.password else None,
            dbname=unquote(parts.path.lstrip("/")) or "joyback",
        )

    def url_for(self, dbname: str) -> str:
        """DATABASE_URL with only the database name swapped."""
        parts = urlsplit(self.url)
        return urlunsplit(parts._replace(path=f"/{dbname}"))

    def connect_admin(self):
        return psycopg.connect(
            host=self.host,
            port=self.port,
            user=self.user,
            password=self.password,
            dbname="postgres",
            autocommit=True,
            connect_timeout=5,
        )

    def setting(self, name: str) -> str:
        with self.connect_admin() as conn:
            return conn.execute(sql.SQL("SHOW {}").format(sql.Identifier(name))).fetchone()[0]

    def database_create(self, dbname: str, *, template: str = "") -> None:
        self.database_drop(dbname)
        statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname))
        if template:
            statement += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
        with self.connect_admin() as conn:
            conn.execute(statement)

    def database_exists(self, dbname: str) -> bool:
        with self.connect_admin() as conn:
            return (
                conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [dbname]).fetchone() is not None
            )

    def database_drop(self, dbname: str) -> None:
        with self.connect_admin() as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(dbname)))

    def checkpoint(self) -> None:
        """Write out what earlier runs left dirty now, not during the next run (needs superuser or
        pg_checkpoint; without them the next run just starts)."""
        try:
            with self.connect_admin() as conn:
                conn.execute("CHECKPOINT")
        except psycopg.errors.InsufficientPrivilege:
            pass

    def pgbench_env(self) -> dict:
        env = dict(os.environ)
        if self.password:
            env["PGPASSWORD"] = self.password
        return env

    def pgbench(self, dbname: str, *args: str) -> str:
        if not Path(PGBENCH).exists() and not shutil.which("pgbench"):
            raise BenchSetupError(f"pgbench not found at {PGBENCH} (apt-get install postgresql-client)")
        command = [
            PGBENCH if Path(PGBENCH).exists() else "pgbench",
            "-h",
            self.host,
            "-p",
            str(self.port),
            "-U",
            self.user,
            *args,
            dbname,
        ]
        done = subprocess.run(command, capture_output=True, text=True, env=self.pgbench_env(), check=False)
        if done.returncode != 0:
            raise BenchSetupError(f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}")
        return done.stdout + done.stderr


@dataclass(frozen=True)
class PgbenchResult:
    tps: float
    latencies_ms: list[float]  # per transaction, from --log; empty when not logged

    def percentile(self, fraction: float) -> float:
        return percentile(self.latencies_ms, fraction)


def percentile(values, fraction: float) -> float:
    """Nearest-rank percentile: the smallest value with at least `fraction` of values at or below."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def pgbench_init(server: Server, dbname: str, *, scale: int) -> None:
    server.database_create(dbname)
    server.pgbench(dbname, "-i", "-s", str(scale), "-q")


def pgbench_run(server: Server, dbname: str, *args: str, log: bool = False) -> PgbenchResult:
    """One pgbench tpcb-like run; with log=True also every transaction's latency."""
    with tempfile.TemporaryDirectory(prefix="joyback-pgbench-") as tmp:
        prefix = str(Path(tmp) / "tx")
        extra = ["--log", f"--log-prefix={prefix}"] if log else []
        output = server.pgbench(dbname, "-b", "tpcb-like", *extra, *args)
        match = TPS_RE.search(output)
        if not match:
            raise BenchSetupError(f"could not read tps from pgbench output:\n{output}")
        latencies = []
        if log:
            # Each line: client_id transaction_no time_us script_no epoch epoch_us
            for path in Path(tmp).glob("tx.*"):
                for line in path.read_text().splitlines():
                    fields = line.split()
                    if len(fields) >= 3 and fields[2].isdigit():
                        latencies.append(int(fields[2]) / 1000)
        return PgbenchResult(tps=float(match.group(1)), latencies_ms=latencies)
