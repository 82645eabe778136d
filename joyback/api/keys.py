"""API keys: issued, rotated, revoked, and checked on every request against a cached copy."""

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.core.cache import cache
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from joyback.api.models import ApiKey, Scope, api_key_cache_name
from joyback.modes import brand_livemode

KEY_PREFIX = "jb_"
MODE_WORD = {True: "live", False: "test"}
MODE_WORDS = frozenset(MODE_WORD.values())


class ApiKeyError(ValueError):
    pass


@dataclass(frozen=True)
class IssuedKey:
    api_key: ApiKey
    secret: str  # the whole key, shown once and never stored


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _scopes_check(scopes) -> list[str]:
    scopes = sorted(set(scopes))
    if not scopes or any(scope not in Scope.values for scope in scopes):
        raise ApiKeyError("Choose at least one of the scopes read, events, payouts.")
    return scopes


def api_key_create(*, brand_id: int, name: str, scopes, created_by=None) -> IssuedKey:
    """A new key: jb_live_<prefix>_<secret>, or jb_test_… for a brand's test twin. The prefix
    identifies it, the rest proves it."""
    scopes = _scopes_check(scopes)
    name = (name or "").strip()[:80] or "API key"
    livemode = brand_livemode(brand_id)
    prefix = f"{KEY_PREFIX}{MODE_WORD[livemode]}_{secrets.token_hex(6)}"
    secret = f"{prefix}_{secrets.token_urlsafe(32)}"
    api_key = ApiKey.objects.create(
        brand_id=brand_id,
        name=name,
        prefix=prefix,
        secret_hash=_hash(secret),
        scopes=scopes,
        livemode=livemode,
        created_by=created_by,
    )
    return IssuedKey(api_key=api_key, secret=secret)


def api_key_revoke(*, api_key: ApiKey) -> ApiKey:
    """Stops the key now (also a rotated key still in its grace period)."""
    now = timezone.now()
    ApiKey.objects.filter(pk=api_key.pk).filter(Q(revoked_at__isnull=True) | Q(revoked_at__gt=now)).update(
        revoked_at=now
    )
    api_key.cached_forget()
    api_key.refresh_from_db()
    return api_key


def api_key_rotate(*, api_key: ApiKey, grace_hours: int = 0, created_by=None) -> IssuedKey:
    """A new key with the same name and scopes; the old one stops working after the grace period."""
    if api_key.revoked_at and api_key.revoked_at <= timezone.now():
        raise ApiKeyError("This key is revoked; create a new one instead.")
    if not 0 <= grace_hours <= 24 * 7:
        raise ApiKeyError("The grace period is between 0 and 168 hours.")
    with transaction.atomic(durable=True):
        issued = api_key_create(
            brand_id=api_key.brand_id, name=api_key.name, scopes=api_key.scopes, created_by=created_by
        )
        ApiKey.objects.filter(pk=api_key.pk).update(
            revoked_at=timezone.now() + timedelta(hours=grace_hours), replaced_by=issued.api_key
        )
    api_key.cached_forget()
    api_key.refresh_from_db()
    return issued


def api_key_authenticate(*, secret: str) -> ApiKey | None:
    """The live key this secret belongs to, or None."""
    if not secret.startswith(KEY_PREFIX) or len(secret) > 200:
        return None
    # jb, test or live, the prefix's hex, the secret (which may hold "_" itself); keys made before
    # the modes existed have no mode word (jb_<hex>_…) and are live.
    parts = secret.split("_", 3)
    words = 3 if len(parts) == 4 and parts[1] in MODE_WORDS else 2
    if len(parts) < words + 1:
        return None
    prefix = "_".join(parts[:words])
    cache_name = api_key_cache_name(prefix)
    api_key = cache.get(cache_name)
    if api_key is None:
        api_key = ApiKey.objects.filter(prefix=prefix).first()
        if api_key is None:
            return None  # unknown prefixes are not cached: guessing must not fill the cache
        cache.set(cache_name, api_key, KEY_CACHE_SECONDS)
    if not hmac.compare_digest(api_key.secret_hash, _hash(secret)):
        return None
    now = timezone.now()
    if api_key.revoked_at and api_key.revoked_at <= now:
        return None
    # Written at most once a minute (per process): a busy key must not turn every request into a write.
    written = _last_used_written.get(api_key.prefix)
    if written is None or now - written > timedelta(minutes=1):
        _last_used_written[api_key.prefix] = now
        ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
        api_key.last_used_at = now
    return api_key


_last_used_written: dict[str, object] = {}


# Revoking or rotating a key deletes its cached copy at once where the cache is shared (Redis);
# a process-local cache forgets it within this bound.
KEY_CACHE_SECONDS = 60
