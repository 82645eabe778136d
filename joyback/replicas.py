"""Reads that may lag go to a streaming replica; everything else, and the person who just wrote, to
the primary.

Only the pages named in settings.REPLICA_READ_VIEWS (the dashboard, reconciliation, exports: long
reads over many rows, where a second or two of lag is invisible) read from the replica, and only
for a GET or HEAD. Whoever sent a write (any other method) through the browser pages gets a cookie
that pins their reads to the primary for REPLICA_PIN_SECONDS, longer than the replica's lag, so
the page they land on after a change shows it, on whichever web node answers. The cookie is the
browser's, not a process's: nothing about it lives in a web process.

A replica that cannot be reached is given up on for REPLICA_RETRY_SECONDS and its reads go to the
primary; a replica that fails during a page's reads has that page read again from the primary
(the pages are GETs: reading twice changes nothing). What a process remembers about the replica is
only that shortcut: every process finds out on its own, and the worst a stale memory costs is one
connection attempt.

The router sends a read to the replica only while a replica page is being answered, outside any
transaction on the primary (a read inside one must see that transaction's own writes), and
never a write or a migration.
"""

import contextlib
import contextvars
import logging
import time

from django.conf import settings
from django.db import DatabaseError, connections

logger = logging.getLogger(__name__)

REPLICA = "replica"
PRIMARY = "default"
PIN_COOKIE = "jb_primary"
SAFE_METHODS = frozenset({"GET", "HEAD"})

# True while this request (or thread, or task) may read from the replica.
_replica_reads = contextvars.ContextVar("replica_reads", default=False)
# Per process, a shortcut only (see the module's docstring): until when the replica is given up on.
_replica_down_until = {"at": 0.0}


class ReplicaRouter:
    """DATABASE_ROUTERS entry: reads to the replica inside replica_reads(), the rest to the primary."""

    def db_for_read(self, model, **hints):
        if _replica_reads.get() and not connections[PRIMARY].in_atomic_block:
            return REPLICA
        return PRIMARY

    def db_for_write(self, model, **hints):
        return PRIMARY

    def allow_relation(self, obj1, obj2, **hints):
        return True  # the same rows, one streamed from the other

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        return db == PRIMARY  # the replica replays the primary's migrations with its WAL


def replica_configured() -> bool:
    return REPLICA in settings.DATABASES and settings.REPLICA_READS


def replica_available() -> bool:
    """The replica answers (connecting if need be); a failure gives it up for a while."""
    if not replica_configured() or time.monotonic() < _replica_down_until["at"]:
        return False
    try:
        connections[REPLICA].close_if_health_check_failed()
        connections[REPLICA].ensure_connection()
    except DatabaseError as error:
        replica_down(error)
        return False
    return True


def replica_down(error: Exception) -> None:
    _replica_down_until["at"] = time.monotonic() + settings.REPLICA_RETRY_SECONDS
    logger.warning(
        "replica unavailable, reading from the primary for %ss: %s", settings.REPLICA_RETRY_SECONDS, error
    )
    # Closing a connection to a server that is gone may fail too: it is gone either way.
    with contextlib.suppress(DatabaseError):
        connections[REPLICA].close()


class replica_reads:  # a context manager, named like transaction.atomic
    """Within the block, reads outside a transaction go to the replica when it is available."""

    def __enter__(self):
        self.token = _replica_reads.set(replica_available())
        return _replica_reads.get()

    def __exit__(self, *exc):
        _replica_reads.reset(self.token)


def pinned(request) -> bool:
    try:
        return float(request.COOKIES.get(PIN_COOKIE, "0")) > time.time()
    except ValueError:
        return False


class ReplicaReadsMiddleware:
    """The pages of REPLICA_READ_VIEWS read from the replica unless their reader just wrote; every
    write pins its sender's reads to the primary for REPLICA_PIN_SECONDS (a cookie)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.replica_reads = False
        response = self.get_response(request)
        if request.method not in SAFE_METHODS and replica_configured():
            until = time.time() + settings.REPLICA_PIN_SECONDS
            response.set_cookie(
                PIN_COOKIE,
                f"{until:.0f}",
                max_age=settings.REPLICA_PIN_SECONDS,
                httponly=True,
                secure=settings.SESSION_COOKIE_SECURE,
                samesite="Lax",
            )
        return response

    def process_view(self, request, view_func, view_args, view_kwargs):
        match = request.resolver_match
        if (
            request.method not in SAFE_METHODS
            or match is None
            or match.view_name not in settings.REPLICA_READ_VIEWS
            or pinned(request)
            or not replica_configured()
        ):
            return None
        with replica_reads() as on_replica:
            request.replica_reads = on_replica
            if not on_replica:
                return None
            try:
                response = view_func(request, *view_args, **view_kwargs)
                if callable(getattr(response, "render", None)):
                    response = response.render()
            except DatabaseError as error:
                if not _replica_failed():
                    raise
                replica_down(error)
                response = None
        if response is None:
            request.replica_reads = False
            return view_func(request, *view_args, **view_kwargs)
        if getattr(response, "streaming", False):
            # An export is read while it is sent, after this block: its rows from the replica too.
            response.streaming_content = _read_from_replica(response.streaming_content)
        return response


def _read_from_replica(chunks):
    _replica_reads.set(True)
    try:
        yield from chunks
    finally:
        _replica_reads.set(False)


def _replica_failed() -> bool:
    """Whether the replica's connection is the one that broke (not a query error on the primary)."""
    connection = connections[REPLICA]
    raw = connection.connection
    if raw is None or raw.closed or raw.broken:
        return True
    try:
        return not connection.is_usable()
    except DatabaseError:
        return True
