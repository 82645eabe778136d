"""Every SQL statement of joyback.api that the ORM does not write, each with why it cannot."""

import json

from django.db import connection

from joyback.api.models import ApiKey, IdempotencyKey, InboundEvent
from joyback.postgresql.prepared import prepared_fetchall

_IDEMPOTENCY_TABLE = IdempotencyKey._meta.db_table
# Why raw: bulk_create(ignore_conflicts=True) says neither whether the row went in nor its id.
_IDEMPOTENCY_INSERT = (
    f"INSERT INTO {_IDEMPOTENCY_TABLE} (brand_id, api_key_id, key, request_hash, state, "  # noqa: S608
    "response_status, response_body, created_at, locked_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
    "ON CONFLICT (brand_id, key) DO NOTHING RETURNING id"
)


def idempotency_row_insert(
    *, api_key: ApiKey, key: str, fingerprint: str, state: str, now, status=None, body: str = ""
) -> int | None:
    """The key's row, unless another request of the brand holds it already (then None)."""
    with connection.cursor() as cursor:
        values = [api_key.brand_id, api_key.pk, key, fingerprint, state, status, body, now, now]
        cursor.execute(_IDEMPOTENCY_INSERT, values)
        row = cursor.fetchone()
    return row[0] if row else None


_IDEMPOTENCY_COLUMNS = [field.column for field in IdempotencyKey._meta.concrete_fields]
_IDEMPOTENCY_ATTNAMES = [field.attname for field in IdempotencyKey._meta.concrete_fields]
# Why raw: the ORM would compile this query on every replay, most of a replay's own time.
_IDEMPOTENCY_SELECT = (
    f"SELECT {', '.join(_IDEMPOTENCY_COLUMNS)} FROM {_IDEMPOTENCY_TABLE} "  # noqa: S608
    "WHERE brand_id = %s AND key = %s"
)


def idempotency_row_get(*, brand_id: int, key: str) -> IdempotencyKey | None:
    """The one indexed read of the hot paths, without building a query each time."""
    with connection.cursor() as cursor:
        cursor.execute(_IDEMPOTENCY_SELECT, [brand_id, key])
        row = cursor.fetchone()
    return IdempotencyKey.from_db(connection.alias, _IDEMPOTENCY_ATTNAMES, row) if row else None


_EVENT_TABLE = InboundEvent._meta.db_table
_EVENT_COLUMNS = "id, brand_id, type, payload, status, created_at"
# Why raw: two inserts in one statement (a data-modifying WITH), which the ORM has no way to say.
# The key's answer and the event: the event is only written when the key's row was (a conflict
# leaves both unwritten and selects 0).
_ACCEPT_KEYED = (
    f"WITH k AS (INSERT INTO {_IDEMPOTENCY_TABLE} (brand_id, api_key_id, key, request_hash, "  # noqa: S608
    "state, response_status, response_body, created_at, locked_at) "
    "VALUES (%s, %s, %s, %s, 'done', %s, %s, %s, %s) "
    "ON CONFLICT (brand_id, key) DO NOTHING RETURNING id), "
    f"e AS (INSERT INTO {_EVENT_TABLE} ({_EVENT_COLUMNS}) "
    "SELECT %s, %s, %s, %s::jsonb, 'received', %s FROM k) "
    "SELECT count(*) FROM k"
)
# Why raw: a server-side prepared statement (every request runs it), which the ORM cannot prepare.
_ACCEPT = (
    f"INSERT INTO {_EVENT_TABLE} ({_EVENT_COLUMNS}) "  # noqa: S608
    "VALUES (%s, %s, %s, %s::jsonb, 'received', %s) RETURNING id"
)


def inbound_event_insert_keyed(
    *, event: InboundEvent, api_key: ApiKey, key: str, fingerprint: str, body: str
) -> bool:
    """The event and its answer under a new Idempotency-Key, in one prepared statement; False when
    another request holds the key (then nothing is written)."""
    now = event.created_at
    parameters = [api_key.brand_id, api_key.pk, key, fingerprint, 202, body, now, now]
    parameters += _event_values(event)
    return bool(prepared_fetchall(_ACCEPT_KEYED, parameters)[0][0])


def inbound_event_insert(*, event: InboundEvent) -> None:
    prepared_fetchall(_ACCEPT, _event_values(event))


def _event_values(event: InboundEvent) -> list:
    return [event.pk, event.brand_id, event.type, json.dumps(event.payload), event.created_at]
