"""A fixed-window rate limit in the shared cache: good enough to stop floods from one address."""

import time

from django.core.cache import cache


def client_address(request) -> str:
    # Behind a proxy, the proxy must set REMOTE_ADDR (e.g. gunicorn --forwarded-allow-ips).
    return request.META.get("REMOTE_ADDR", "unknown")


def rate_limit_hit(*, scope: str, key: str, limit: int, window_seconds: int) -> bool:
    """Counts one hit; True once the key has made more than `limit` hits in this window."""
    bucket = f"ratelimit:{scope}:{key}:{int(time.time() // window_seconds)}"
    try:
        return cache.incr(bucket) > limit  # one cache operation for every hit but a window's first
    except ValueError:  # the window's first hit
        if cache.add(bucket, 1, timeout=window_seconds + 1):
            return limit < 1
        return cache.incr(bucket) > limit  # another request's first hit came in between
