"""Writes of the Cashback API: keys, idempotency records, webhook events and their deliveries."""

import hashlib
import hmac
import ipaddress
import json
import logging
import secrets
import socket
import time
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlsplit

import httpcore
import httpx
from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from joyback.api.models import (
    ApiKey,
    DeliveryStatus,
    EventType,
    IdempotencyKey,
    IdempotencyState,
    InboundEvent,
    Scope,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    api_key_cache_name,
)
from joyback.limits import json_loads
from joyback.modes import brand_livemode
from joyback.postgresql.prepared import prepared_fetchall
from joyback.queue import enqueue_on_commit, task_schedule_once

logger = logging.getLogger(__name__)

KEY_PREFIX = "jb_"
MODE_WORD = {True: "live", False: "test"}
MODE_WORDS = frozenset(MODE_WORD.values())
SIGNATURE_HEADER = "JoyBack-Signature"
# Delay before retry n (1-based): exponential from a minute, then daily; 10 retries span ~5 days.
RETRY_DELAYS = [60 * 4**n if 60 * 4**n < 86400 else 86400 for n in range(10)]


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


def api_key_create(*, brand_id: int, name: str, scopes) -> IssuedKey:
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
    )
    return IssuedKey(api_key=api_key, secret=secret)


def api_key_revoke(*, api_key: ApiKey) -> ApiKey:
    """Stops the key now (also a rotated key still in its grace period)."""
    now = timezone.now()
    ApiKey.objects.filter(pk=api_key.pk).filter(Q(revoked_at__isnull=True) | Q(revoked_at__gt=now)).update(
        revoked_at=now
    )
    api_key._forget_cached()
    api_key.refresh_from_db()
    return api_key


def api_key_rotate(*, api_key: ApiKey, grace_hours: int = 0) -> IssuedKey:
    """A new key with the same name and scopes; the old one stops working after the grace period."""
    if api_key.revoked_at and api_key.revoked_at <= timezone.now():
        raise ApiKeyError("This key is revoked; create a new one instead.")
    if not 0 <= grace_hours <= 24 * 7:
        raise ApiKeyError("The grace period is between 0 and 168 hours.")
    with transaction.atomic(durable=True):
        issued = api_key_create(brand_id=api_key.brand_id, name=api_key.name, scopes=api_key.scopes)
        ApiKey.objects.filter(pk=api_key.pk).update(
            revoked_at=timezone.now() + timedelta(hours=grace_hours), replaced_by=issued.api_key
        )
    api_key._forget_cached()
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


# Idempotency-Key: Stripe's semantics on top of a unique constraint.


IDEMPOTENCY_TTL = timedelta(hours=24)
# A first request that has held its key this long without answering is taken to have died.
IDEMPOTENCY_LOCK_TIMEOUT = timedelta(seconds=60)


@dataclass(frozen=True)
class IdempotencyOutcome:
    record_id: int | None = None  # we own the key: answer, then idempotency_finish()
    replay: IdempotencyKey | None = None  # the first answer, to send again
    conflict: str = ""  # "in_flight" (409) or "body_mismatch" (422)


def request_fingerprint(*, method: str, path: str, body: bytes) -> str:
    """Equal for the same request; JSON bodies are compared by content, not by their spacing."""
    try:
        canonical = json.dumps(json_loads(body or b"null"), sort_keys=True, separators=(",", ":")).encode()
    except (ValueError, UnicodeDecodeError):  # not JSON, or too deep: the parser refuses it later
        canonical = body
    return hashlib.sha256(method.encode() + b" " + path.encode() + b"\n" + canonical).hexdigest()


def idempotency_begin(*, api_key: ApiKey, key: str, fingerprint: str) -> IdempotencyOutcome:
    """Take the key for this request, or say why not. The insert is its own committed statement, so
    a second request with the same key sees the first at once (no transaction is left open)."""
    now = timezone.now()
    # Looked up first: a replay is this one indexed read and nothing else.
    existing = _idempotency_get(brand_id=api_key.brand_id, key=key)
    if existing is None:
        row_id = _idempotency_insert(
            api_key=api_key, key=key, fingerprint=fingerprint, state=IdempotencyState.IN_FLIGHT, now=now
        )
        if row_id:
            return IdempotencyOutcome(record_id=row_id)
        existing = IdempotencyKey.objects.filter(brand_id=api_key.brand_id, key=key).first()
        if existing is None:  # expired and deleted in between: try once more
            return idempotency_begin(api_key=api_key, key=key, fingerprint=fingerprint)
    return idempotency_judge(existing=existing, fingerprint=fingerprint, now=now)


def _idempotency_insert(
    *, api_key: ApiKey, key: str, fingerprint: str, state: str, now, status=None, body: str = ""
) -> int | None:
    """The key's row, unless another request of the brand holds it already (then None)."""
    table = IdempotencyKey._meta.db_table
    statement = (
        f"INSERT INTO {table} (brand_id, api_key_id, key, request_hash, state, response_status, "  # noqa: S608
        "response_body, created_at, locked_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
        "ON CONFLICT (brand_id, key) DO NOTHING RETURNING id"
    )
    with connection.cursor() as cursor:
        values = [api_key.brand_id, api_key.pk, key, fingerprint, state, status, body, now, now]
        cursor.execute(statement, values)
        row = cursor.fetchone()
    return row[0] if row else None


_IDEMPOTENCY_COLUMNS = [field.column for field in IdempotencyKey._meta.concrete_fields]
_IDEMPOTENCY_ATTNAMES = [field.attname for field in IdempotencyKey._meta.concrete_fields]
_IDEMPOTENCY_SELECT = (
    f"SELECT {', '.join(_IDEMPOTENCY_COLUMNS)} FROM {IdempotencyKey._meta.db_table} "  # noqa: S608
    "WHERE brand_id = %s AND key = %s"
)


def _idempotency_get(*, brand_id: int, key: str) -> IdempotencyKey | None:
    """The one indexed read of the hot paths, without building a query each time."""
    with connection.cursor() as cursor:
        cursor.execute(_IDEMPOTENCY_SELECT, [brand_id, key])
        row = cursor.fetchone()
    return IdempotencyKey.from_db(connection.alias, _IDEMPOTENCY_ATTNAMES, row) if row else None


def idempotency_lookup(*, api_key: ApiKey, key: str, fingerprint: str) -> IdempotencyOutcome | None:
    """For endpoints that store their answer with their own write: the earlier request's outcome,
    or None when the key is new. A finished answer read here is remembered for the replays that
    follow (idempotency_replay_cached)."""
    existing = _idempotency_get(brand_id=api_key.brand_id, key=key)
    if existing is None:
        return None
    now = timezone.now()
    outcome = idempotency_judge(existing=existing, fingerprint=fingerprint, now=now)
    remaining = (existing.created_at + IDEMPOTENCY_TTL - now).total_seconds()
    if outcome.replay is not None and remaining > REPLAY_CACHE_SECONDS:
        # A finished answer never changes before its key expires, so the copy cannot go stale.
        cached = (
            existing.request_hash,
            existing.response_status,
            existing.response_body,
            existing.created_at,
        )
        cache.set(_replay_cache_name(brand_id=api_key.brand_id, key=key), cached, REPLAY_CACHE_SECONDS)
    return outcome


def idempotency_replay_cached(*, api_key: ApiKey, key: str, fingerprint: str) -> IdempotencyOutcome | None:
    """The outcome of a key whose finished answer was read lately, without the database: replays
    come in bursts (a client retrying, a queue redelivering). None when not cached."""
    cached = cache.get(_replay_cache_name(brand_id=api_key.brand_id, key=key))
    if cached is None:
        return None
    request_hash, status, body, created_at = cached
    if created_at <= timezone.now() - IDEMPOTENCY_TTL:
        return None
    if request_hash != fingerprint:
        return IdempotencyOutcome(conflict="body_mismatch")
    return IdempotencyOutcome(
        replay=IdempotencyKey(
            request_hash=request_hash,
            state=IdempotencyState.DONE,
            response_status=status,
            response_body=body,
            created_at=created_at,
        )
    )


REPLAY_CACHE_SECONDS = 60


def _replay_cache_name(*, brand_id: int, key: str) -> str:
    # Hashed: an Idempotency-Key is up to 255 characters of anything, a cache key is not.
    return f"api-replay:{brand_id}:{hashlib.sha256(key.encode()).hexdigest()[:40]}"


def idempotency_answer_store(*, api_key: ApiKey, key: str, fingerprint: str, status: int, body: str) -> bool:
    """Store a finished answer under a new key (False when another request took the key first).
    Inside the caller's transaction it commits, or vanishes, with the caller's own writes."""
    return bool(
        _idempotency_insert(
            api_key=api_key,
            key=key,
            fingerprint=fingerprint,
            state=IdempotencyState.DONE,
            now=timezone.now(),
            status=status,
            body=body,
        )
    )


def idempotency_judge(*, existing: IdempotencyKey, fingerprint: str, now) -> IdempotencyOutcome:
    if existing.created_at < now - IDEMPOTENCY_TTL:
        # Past its lifetime the key may be used afresh; the conditional update lets one request win.
        taken = IdempotencyKey.objects.filter(pk=existing.pk, created_at=existing.created_at).update(
            request_hash=fingerprint,
            state=IdempotencyState.IN_FLIGHT,
            response_status=None,
            response_body="",
            created_at=now,
            locked_at=now,
        )
        return (
            IdempotencyOutcome(record_id=existing.pk) if taken else IdempotencyOutcome(conflict="in_flight")
        )
    if existing.request_hash != fingerprint:
        return IdempotencyOutcome(conflict="body_mismatch")
    if existing.state == IdempotencyState.DONE:
        return IdempotencyOutcome(replay=existing)
    if existing.locked_at < now - IDEMPOTENCY_LOCK_TIMEOUT:
        taken = IdempotencyKey.objects.filter(
            pk=existing.pk, state=IdempotencyState.IN_FLIGHT, locked_at=existing.locked_at
        ).update(locked_at=now)
        if taken:
            return IdempotencyOutcome(record_id=existing.pk)
    return IdempotencyOutcome(conflict="in_flight")


def idempotency_finish(*, record_id: int, status: int, body: str) -> None:
    IdempotencyKey.objects.filter(pk=record_id).update(
        state=IdempotencyState.DONE, response_status=status, response_body=body
    )


def idempotency_release(*, record_id: int) -> None:
    """The request failed on our side (5xx): the client may try again with the same key."""
    IdempotencyKey.objects.filter(pk=record_id, state=IdempotencyState.IN_FLIGHT).delete()


def idempotency_keys_expire(*, now=None) -> int:
    """Forget keys older than twice their promised lifetime (a daily sweep)."""
    now = now or timezone.now()
    deleted, _ = IdempotencyKey.objects.filter(created_at__lt=now - 2 * IDEMPOTENCY_TTL).delete()
    return deleted


# Reported events: stored and answered in one statement, processed by the standing worker, which
# the product registers (this app imports none of the product apps).


class IdempotencyConflict(Exception):
    """Another request took this Idempotency-Key between our look-up and our insert."""


def inbound_event_accept(
    *,
    api_key: ApiKey,
    type: str,
    payload: dict,
    answer,
    idempotency: tuple[str, str] | None = None,
    idempotency_record_id: int | None = None,
) -> tuple[InboundEvent, bytes]:
    """Store the answer under the Idempotency-Key and the event, all or nothing; the standing
    worker claims the event (manage.py work). `answer(event)` gives the response body (bytes)
    before anything is written, so the first answer and every replay are the same bytes.

    A new key and its event are one statement (no BEGIN, one commit, one round trip)."""
    now = timezone.now()
    event = InboundEvent(brand_id=api_key.brand_id, type=type, payload=payload, created_at=now)
    body = answer(event)
    event_values = [event.pk, event.brand_id, type, json.dumps(payload), now]
    if idempotency_record_id is None:
        if idempotency is not None:
            key, fingerprint = idempotency
            parameters = [api_key.brand_id, api_key.pk, key, fingerprint, 202, body.decode(), now, now]
            parameters += event_values
            if not prepared_fetchall(_ACCEPT_KEYED, parameters)[0][0]:  # every request runs it: prepared
                raise IdempotencyConflict
        else:
            prepared_fetchall(_ACCEPT, event_values)
        return event, body
    with transaction.atomic(durable=True):
        if idempotency_record_id is not None:  # a key past its lifetime, taken afresh
            idempotency_finish(record_id=idempotency_record_id, status=202, body=body.decode())
        elif idempotency is not None:
            key, fingerprint = idempotency
            if not idempotency_answer_store(
                api_key=api_key, key=key, fingerprint=fingerprint, status=202, body=body.decode()
            ):
                raise IdempotencyConflict
        event.save(force_insert=True)
    return event, body


_EVENT_TABLE = InboundEvent._meta.db_table
_EVENT_COLUMNS = "id, brand_id, type, payload, status, created_at"
# The key's answer and the event in one statement: the event is only written when the key's row
# was (a conflict leaves both unwritten and selects 0).
_ACCEPT_KEYED = (
    f"WITH k AS (INSERT INTO {IdempotencyKey._meta.db_table} (brand_id, api_key_id, key, request_hash, "  # noqa: S608
    "state, response_status, response_body, created_at, locked_at) "
    "VALUES (%s, %s, %s, %s, 'done', %s, %s, %s, %s) "
    "ON CONFLICT (brand_id, key) DO NOTHING RETURNING id), "
    f"e AS (INSERT INTO {_EVENT_TABLE} ({_EVENT_COLUMNS}) "
    "SELECT %s, %s, %s, %s::jsonb, 'received', %s FROM k) "
    "SELECT count(*) FROM k"
)
_ACCEPT = (
    f"INSERT INTO {_EVENT_TABLE} ({_EVENT_COLUMNS}) "  # noqa: S608
    "VALUES (%s, %s, %s, %s::jsonb, 'received', %s) RETURNING id"
)


# Outgoing webhooks.


class WebhookError(ValueError):
    pass


def _new_signing_secret() -> str:
    return "whsec_" + secrets.token_urlsafe(32)


def _event_types_check(event_types) -> list[str]:
    chosen = sorted(set(event_types))
    if not chosen or any(kind not in EventType.values for kind in chosen):
        raise WebhookError("Choose at least one event type.")
    return chosen


def _url_check(url: str) -> str:
    url = (url or "").strip()
    if not url.startswith(("https://", "http://")) or len(url) > 500:
        raise WebhookError("Give the endpoint's full address, starting with https://.")
    if settings.IS_PRODUCTION and not url.startswith("https://"):
        raise WebhookError("Webhook endpoints must use https://.")
    refusal = webhook_address_refusal(url)
    if refusal:
        raise WebhookError(refusal)
    return url


PRIVATE_ADDRESS_REFUSAL = (
    "The endpoint's address is inside a private network: webhooks go to public addresses only."
)


class WebhookAddressRefused(httpx.ConnectError):
    """A host we will not connect to. A ConnectError, so a delivery treats it as any failed connection."""


_NAT64_WELL_KNOWN = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


def _rfc6052_candidates(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 address a local-use NAT64 prefix (RFC 8215) may embed: the operator picks the prefix
    length (/48, /56, /64 or /96), and bits 64-71 are always skipped (RFC 6052 section 2.2)."""
    raw = address.packed
    layouts = {48: raw[6:8] + raw[9:11], 56: raw[7:8] + raw[9:12], 64: raw[9:13], 96: raw[12:16]}
    return [ipaddress.IPv4Address(packed) for packed in layouts.values()]


def _embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address reaches through a translator or tunnel: a connection to one
    of these forms ends up at the IPv4 address inside it (a NAT64 gateway, a 6to4 or Teredo relay)."""
    if address.ipv4_mapped:
        return [address.ipv4_mapped]
    if address in _IPV4_COMPATIBLE:  # deprecated, but stacks still route it (RFC 4291 2.5.5.1)
        return [ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)]
    if address in _NAT64_WELL_KNOWN:
        return [ipaddress.IPv4Address(address.packed[12:16])]
    if address in _NAT64_LOCAL:
        return _rfc6052_candidates(address)
    if address.sixtofour:
        return [address.sixtofour]
    if address.teredo:
        return list(address.teredo)  # the relay server and the client behind it
    return []


def _is_private(text: str) -> bool:
    # Loopback, private, link-local (the cloud's metadata service), shared and reserved addresses are
    # inside our own network. An IPv6 address that embeds an IPv4 address is judged by that address
    # too: NAT64 of 169.254.169.254 reaches the metadata service just as well.
    address = ipaddress.ip_address(text.split("%", 1)[0])
    reached = [address]
    if address.version == 6:
        reached += _embedded_ipv4(address)
    return any(not each.is_global or each.is_multicast for each in reached)


def _host_addresses(host: str) -> list[str]:
    """host's addresses in the resolver's order, all of them allowed; else WebhookAddressRefused. One
    private answer refuses the host: which address a connection would get is the resolver's choice."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        infos = []
    addresses = list(dict.fromkeys(info[4][0] for info in infos))
    if not addresses:
        raise WebhookAddressRefused(f"The endpoint's host {host} cannot be found.")
    if not settings.WEBHOOK_PRIVATE_ADDRESSES and any(_is_private(address) for address in addresses):
        raise WebhookAddressRefused(PRIVATE_ADDRESS_REFUSAL)
    return addresses


def webhook_address_refusal(url: str) -> str:
    """Why no webhook may go to this URL's host, or "". Unless WEBHOOK_PRIVATE_ADDRESSES allows it,
    every address the host resolves to must be public. Checked when the endpoint is saved, for the
    brand's immediate feedback; deliveries check again the very addresses they connect to."""
    if settings.WEBHOOK_PRIVATE_ADDRESSES:
        return ""
    try:
        _host_addresses(urlsplit(url).hostname or "")
    except WebhookAddressRefused as refused:
        return str(refused)
    return ""


def webhook_endpoint_create(*, brand_id: int, url: str, event_types) -> WebhookEndpoint:
    return WebhookEndpoint.objects.create(
        brand_id=brand_id,
        url=_url_check(url),
        event_types=_event_types_check(event_types),
        secret=_new_signing_secret(),
    )


def webhook_endpoint_update(*, endpoint: WebhookEndpoint, url: str, event_types, enabled: bool):
    endpoint.url = _url_check(url)
    endpoint.event_types = _event_types_check(event_types)
    endpoint.enabled = enabled
    endpoint.save(update_fields=["url", "event_types", "enabled"])
    return endpoint


def webhook_secret_rotate(*, endpoint: WebhookEndpoint, grace_hours: int = 24) -> WebhookEndpoint:
    """A new signing secret; deliveries are signed with both until the old one expires."""
    if not 0 <= grace_hours <= 24 * 7:
        raise WebhookError("The grace period is between 0 and 168 hours.")
    with transaction.atomic(durable=True):
        locked = WebhookEndpoint.objects.select_for_update().get(pk=endpoint.pk)
        locked.previous_secret = locked.secret
        locked.previous_secret_expires_at = timezone.now() + timedelta(hours=grace_hours)
        locked.secret = _new_signing_secret()
        locked.save(update_fields=["secret", "previous_secret", "previous_secret_expires_at"])
    return locked


def webhook_event_emit(*, brand_id: int, type: str, data: dict) -> WebhookEvent | None:
    """The one way any app emits an event. Rows are written in the caller's transaction (so an
    event exists only if what it tells of was committed); each delivery is queued after commit.
    Nothing is stored when no endpoint of the brand listens for this type."""
    EventType(type)
    endpoints = [
        endpoint
        for endpoint in WebhookEndpoint.objects.filter(brand_id=brand_id, enabled=True).only("event_types")
        if type in endpoint.event_types
    ]
    if not endpoints:
        return None
    event = WebhookEvent.objects.create(
        brand_id=brand_id, type=type, data=data, livemode=brand_livemode(brand_id)
    )
    deliveries = WebhookDelivery.objects.bulk_create(
        WebhookDelivery(event=event, endpoint=endpoint) for endpoint in endpoints
    )
    for delivery in deliveries:
        enqueue_on_commit("joyback.api.tasks.webhook_deliver_task", delivery.pk)
    return event


def webhook_payload(event: WebhookEvent) -> bytes:
    return json.dumps(
        {
            "id": str(event.id),
            "type": event.type,
            "created": event.created_at.isoformat(),
            "data": event.data,
            "livemode": event.livemode,
        },
        separators=(",", ":"),
        sort_keys=True,
    ).encode()


def webhook_signature(*, body: bytes, secrets_: list[str], timestamp: int) -> str:
    """t=<unix>,v1=<hex>[,v1=<hex>]: HMAC-SHA256 of "<t>.<body>" with each active secret."""
    signed = f"{timestamp}.".encode() + body
    parts = [f"t={timestamp}"]
    parts += [f"v1={hmac.new(s.encode(), signed, hashlib.sha256).hexdigest()}" for s in secrets_]
    return ",".join(parts)


def _active_secrets(endpoint: WebhookEndpoint, now) -> list[str]:
    active = [endpoint.secret]
    if (
        endpoint.previous_secret
        and endpoint.previous_secret_expires_at
        and endpoint.previous_secret_expires_at > now
    ):
        active.append(endpoint.previous_secret)
    return active


# Tests (and the sandbox) set a transport here to receive deliveries in-process.
_transport: httpx.BaseTransport | None = None


def webhook_transport_set(transport: httpx.BaseTransport | None) -> None:
    global _transport
    _transport = transport


_HTTPCORE_ERRORS = (
    httpcore.TimeoutException,
    httpcore.NetworkError,
    httpcore.ProtocolError,
    httpcore.UnsupportedProtocol,
    httpcore.ProxyError,
)


class _PinnedBackend(httpcore.SyncBackend):
    """Resolves a connection's host once, checks every address and connects to a checked one: a
    second DNS lookup at connect time could answer an internal address (DNS rebinding). TLS starts
    afterwards on the returned stream, with the URL's hostname as server_hostname (httpcore's
    HTTPConnection._connect), so SNI and the certificate check still use the name, not the address."""

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options=None,
    ) -> httpcore.NetworkStream:
        failure = None
        for address in _host_addresses(host):
            try:
                return super().connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc  # the next address may answer, as socket.create_connection does
        raise failure


class _PinnedTransport(httpx.BaseTransport):
    """httpx over an httpcore pool using _PinnedBackend; httpx.HTTPTransport takes no network backend.
    No proxy from the environment: a proxy would resolve the host itself, past our check."""

    def __init__(self) -> None:
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(), network_backend=_PinnedBackend()
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = httpcore.URL(
            scheme=request.url.raw_scheme,
            host=request.url.raw_host,
            port=request.url.port,
            target=request.url.raw_path,
        )
        try:
            # Reads the whole body, as client.post would.
            response = self._pool.request(
                request.method,
                url,
                headers=request.headers.raw,
                content=request.stream,
                extensions=request.extensions,
            )
        except _HTTPCORE_ERRORS as exc:
            # httpx names its errors as httpcore does (ConnectTimeout, ReadError, ...).
            raise getattr(httpx, type(exc).__name__, httpx.TransportError)(str(exc)) from exc
        return httpx.Response(
            response.status,
            headers=response.headers,
            content=response.content,
            extensions=response.extensions,
        )

    def close(self) -> None:
        self._pool.close()


def _http_client() -> httpx.Client:
    return httpx.Client(
        transport=_PinnedTransport() if _transport is None else _transport,
        timeout=settings.WEBHOOK_TIMEOUT_SECONDS,
        follow_redirects=False,
    )


def webhook_deliver(*, delivery_id: int) -> WebhookDelivery:
    """One attempt: POST the signed event; on anything but 2xx, schedule the next attempt."""
    delivery = WebhookDelivery.objects.select_related("event", "endpoint").get(pk=delivery_id)
    if delivery.status in (DeliveryStatus.SUCCEEDED, DeliveryStatus.FAILED):
        return delivery
    # Claim the attempt number first: two workers on one delivery never log the same attempt.
    number = delivery.attempts + 1
    claimed = WebhookDelivery.objects.filter(pk=delivery.pk, attempts=delivery.attempts).update(
        attempts=number
    )
    if not claimed:
        return delivery
    endpoint, event = delivery.endpoint, delivery.event
    body = webhook_payload(event)
    now = timezone.now()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "JoyBack-Webhooks/1",
        SIGNATURE_HEADER: webhook_signature(
            body=body, secrets_=_active_secrets(endpoint, now), timestamp=int(now.timestamp())
        ),
        "JoyBack-Event-Id": str(event.id),
        "JoyBack-Event-Type": event.type,
        "JoyBack-Delivery-Attempt": str(number),
    }
    status_code, excerpt = None, ""
    # Refuses early even when a test transport, which resolves nothing, is in place.
    error = webhook_address_refusal(endpoint.url)
    began = time.monotonic()
    try:
        if not error:
            with _http_client() as client:
                response = client.post(endpoint.url, content=body, headers=headers)
            status_code, excerpt = response.status_code, response.text[:500]
    except WebhookAddressRefused as refused:
        error = str(refused)
    except httpx.HTTPError as exc:
        error = f"{type(exc).__name__}: {exc}"[:300]
    duration_ms = int((time.monotonic() - began) * 1000)
    succeeded = status_code is not None and 200 <= status_code < 300
    with transaction.atomic():
        WebhookAttempt.objects.create(
            delivery=delivery,
            number=number,
            requested_at=now,
            status_code=status_code,
            error=error,
            response_excerpt=excerpt,
            duration_ms=duration_ms,
        )
        delivery.attempts = number
        delivery.last_status_code = status_code
        if succeeded:
            delivery.status, delivery.delivered_at, delivery.next_attempt_at = (
                DeliveryStatus.SUCCEEDED,
                now,
                None,
            )
        elif number > len(RETRY_DELAYS):
            delivery.status, delivery.next_attempt_at = DeliveryStatus.FAILED, None
        else:
            delivery.status = DeliveryStatus.RETRYING
            delivery.next_attempt_at = now + timedelta(seconds=RETRY_DELAYS[number - 1])
            transaction.on_commit(lambda: _retry_schedule(delivery))
        delivery.save(
            update_fields=["attempts", "last_status_code", "status", "delivered_at", "next_attempt_at"]
        )
    return delivery


def _retry_schedule(delivery: WebhookDelivery) -> None:
    task_schedule_once(
        name=f"webhook-delivery-{delivery.pk}-{delivery.attempts + 1}",
        func="joyback.api.tasks.webhook_deliver_task",
        arg=delivery.pk,
        at=delivery.next_attempt_at,
    )


def webhook_redeliver(*, delivery: WebhookDelivery) -> WebhookDelivery:
    """The dashboard's button: try again now, whatever happened before (a new attempt is logged)."""
    # next_attempt_at marks when it was asked for: the sweep leaves it to its task for a while.
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status=DeliveryStatus.PENDING, next_attempt_at=timezone.now()
    )
    enqueue_on_commit("joyback.api.tasks.webhook_deliver_task", delivery.pk)
    delivery.refresh_from_db()
    return delivery


def webhook_deliveries_due(*, now=None) -> list[int]:
    """Deliveries whose task or schedule was lost, for the sweep: retries five minutes past their
    time, and first tries or redeliveries still waiting after five minutes (with Redis as the
    broker, an enqueue lost between the commit and Redis)."""
    stale = (now or timezone.now()) - timedelta(minutes=5)
    retrying = WebhookDelivery.objects.filter(status=DeliveryStatus.RETRYING, next_attempt_at__lte=stale)
    waiting = WebhookDelivery.objects.filter(status=DeliveryStatus.PENDING, created_at__lte=stale).filter(
        Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=stale)
    )
    return [*retrying.values_list("pk", flat=True)[:500], *waiting.values_list("pk", flat=True)[:500]]
