"""The webhook endpoints a brand registers: their address, event types and signing secrets."""

import secrets
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from joyback.api.models import EventType, WebhookEndpoint
from joyback.api.webhooks.transport import webhook_address_refusal


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
