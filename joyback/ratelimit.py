"""The one rate limiter: a fixed window in the shared cache, for a person's address (stopping floods)
and for an API key (its requests per minute), and the client address it is counted by."""

import ipaddress
import itertools
import time
from functools import cache as memoized

from django.conf import settings
from django.core.cache import cache


@memoized
def _proxy_networks(networks: tuple[str, ...]) -> tuple:
    return tuple(ipaddress.ip_network(network, strict=False) for network in networks)


def _address(text: str):
    try:
        return ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None


def _is_proxy(address) -> bool:
    return any(address in network for network in _proxy_networks(tuple(settings.TRUSTED_PROXIES)))


def client_address(request) -> str:
    """The address of the person's machine, for rate limits and fraud signals.

    Without trusted proxies it is the connection's own address, whatever X-Forwarded-For says (anyone
    can send that header). Behind our proxies (settings.TRUSTED_PROXIES, their networks, or
    TRUSTED_PROXY_HOPS, how many of them) X-Forwarded-For is read from the right, where our own
    proxies appended what they saw: the first address that is not one of ours is the client."""
    remote = request.META.get("REMOTE_ADDR", "unknown")
    forwarded = [hop for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
    if settings.TRUSTED_PROXIES:
        chain = [remote, *reversed(forwarded)]
        for hop, before in itertools.pairwise(chain):
            address = _address(hop)
            if address is None or not _is_proxy(address):
                return hop.strip()
            if _address(before) is None:
                return hop.strip()  # a proxy passed on garbage: the proxy is what we know
        return chain[-1].strip()
    hops = settings.TRUSTED_PROXY_HOPS
    if hops and len(forwarded) >= hops and _address(forwarded[-hops]) is not None:
        return forwarded[-hops].strip()
    return remote


def _counted_as(key: str) -> str:
    """An IPv6 client holds a whole /64 (its provider gives it 2^64 addresses), so its limit is
    counted per /64; an IPv4 address, or a key that is no address (an API key), as it is."""
    address = _address(key)
    if address is None:
        return key
    if address.version == 4:
        return str(address)
    if address.ipv4_mapped:
        return str(address.ipv4_mapped)
    return str(ipaddress.ip_network(f"{address}/64", strict=False))


def rate_limit_window(*, scope: str, key: str, limit: int, window_seconds: int) -> tuple[bool, int]:
    """Counts one hit in a fixed window: whether it is within `limit`, and the seconds until the
    window starts again (a Retry-After). Atomic add/incr in the shared cache (Redis in production)."""
    key = _counted_as(key)
    now = time.time()
    window = int(now // window_seconds)
    wait = max(1, round((window + 1) * window_seconds - now))
    bucket = f"ratelimit:{scope}:{key}:{window}"
    try:
        return cache.incr(bucket) <= limit, wait  # one cache operation for every hit but a window's first
    except ValueError:  # the window's first hit
        pass
    if cache.add(bucket, 1, timeout=window_seconds + 1):
        return limit >= 1, wait
    try:
        return cache.incr(bucket) <= limit, wait  # another request's first hit came in between
    except ValueError:  # the window expired in between: start it again
        cache.add(bucket, 1, timeout=window_seconds + 1)
        return True, wait


def rate_limit_hit(*, scope: str, key: str, limit: int, window_seconds: int) -> bool:
    """Counts one hit; True once the key has made more than `limit` hits in this window."""
    allowed, _wait = rate_limit_window(scope=scope, key=key, limit=limit, window_seconds=window_seconds)
    return not allowed


def rate_limit_over(*, scope: str, key: str, limit: int, window_seconds: int) -> bool:
    """Whether the key already made more than `limit` hits in this window, without counting one: for
    limits on failures (wrong codes), read before the attempt and counted only when it fails."""
    window = int(time.time() // window_seconds)
    return (cache.get(f"ratelimit:{scope}:{_counted_as(key)}:{window}") or 0) > limit
