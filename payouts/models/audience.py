"""The audience a brand keeps: its exports, its WhatsApp template sends and its CRM connections.
The consents themselves are verification's (ConsentRecord): a fact about each person."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from campaigns.models import Brand
from joyback.crypto import EncryptedTextField
from payouts.models.notifications import Notification
from verification.models import Identity, Participant


class AudienceExport(models.Model):
    """Who downloaded the brand's audience, when, with which filters and how many people: each CSV
    of contacts leaves a row (kept, for the brand and for a regulator)."""

    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    filters = models.JSONField(default=dict, blank=True)
    people = models.PositiveIntegerField(default=0)
    at = models.DateTimeField()

    def __str__(self):
        return f"export of {self.brand} by {self.user} at {self.at:%Y-%m-%d %H:%M}"


class WhatsAppAccount(models.Model):
    """A brand's own WhatsApp Business Account, connected by its owner through Meta's Embedded
    Signup: its templates are the brand's and its sends leave from the brand's number with the
    brand's token. WhatsApp's Business Policy wants the business a person opted in to to be the
    one messaging them, so a brand without one sends nothing."""

    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+")
    waba_id = models.CharField(max_length=40)
    phone_number_id = models.CharField(max_length=40)
    display_number = models.CharField(max_length=40, blank=True, default="")
    verified_name = models.CharField(max_length=200, blank=True, default="")
    # The business integration system user token the signup's code was exchanged for.
    access_token = EncryptedTextField()
    connected_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    connected_at = models.DateTimeField()
    disconnected_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["brand"], condition=Q(disconnected_at__isnull=True), name="payouts_one_waba_per_brand"
            )
        ]

    def __str__(self):
        return f"WhatsApp {self.display_number or self.phone_number_id} of {self.brand}"


class WhatsAppTemplate(models.Model):
    """A message template of a brand's WhatsApp Business Account, as the Management API last listed
    it: only an APPROVED marketing or utility one of the brand's connected account is offered."""

    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+")
    waba_id = models.CharField(max_length=40, blank=True, default="")
    template_id = models.CharField(max_length=40)
    name = models.CharField(max_length=512)
    language = models.CharField(max_length=15)
    status = models.CharField(max_length=20)
    category = models.CharField(max_length=20)
    body = models.TextField(blank=True, default="")
    parameters = models.PositiveSmallIntegerField(default=0)
    synced_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["brand", "waba_id", "name", "language"], name="payouts_one_template_per_waba"
            )
        ]

    def __str__(self):
        return f"{self.name} ({self.language})"


class BroadcastStatus(models.TextChoices):
    SCHEDULED = "scheduled", _("Scheduled")
    SENDING = "sending", _("Sending")
    DONE = "done", _("Sent")
    CANCELLED = "cancelled", _("Cancelled")


class Broadcast(models.Model):
    """A template a brand sends to its consented WhatsApp audience at a time: planned with its
    cost, the tier's limit and who is skipped, then sent at the tier's pace."""

    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+")
    template_name = models.CharField(max_length=512)
    campaign_id = models.BigIntegerField(
        null=True, blank=True, help_text="The audience: one campaign's, or all"
    )
    parameters = models.JSONField(default=list, blank=True, help_text="The template body's {{n}}, in order")
    send_at = models.DateTimeField()
    status = models.CharField(
        max_length=10, choices=BroadcastStatus.choices, default=BroadcastStatus.SCHEDULED
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    # What was shown before sending: the cost per country in USD micro-units (Meta bills in USD), at
    # the rate table of `rates_date`, and the messaging tier then.
    estimate = models.JSONField(default=dict, blank=True)
    rates_date = models.CharField(max_length=10, blank=True, default="")
    tier = models.CharField(max_length=20, blank=True, default="")
    done_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(
                fields=["send_at"],
                condition=Q(status__in=["scheduled", "sending"]),
                name="payouts_broadcast_due",
            )
        ]

    def __str__(self):
        return f"{self.template_name} to {self.brand} at {self.send_at:%Y-%m-%d %H:%M}"


class RecipientStatus(models.TextChoices):
    PLANNED = "planned", _("Waiting to send")
    SKIPPED = "skipped", _("Skipped")
    QUEUED = "queued", _("Sending")
    SENT = "sent", _("Sent")
    DELIVERED = "delivered", _("Delivered")
    READ = "read", _("Read")
    FAILED = "failed", _("Failed")


class BroadcastRecipient(models.Model):
    """One person of a send: why they were skipped, or what became of their message."""

    broadcast = models.ForeignKey(Broadcast, on_delete=models.PROTECT, related_name="recipients")
    # The broadcast's brand: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="+")
    identity = models.ForeignKey(Identity, on_delete=models.PROTECT, related_name="+")
    country = models.CharField(max_length=2, blank=True, default="")
    language = models.CharField(max_length=15, blank=True, default="")
    status = models.CharField(max_length=10, choices=RecipientStatus.choices, default=RecipientStatus.PLANNED)
    skip_reason = models.CharField(max_length=20, blank=True, default="")
    notification = models.OneToOneField(
        Notification, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    wamid = models.CharField(max_length=100, blank=True, default="", db_index=True)
    error_code = models.PositiveIntegerField(null=True, blank=True)
    billable = models.BooleanField(default=False)
    cost_micros = models.BigIntegerField(default=0, help_text="USD millionths, at the plan's rate")
    sent_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["broadcast", "participant"], name="payouts_broadcast_once_per_person"
            )
        ]
        indexes = [
            models.Index(fields=["broadcast", "status"], name="payouts_broadcast_recipient"),
        ]

    def __str__(self):
        return f"{self.participant} in {self.broadcast_id}: {self.status}"


class CrmKind(models.TextChoices):
    KLAVIYO = "klaviyo", "Klaviyo"
    HUBSPOT = "hubspot", "HubSpot"
    MAILCHIMP = "mailchimp", "Mailchimp"


class CrmConnection(models.Model):
    """A brand's CRM account its consented audience is pushed to, and unsubscribes pulled from."""

    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=12, choices=CrmKind.choices)
    api_key = EncryptedTextField()
    list_id = models.CharField(max_length=64, blank=True, default="")
    # The secret in the webhook address the CRM posts to (Mailchimp signs nothing: the address is
    # the only proof a post is from the CRM the brand connected).
    webhook_secret = models.CharField(max_length=64, blank=True, default="")
    connected_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    connected_at = models.DateTimeField()
    disconnected_at = models.DateTimeField(null=True, blank=True)
    # The sync's state, shown on the page: when it last worked, the last failure, the next try.
    synced_at = models.DateTimeField(null=True, blank=True)
    pushed = models.PositiveIntegerField(default=0)
    pulled_unsubscribes = models.PositiveIntegerField(default=0)
    pulled_until = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True, default="")
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["brand", "kind"],
                condition=Q(disconnected_at__isnull=True),
                name="payouts_one_crm_per_kind",
            )
        ]

    def __str__(self):
        return f"{self.get_kind_display()} of {self.brand}"


class SandboxCrmProfile(models.Model):
    """A profile in the sandbox Klaviyo: what was pushed to it, and an unsubscribe a tester made."""

    api_key_hash = models.CharField(max_length=64)
    phone_number = models.CharField(max_length=20, blank=True, default="")
    email = models.CharField(max_length=254, blank=True, default="")
    consent = models.CharField(max_length=20, default="SUBSCRIBED")
    consented_at = models.CharField(max_length=40, blank=True, default="")
    custom_source = models.CharField(max_length=200, blank=True, default="")
    updated = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["api_key_hash", "phone_number", "email"], name="payouts_sandbox_crm_profile"
            )
        ]

    def __str__(self):
        return self.phone_number or self.email
