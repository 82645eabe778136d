"""Messages to people about their payouts."""

from django.db import models
from django.db.models import Q

from campaigns.models import Brand
from payouts.models.payouts import Payout


class Notification(models.Model):
    """A message to the person about their payout, sent once (the unique key) after commit."""

    payout = models.ForeignKey(Payout, on_delete=models.PROTECT, related_name="notifications")
    # Its payout's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    kind = models.CharField(max_length=24)
    channel = models.CharField(max_length=10)
    key = models.CharField(max_length=80, unique=True)
    provider_message_id = models.CharField(max_length=100, blank=True, default="")
    sent_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # The sweep and the metrics look for messages still unsent; a sent one is never looked at.
        indexes = [
            models.Index(
                fields=["created_at"], condition=Q(sent_at__isnull=True), name="payouts_notification_unsent"
            )
        ]

    def __str__(self):
        return f"{self.kind} by {self.channel}"
