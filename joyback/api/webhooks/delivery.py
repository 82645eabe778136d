"""Events a brand listens for: emitted in the writer's transaction, delivered signed, retried."""

import hashlib
import hmac
import json
import time
from datetime import timedelta

import httpx
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from joyback.api.models import (
    DeliveryStatus,
    EventType,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
)
from joyback.api.webhooks.transport import WebhookAddressRefused, http_client, webhook_address_refusal
from joyback.modes import brand_livemode
from joyback.queue import enqueue_on_commit, task_schedule_once

SIGNATURE_HEADER = "JoyBack-Signature"
# Delay before retry n (1-based): exponential from a minute, then daily; 10 retries span ~5 days.
RETRY_DELAYS = [60 * 4**n if 60 * 4**n < 86400 else 86400 for n in range(10)]


def webhook_event_emit(
    *, brand_id: int, type: str, data: dict, endpoints: list[WebhookEndpoint] | None = None
) -> WebhookEvent | None:
    """The one way any app emits an event. Rows are written in the caller's transaction (so an
    event exists only if what it tells of was committed); each delivery is queued after commit.
    Nothing is stored when no endpoint of the brand listens for this type."""
    return webhook_events_emit(brand_id=brand_id, types=[type], data=data, endpoints=endpoints)[0]


def webhook_events_emit(
    *, brand_id: int, types: list[str], data: dict, endpoints: list[WebhookEndpoint] | None = None
) -> list[WebhookEvent | None]:
    """webhook_event_emit for several types of one thing that happened (a reward verified and
    approved): the brand's endpoints read once, not once per type (every instant approval emits two).
    A caller emitting for many things at once passes the brand's enabled endpoints it already read
    (joyback.api.selectors.webhook_endpoints_enabled), so they are not read again for each."""
    for type in types:
        EventType(type)
    if endpoints is None:
        endpoints = list(WebhookEndpoint.objects.filter(brand_id=brand_id, enabled=True).only("event_types"))
    events = []
    for type in types:
        listening = [endpoint for endpoint in endpoints if type in endpoint.event_types]
        if not listening:
            events.append(None)
            continue
        event = WebhookEvent.objects.create(
            brand_id=brand_id, type=type, data=data, livemode=brand_livemode(brand_id)
        )
        deliveries = WebhookDelivery.objects.bulk_create(
            WebhookDelivery(event=event, endpoint=endpoint, brand_id=brand_id) for endpoint in listening
        )
        for delivery in deliveries:
            enqueue_on_commit("joyback.api.tasks.webhook_deliver_task", delivery.pk)
        events.append(event)
    return events


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
            with http_client() as client:
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
            brand_id=delivery.brand_id,
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
