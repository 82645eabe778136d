"""The shared cache: Redis when it answers, the database's cache table when it does not.

Login rate limits, used TOTP codes and the API's key cache must be shared by every web process, so
there is no per-process cache. When Redis is unreachable, pages, sign-in and the API keep answering
from the database table instead of failing; after a failure Redis is left alone for a few seconds,
so a request does not wait for a connect timeout on every cache call.
"""

import logging
import time

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

REDIS_DOWN = (RedisConnectionError, RedisTimeoutError, OSError)
# How long Redis is skipped after it failed to answer.
RETRY_AFTER_SECONDS = 5.0
FALLBACK_ALIAS = "database"

_down_until = 0.0


def redis_marked_down() -> bool:
    return time.monotonic() < _down_until


def _mark_down(error: Exception) -> None:
    global _down_until
    if not redis_marked_down():
        logger.warning("Redis cache unreachable, using the database cache: %s", error)
    _down_until = time.monotonic() + RETRY_AFTER_SECONDS


def _falling_back(name: str):
    def method(self, *args, **kwargs):
        if not redis_marked_down():
            try:
                return getattr(super(FallbackRedisCache, self), name)(*args, **kwargs)
            except REDIS_DOWN as error:
                _mark_down(error)
        return getattr(caches[FALLBACK_ALIAS], name)(*args, **kwargs)

    method.__name__ = name
    return method


class FallbackRedisCache(RedisCache):
    """Django's Redis cache whose every operation falls back to caches["database"] while Redis is down."""


for _name in (
    "add",
    "get",
    "set",
    "touch",
    "delete",
    "get_many",
    "has_key",
    "incr",
    "set_many",
    "delete_many",
    "clear",
):
    setattr(FallbackRedisCache, _name, _falling_back(_name))
