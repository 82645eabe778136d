"""Events the brand's system reported through the API, turned into claims by the standing worker.

The request stored the event and answered 202; here it becomes a purchase's cashback claim, the
reward of a custom action, a like or a comment, or a refund, or a refusal with the code, message
and field the brand would have had from a synchronous answer. Every step is idempotent (an order
id is one claim, an action, like or comment is rewarded once per person, a refund twice is a
no-op), so an event processed twice, or a crash between the claim and the event's status, changes
nothing.
"""

from django.db import transaction
from django.utils import timezone

from campaigns.models import Brand
from joyback.api.models import InboundEvent, InboundEventStatus
from joyback.api.selectors import inbound_events_unfinished
from joyback.api.webhooks.delivery import webhook_event_emit
from joyback.queue import claim_and_process
from verification.cashback import (
    CashbackError,
    Customer,
    custom_action_record,
    purchase_record,
    purchase_refund,
    tiktok_engagement_record,
)
from verification.referrals import Referral
from verification.services.provider_events import EVENT_MAX_ATTEMPTS

# What names the like or comment in the brand's report, kept as the claim's evidence.
ENGAGEMENT_REFERENCE = {"like": ("video_id", "like_id"), "comment": ("video_id", "comment_id")}


def _customer(data: dict) -> Customer:
    return Customer(**{key: data.get(key, "") for key in ("id", "email", "phone")})


def _purchases_waiting(*, event: InboundEvent) -> list[InboundEvent]:
    """Purchases of this order reported before the refund and not processed yet: tasks may run out
    of order, and a refund must never find its purchase missing because of that."""
    return list(
        InboundEvent.objects.filter(
            brand_id=event.brand_id,
            status=InboundEventStatus.RECEIVED,
            type="purchase",
            created_at__lte=event.created_at,
            payload__order_id=event.payload.get("order_id"),
        ).exclude(pk=event.pk)
    )


def inbound_event_process(*, event_id) -> InboundEvent | None:
    event = InboundEvent.objects.filter(pk=event_id).first()
    if event is None or event.status != InboundEventStatus.RECEIVED:
        return event
    brand = Brand.objects.get(pk=event.brand_id)
    data = event.payload
    claim, created, error = None, None, None
    try:
        if event.type == "purchase":
            claim, created = purchase_record(
                brand=brand,
                order_id=data["order_id"],
                amount=data["amount"],
                currency=data["currency"],
                customer=_customer(data["customer"]),
                campaign_id=data.get("campaign_id"),
                referral=Referral(codes=(data["referral_code"],)) if data.get("referral_code") else None,
            )
        elif event.type == "action":
            claim, created = custom_action_record(
                brand=brand,
                customer=_customer(data["customer"]),
                campaign_id=data.get("campaign_id"),
                reference=data.get("reference", ""),
            )
        elif event.type in ENGAGEMENT_REFERENCE:
            claim, created = tiktok_engagement_record(
                brand=brand,
                trigger=event.type,
                open_id=data["open_id"],
                reference={key: data.get(key, "") for key in ENGAGEMENT_REFERENCE[event.type]},
                campaign_id=data.get("campaign_id"),
            )
        else:
            for waiting in _purchases_waiting(event=event):
                inbound_event_process(event_id=waiting.pk)
            claim = purchase_refund(brand=brand, order_id=data["order_id"], reason=data.get("reason", ""))
            created = False
    except CashbackError as refusal:
        error = {"code": refusal.code, "message": refusal.message, "field": refusal.field}
    with transaction.atomic(durable=True):
        done = InboundEvent.objects.filter(pk=event.pk, status=InboundEventStatus.RECEIVED).update(
            status=InboundEventStatus.REFUSED if error else InboundEventStatus.PROCESSED,
            claim_id=claim.pk if claim else None,
            new_claim=created,
            error=error,
            processed_at=timezone.now(),
        )
        if done:
            webhook_event_emit(
                brand_id=event.brand_id,
                type="event.refused" if error else "event.processed",
                data={
                    "event_id": str(event.pk),
                    "event_type": event.type,
                    "claim_id": claim.pk if claim else None,
                    "new_claim": created,
                    "error": error,
                },
            )
    event.refresh_from_db()
    return event


def inbound_events_process(*, limit: int = 100, ids: list | None = None) -> int:
    """Claim up to `limit` events still waiting (or these ids), oldest first, and process each; how
    many were claimed."""
    return claim_and_process(
        inbound_events_unfinished().filter(attempts__lt=EVENT_MAX_ATTEMPTS),
        process=lambda pk: inbound_event_process(event_id=pk),
        limit=limit,
        order_by="created_at",
        ids=ids,
    )
