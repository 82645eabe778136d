"""Messages to people: every one goes through a Notification row."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from campaigns.models import Brand
from payouts.models.payees import PayeeAccount
from payouts.models.payouts import Payout
from verification.models import Participant


class Notification(models.Model):
    """A message to a person (their status link, a payout's news, a privacy confirmation...) or to
    a member of a brand, sent once (the unique key) after commit, and tried again by the sweep on
    the one retry policy (payouts.notifications.NOTIFICATION_ATTEMPTS, notification_backoff)."""

    participant = models.ForeignKey(
        Participant,
        on_delete=models.PROTECT,
        related_name="+",
        null=True,
        blank=True,
        db_index=False,
    )
    # The contact it goes to, as it was when the message was decided (a change notice goes to the
    # old one).
    payee = models.ForeignKey(
        PayeeAccount, on_delete=models.PROTECT, related_name="+", null=True, blank=True, db_index=False
    )
    payout = models.ForeignKey(
        Payout, on_delete=models.PROTECT, related_name="notifications", null=True, blank=True
    )
    # Or a member of the brand (its verification, a deposit booked), instead of a person.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        null=True,
        blank=True,
        db_index=False,
    )
    # The person's (or member's) brand: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    kind = models.CharField(max_length=24)
    channel = models.CharField(max_length=10)
    key = models.CharField(max_length=80, unique=True)
    # What the message needs beyond its rows (a link, a campaign's name): never a secret, never
    # the person's name or bank details, which are read from the rows when it is sent.
    context = models.JSONField(default=dict, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    provider_message_id = models.CharField(max_length=100, blank=True, default="")
    sent_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # The sweep and the metrics look for messages still unsent; a sent one is never looked at.
        indexes = [
            models.Index(
                fields=["created_at"], condition=Q(sent_at__isnull=True), name="payouts_notification_unsent"
            ),
            # Built concurrently (0029): the table is live. The person's index serves the participant key.
            models.Index(fields=["participant", "kind"], name="payouts_notification_person"),
            models.Index(fields=["payee"], name="payouts_notification_payee"),
            models.Index(fields=["user"], name="payouts_notification_user"),
        ]

    def __str__(self):
        return f"{self.kind} by {self.channel}"
