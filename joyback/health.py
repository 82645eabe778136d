"""What the uptime monitor and the load balancer ask: is this process alive, and can it serve?"""

import logging
from dataclasses import dataclass

import httpx
import redis
from django.conf import settings
from django.db import DatabaseError

from joyback.queue import standing_work_health
from joyback.replicas import REPLICA, replica_configured
from joyback.sql import database_ping, replica_state

logger = logging.getLogger(__name__)
PROBE_TIMEOUT_SECONDS = 1.0


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str = ""


def _database() -> Check:
    try:
        database_ping()
    except Exception as error:  # any failure is "down", said in the answer
        return Check("database", False, type(error).__name__)
    return Check("database", True)


def _redis() -> Check:
    if not settings.REDIS_URL:
        return Check("redis", True, "not used: the database is the broker and the cache")
    try:
        client = redis.Redis.from_url(
            settings.REDIS_URL,
            socket_connect_timeout=PROBE_TIMEOUT_SECONDS,
            socket_timeout=PROBE_TIMEOUT_SECONDS,
        )
        client.ping()
    except (redis.RedisError, OSError) as error:
        return Check("redis", False, f"{type(error).__name__}: pages fall back to the database cache")
    return Check("redis", True)


def _replica() -> Check:
    """The streaming replica, when one is configured: reachable, a standby that streams from a
    primary, and not further behind than REPLICA_MAX_LAG_SECONDS. While it is not, its pages read
    from the primary (joyback.replicas), and the primary has no standby to fail over to."""
    try:
        in_recovery, streaming, lag = replica_state(using=REPLICA)
    except DatabaseError as error:
        return Check("replica", False, f"{type(error).__name__}: down, its reads go to the primary")
    if not in_recovery:
        return Check("replica", False, "not a standby (promoted?): it takes writes, no replica left")
    if not streaming:
        return Check("replica", False, "not streaming from a primary: it falls behind")
    if lag is not None and lag > settings.REPLICA_MAX_LAG_SECONDS:
        return Check("replica", False, f"lagging: its replay is {lag:.1f} s behind")
    return Check("replica", True, f"{lag or 0:.1f} s behind")


def _payment_provider() -> Check:
    if settings.SANDBOX:
        return Check("payment_provider", True, "sandbox bank, served by this app")
    if not settings.PSP_API_BASE:
        return Check("payment_provider", False, "PSP_API_BASE is not set")
    try:
        # Any answer, even 401 or 404, says the provider is reachable; only no answer is down.
        httpx.get(settings.PSP_API_BASE, timeout=PROBE_TIMEOUT_SECONDS)
    except httpx.HTTPError as error:
        return Check("payment_provider", False, type(error).__name__)
    return Check("payment_provider", True)


def _worker_backlog() -> Check:
    try:
        failing = [kind.name for kind in standing_work_health() if kind.failing]
    except Exception as error:  # the database being down is reported by its own check
        return Check("worker_backlog", False, type(error).__name__)
    if failing:
        return Check("worker_backlog", False, "waiting too long or given up: " + ", ".join(failing))
    return Check("worker_backlog", True)


def readiness() -> list[Check]:
    """What taking this node out of rotation would mend: its own reach to the database and the
    cache; and the replica, when one is configured, reported (its pages fall back to the primary,
    so it only degrades the answer). A provider that does not answer, work waiting or the money's
    state are the same on every node; failing readiness for them would take every node out at once
    and mend nothing."""
    checks = [_database(), _redis()]
    if replica_configured():
        checks.append(_replica())
    return checks


def monitoring() -> list[Check]:
    """For the uptime monitor, a person's alert: readiness, the payment provider, the backlog."""
    checks = readiness()
    database_ok = checks[0].ok
    checks.append(_payment_provider())
    checks.append(_worker_backlog() if database_ok else Check("worker_backlog", False, "database down"))
    return checks
