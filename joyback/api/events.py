"""Reported events: stored and answered in one statement, processed by the standing worker, which
the product registers (this app imports none of the product apps)."""

from django.db import transaction
from django.utils import timezone

from joyback.api import sql
from joyback.api.idempotency import IdempotencyConflict, idempotency_finish
from joyback.api.models import ApiKey, InboundEvent


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
    event = InboundEvent(brand_id=api_key.brand_id, type=type, payload=payload, created_at=timezone.now())
    body = answer(event)
    if idempotency_record_id is None:
        if idempotency is None:
            sql.inbound_event_insert(event=event)
            return event, body
        key, fingerprint = idempotency
        if not sql.inbound_event_insert_keyed(
            event=event, api_key=api_key, key=key, fingerprint=fingerprint, body=body.decode()
        ):
            raise IdempotencyConflict
        return event, body
    with transaction.atomic(durable=True):  # a key past its lifetime, taken afresh
        idempotency_finish(record_id=idempotency_record_id, status=202, body=body.decode())
        event.save(force_insert=True)
    return event, body
