"""Every SQL statement of verification that the ORM does not write, each with why it cannot."""

import json

from django.db import connection

from joyback.postgresql.prepared import prepared_fetchall
from verification.models import ActionClaim, Participant, ProviderEvent

# Why raw: every page of the claim flow asks this, and plain SQL costs a fifth of the ORM's Exists()
# annotation.
_PARTICIPANT_WITH_CLAIMS = (
    f"SELECT p.*, EXISTS (SELECT 1 FROM {ActionClaim._meta.db_table} c WHERE c.participant_id = p.id) "  # noqa: S608
    f"AS has_claims FROM {Participant._meta.db_table} p WHERE p.id = %s AND p.brand_id = %s"
)


def participant_with_claims(*, participant_id: int, brand_id) -> Participant | None:
    """The participant, with `has_claims` (any action at all) in the same query."""
    return next(iter(Participant.objects.raw(_PARTICIPANT_WITH_CLAIMS, [participant_id, brand_id])), None)


def provider_events_insert(*, provider: str, events: list[tuple[str, dict]], now) -> list[int]:
    """Insert each (event_id, payload) unless already stored, in one statement; the new ids."""
    # Why raw: bulk_create(ignore_conflicts=True) does not say which rows went in, and the ORM
    # cannot prepare a statement (the busiest INSERT: prepared once per connection).
    values = ", ".join(["(%s, %s, %s::jsonb, %s)"] * len(events))
    statement = (
        f"INSERT INTO {ProviderEvent._meta.db_table} (provider, event_id, payload, received_at) "  # noqa: S608
        f"VALUES {values} ON CONFLICT (provider, event_id) DO NOTHING RETURNING id"
    )
    params = [value for key, payload in events for value in (provider, key, json.dumps(payload), now)]
    return sorted(row[0] for row in prepared_fetchall(statement, params))


# Why raw (both): advisory locks are PostgreSQL functions with no ORM counterpart.
def order_lock_take(order_key: str) -> None:
    """A session lock on one shop order, held until order_lock_release (not to the commit)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(hashtext(%s))", ["shop-order:" + order_key])


def order_lock_release(order_key: str) -> None:
    """The lock order_lock_take took, given back (an advisory lock: no ORM counterpart)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_unlock(hashtext(%s))", ["shop-order:" + order_key])
