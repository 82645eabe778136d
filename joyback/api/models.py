"""API keys, idempotency records and outgoing webhooks of the Cashback API.

Like the ledger, this app imports none of the product apps: it knows a brand only by its id.
"""

import uuid

from django.conf import settings
from django.core.cache import cache
from django.db import models, transaction
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from joyback.api.versions import LATEST
from joyback.crypto import EncryptedTextField
from joyback.models import LeasedWork


class Scope(models.TextChoices):
    READ = "read", _("Read")
    EVENTS = "events", _("Report events")
    PAYOUTS = "payouts", _("Payouts")


def api_key_cache_name(prefix: str) -> str:
    """Where joyback.api.keys.api_key_authenticate caches the key with this prefix."""
    return f"api-key:{prefix}"


def api_version_latest() -> str:
    return LATEST


class ApiKey(models.Model):
    """A brand's secret key. Only its prefix is kept readable; the secret is stored as a hash."""

    brand_id = models.BigIntegerField(db_index=True)
    name = models.CharField(max_length=80)
    prefix = models.CharField(max_length=24, unique=True)
    secret_hash = models.CharField(max_length=64)
    scopes = models.JSONField(default=list)
    # The dated API version its requests get unless they ask for another (JoyBack-Version).
    api_version = models.CharField(max_length=10, default=api_version_latest)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    # A revoked_at in the future is a rotation's grace period: the old key works until then.
    revoked_at = models.DateTimeField(null=True, blank=True)
    replaced_by = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replaces"
    )
    # jb_test_… keys belong to a brand's test twin, jb_live_… to the brand; keys made before the
    # modes existed (jb_<hex>_…) are live, as they always were.
    livemode = models.BooleanField(default=True, db_default=True)
    # The person who made it (or rotated it into being): what the key does, they did, so a payout it
    # makes needs someone else's approval. Keys made before this was kept have none, and their
    # payouts cannot be approved until the key is rotated by a known person.
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        # Never searched by: no index to build on a live table.
        db_index=False,
    )

    class Meta:
        verbose_name = "API key"

    def __str__(self):
        return f"{self.name} ({self.prefix}…)"

    # Requests authenticate against a cached copy (joyback.api.keys.api_key_authenticate): any
    # change made here, in the admin too, drops it once committed.
    def save(self, *args, **kwargs):
        super().save(*args, **kwargs)
        self.cached_forget()

    def delete(self, *args, **kwargs):
        self.cached_forget()
        return super().delete(*args, **kwargs)

    def cached_forget(self):

        # Now, and again after the commit: a request in between may have cached the row as it was.
        name = api_key_cache_name(self.prefix)
        cache.delete(name)
        transaction.on_commit(lambda: cache.delete(name))


class IdempotencyState(models.TextChoices):
    IN_FLIGHT = "in_flight", _("In flight")
    DONE = "done", _("Done")


class IdempotencyKey(models.Model):
    """The first answer to a POST with an Idempotency-Key, replayed for the same key and body.

    Keys belong to the brand, not to the API key that sent them: a client that retries after
    rotating its key gets the first answer back instead of a second payout or event."""

    # No index of its own: the unique (brand_id, key) index leads with it, and every request writes here.
    brand_id = models.BigIntegerField()
    # Which of the brand's keys sent the first request (for the record); null once that key is gone.
    api_key = models.ForeignKey(
        ApiKey, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", db_index=False
    )
    key = models.CharField(max_length=255)
    request_hash = models.CharField(max_length=64)
    state = models.CharField(
        max_length=10, choices=IdempotencyState.choices, default=IdempotencyState.IN_FLIGHT
    )
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(db_index=True)
    locked_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["brand_id", "key"], name="api_one_idempotency_key_per_brand")
        ]

    def __str__(self):
        return f"{self.key} ({self.state})"


class EventType(models.TextChoices):
    ACTION_VERIFIED = "action.verified", _("Action verified")
    REWARD_APPROVED = "reward.approved", _("Reward approved")
    CLAIM_REJECTED = "claim.rejected", _("Claim rejected")
    PURCHASE_CREATED = "purchase.created", _("Purchase recorded (cashback pending)")
    PURCHASE_CONFIRMED = "purchase.confirmed", _("Purchase confirmed (return window closed)")
    PURCHASE_REFUNDED = "purchase.refunded", _("Purchase refunded")
    PAYOUT_SETTLED = "payout.settled", _("Payout settled")
    PAYOUT_RETURNED = "payout.returned", _("Payout returned")
    PAYOUT_REJECTED = "payout.rejected", _("Payout rejected by the bank")
    EVENT_PROCESSED = "event.processed", _("Reported event processed")
    EVENT_REFUSED = "event.refused", _("Reported event refused")


class InboundEventStatus(models.TextChoices):
    RECEIVED = "received", _("Received")
    PROCESSED = "processed", _("Processed")
    REFUSED = "refused", _("Refused")


class InboundEvent(LeasedWork):
    """An event a brand's system reported, stored as it came and answered at once; the standing
    worker turns it into a claim (or a refusal) and the brand follows it by GET or webhook."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    brand_id = models.BigIntegerField()
    type = models.CharField(max_length=20)
    payload = models.JSONField(help_text="The validated request")
    status = models.CharField(
        max_length=10, choices=InboundEventStatus.choices, default=InboundEventStatus.RECEIVED
    )
    claim_id = models.BigIntegerField(null=True, blank=True)
    new_claim = models.BooleanField(null=True, blank=True, help_text="False: the claim existed already")
    error = models.JSONField(null=True, blank=True, help_text="code, message and field of a refusal")
    created_at = models.DateTimeField()
    processed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            # Only the few not processed yet: the worker's claim and a refund waiting for its purchase.
            models.Index(
                fields=["brand_id", "created_at"], condition=Q(status="received"), name="api_inbound_pending"
            )
        ]

    def __str__(self):
        return f"{self.type} {self.id} {self.status}"


class WebhookEndpoint(models.Model):
    brand_id = models.BigIntegerField(db_index=True)
    url = models.URLField(max_length=500)
    event_types = models.JSONField(default=list, help_text="Event types sent here")
    secret = EncryptedTextField()
    # During a rotation deliveries carry a signature with each secret until the old one expires.
    previous_secret = EncryptedTextField(null=True, blank=True)
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True)
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.url


class WebhookEvent(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    brand_id = models.BigIntegerField(db_index=True)
    type = models.CharField(max_length=40, choices=EventType.choices)
    data = models.JSONField()
    livemode = models.BooleanField(default=True, db_default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"{self.type} {self.id}"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    SUCCEEDED = "succeeded", _("Delivered")
    RETRYING = "retrying", _("Retrying")
    FAILED = "failed", _("Failed")


class WebhookDelivery(models.Model):
    """One event for one endpoint, tried until it is answered 2xx or the retries run out."""

    event = models.ForeignKey(WebhookEvent, on_delete=models.CASCADE, related_name="deliveries")
    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries")
    # The endpoint's brand (its distribution column past one primary, docs/deploy.md).
    brand_id = models.BigIntegerField()
    status = models.CharField(max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "webhook deliveries"
        indexes = [
            models.Index(fields=["next_attempt_at"], condition=Q(status="retrying"), name="api_delivery_due"),
            models.Index(fields=["created_at"], condition=Q(status="pending"), name="api_delivery_waiting"),
        ]

    def __str__(self):
        return f"{self.event_id} -> {self.endpoint_id}: {self.status}"


class WebhookAttempt(models.Model):
    """The delivery log: every POST made, and what came back."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_log")
    brand_id = models.BigIntegerField()  # the delivery's
    number = models.PositiveSmallIntegerField()
    requested_at = models.DateTimeField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=300, blank=True, default="")
    response_excerpt = models.CharField(max_length=500, blank=True, default="")
    duration_ms = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-requested_at"]

    def __str__(self):
        return f"attempt {self.number} of delivery {self.delivery_id}"
