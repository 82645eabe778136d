"""What the uptime monitor and the load balancer ask: is this process alive, and can it serve?"""

import logging
from dataclasses import dataclass

import httpx
import redis
from django.conf import settings

from joyback.queue import standing_work_health
from joyback.sql import database_ping

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
    cache. A provider that does not answer, work waiting or the money's state are the same on every
    node; failing readiness for them would take every node out at once and mend nothing."""
    return [_database(), _redis()]


def monitoring() -> list[Check]:
    """For the uptime monitor, a person's alert: readiness, the payment provider, the backlog."""
    checks = readiness()
    database_ok = checks[0].ok
    checks.append(_payment_provider())
    checks.append(_worker_backlog() if database_ok else Check("worker_backlog", False, "database down"))
    return checks
