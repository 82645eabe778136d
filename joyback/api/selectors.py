"""Reads of the API app, each scoped to one brand by its id."""

from django.db.models import Count, Min

from joyback.api.models import (
    ApiKey,
    DeliveryStatus,
    InboundEvent,
    InboundEventStatus,
    WebhookDelivery,
    WebhookEndpoint,
)
from joyback.metrics import age_seconds, gauge


def api_keys_for_brand(*, brand_id: int):
    return ApiKey.objects.filter(brand_id=brand_id).order_by("-created_at")


def api_key_get_for_brand(*, brand_id: int, key_id: int) -> ApiKey | None:
    return ApiKey.objects.filter(brand_id=brand_id, pk=key_id).first()


def webhook_endpoints_for_brand(*, brand_id: int):
    return WebhookEndpoint.objects.filter(brand_id=brand_id).order_by("-created_at")


def webhook_endpoint_get_for_brand(*, brand_id: int, endpoint_id: int) -> WebhookEndpoint | None:
    return WebhookEndpoint.objects.filter(brand_id=brand_id, pk=endpoint_id).first()


def webhook_deliveries_for_endpoint(*, endpoint: WebhookEndpoint, limit: int = 50):
    return (
        WebhookDelivery.objects.filter(endpoint=endpoint)
        .select_related("event")
        .prefetch_related("attempt_log")
        .order_by("-created_at")[:limit]
    )


def webhook_delivery_get_for_brand(*, brand_id: int, delivery_id: int) -> WebhookDelivery | None:
    return (
        WebhookDelivery.objects.filter(endpoint__brand_id=brand_id, pk=delivery_id)
        .select_related("endpoint", "event")
        .first()
    )


def inbound_events_unfinished():
    """Reported events not processed yet, however often the standing worker tried."""
    return InboundEvent.objects.filter(status=InboundEventStatus.RECEIVED)


def webhook_metrics():
    """Outgoing webhooks that have not reached the brand (for GET /metrics)."""
    rows = (
        # Live only: a developer's test endpoint on their laptop is not an operations alert.
        WebhookDelivery.objects.filter(event__livemode=True)
        .exclude(status=DeliveryStatus.SUCCEEDED)
        .values_list("status")
        .annotate(n=Count("pk"), oldest=Min("created_at"))
        .order_by()
    )
    rows = list(rows)
    yield gauge(
        "joyback_webhook_deliveries_undelivered",
        "Webhook deliveries pending, retrying or failed",
        ["status"],
        [(status, n) for status, n, _oldest in rows],
    )
    yield gauge(
        "joyback_webhook_deliveries_oldest_seconds",
        "Age of the oldest undelivered webhook, by status",
        ["status"],
        [(status, age_seconds(oldest)) for status, _n, oldest in rows],
    )


def webhook_endpoints_enabled(*, brand_ids) -> dict[int, list[WebhookEndpoint]]:
    """The enabled endpoints of each of these brands (none listed for a brand without any), read
    once for a caller that emits events of many brands or many events of one (a payout batch)."""
    by_brand: dict[int, list[WebhookEndpoint]] = {brand_id: [] for brand_id in brand_ids}
    for endpoint in WebhookEndpoint.objects.filter(brand_id__in=by_brand, enabled=True).only(
        "brand_id", "event_types"
    ):
        by_brand[endpoint.brand_id].append(endpoint)
    return by_brand
