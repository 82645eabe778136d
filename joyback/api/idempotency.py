"""The Idempotency-Key of every API endpoint: Stripe's semantics on top of a unique constraint.

The stored side (begin, judge, finish, release, and the answer stored within the caller's own write)
and the HTTP side (the header, the refusals and replays, RequestIdempotency for a view) live here
together, so every endpoint keeps its key the same way."""

import hashlib
import json
from dataclasses import dataclass
from datetime import timedelta

from django.core.cache import cache
from django.http import HttpResponse
from django.utils import timezone
from django.utils.translation import gettext as _

from joyback.api import sql
from joyback.api.exceptions import ApiError
from joyback.api.models import ApiKey, IdempotencyKey, IdempotencyState
from joyback.limits import json_loads

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
    existing = sql.idempotency_row_get(brand_id=api_key.brand_id, key=key)
    if existing is None:
        row_id = sql.idempotency_row_insert(
            api_key=api_key, key=key, fingerprint=fingerprint, state=IdempotencyState.IN_FLIGHT, now=now
        )
        if row_id:
            return IdempotencyOutcome(record_id=row_id)
        existing = IdempotencyKey.objects.filter(brand_id=api_key.brand_id, key=key).first()
        if existing is None:  # expired and deleted in between: try once more
            return idempotency_begin(api_key=api_key, key=key, fingerprint=fingerprint)
    return idempotency_judge(existing=existing, fingerprint=fingerprint, now=now)


def idempotency_lookup(*, api_key: ApiKey, key: str, fingerprint: str) -> IdempotencyOutcome | None:
    """For endpoints that store their answer with their own write: the earlier request's outcome,
    or None when the key is new. A finished answer read here is remembered for the replays that
    follow (idempotency_replay_cached)."""
    existing = sql.idempotency_row_get(brand_id=api_key.brand_id, key=key)
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
        sql.idempotency_row_insert(
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


class IdempotencyConflict(Exception):
    """Another request took this Idempotency-Key between our look-up and our insert."""


# The HTTP side: the header, the answers an earlier request decides, and a request's key.


def idempotency_key_header(request) -> str:
    key = request.META.get("HTTP_IDEMPOTENCY_KEY", "")
    if len(key) > 255:
        raise ApiError(
            "idempotency_key_invalid",
            _("An Idempotency-Key has at most 255 characters."),
            field="Idempotency-Key",
        )
    return key


class Replay(Exception):
    """The first answer to this key, to send again instead of doing the work."""

    def __init__(self, response):
        self.response = response


def idempotency_refuse(outcome: IdempotencyOutcome) -> None:
    """Raise the answer an earlier request with this key decides (409, 422 or its replay)."""
    if outcome.conflict == "in_flight":
        raise ApiError(
            "idempotency_in_flight",
            _("A request with this Idempotency-Key is still being processed; retry shortly."),
            field="Idempotency-Key",
            status_code=409,
        )
    if outcome.conflict == "body_mismatch":
        raise ApiError(
            "idempotency_key_reused",
            _("This Idempotency-Key was used with a different request."),
            field="Idempotency-Key",
            status_code=422,
        )
    if outcome.replay is not None:
        record = outcome.replay
        # The stored bytes as they were sent the first time, without parsing and rendering again.
        replayed = HttpResponse(
            record.response_body, status=record.response_status, content_type="application/json"
        )
        replayed["Idempotent-Replayed"] = "true"
        raise Replay(replayed)


class RequestIdempotency:
    """The Idempotency-Key of one POST (nothing to do when it has none), in one of two ways.

    An endpoint that does its work and then answers takes the key first (begin), and stores its
    answer (finish) or lets the key go on a failure of ours (release).

    An endpoint that stores its answer within its own write (POST /events, where a new request is
    one statement) asks the replay cache first (replay_if_cached), then tries the write with the
    key (for_write); only when the key exists already is it looked up (taken), which raises its
    replay, 409 or 422, or gives the write an expired key to take afresh. A refusal before the
    write is stored under the key like any answer (refused)."""

    def __init__(self, request, api_key: ApiKey):
        self.api_key = api_key
        self.key = idempotency_key_header(request)
        self.record_id = None
        if self.key:
            self.fingerprint = request_fingerprint(
                method=request.method, path=request.path, body=request.body
            )

    def begin(self) -> None:
        if not self.key:
            return
        outcome = idempotency_begin(api_key=self.api_key, key=self.key, fingerprint=self.fingerprint)
        idempotency_refuse(outcome)
        self.record_id = outcome.record_id

    def finish(self, response) -> None:
        """Keep the answer for the replays (a 5xx is not kept: the client may retry freely)."""
        if self.record_id is None:
            return
        if response.status_code >= 500:
            self.release()
            return
        if callable(getattr(response, "render", None)):
            response.render()
        idempotency_finish(
            record_id=self.record_id, status=response.status_code, body=response.content.decode()
        )

    def release(self) -> None:
        if self.record_id is not None:
            idempotency_release(record_id=self.record_id)

    def replay_if_cached(self) -> None:
        if not self.key:
            return
        cached = idempotency_replay_cached(api_key=self.api_key, key=self.key, fingerprint=self.fingerprint)
        if cached is not None:
            idempotency_refuse(cached)

    def for_write(self) -> dict:
        if self.record_id is not None:
            return {"idempotency_record_id": self.record_id}
        return {"idempotency": (self.key, self.fingerprint)} if self.key else {}

    def taken(self) -> dict:
        """The write found the key taken: raise the answer it decides, or (for a key past its
        lifetime, now ours) return what the write passes again."""
        outcome = idempotency_lookup(api_key=self.api_key, key=self.key, fingerprint=self.fingerprint)
        idempotency_refuse(outcome or IdempotencyOutcome(conflict="in_flight"))
        self.record_id = outcome.record_id
        return self.for_write()

    def refused(self, response: HttpResponse) -> HttpResponse:
        """Keep a refusal before the write like any answer (a 5xx is not kept: retry freely)."""
        if not self.key:
            return response
        answer = {"status": response.status_code, "body": response.content.decode()}
        if self.record_id is None and idempotency_answer_store(
            api_key=self.api_key, key=self.key, fingerprint=self.fingerprint, **answer
        ):
            return response
        self.taken()
        idempotency_finish(record_id=self.record_id, **answer)
        return response
