"""The platform's fees moving at the payment provider: one internal transfer per batch of a brand's
fee charges (campaigns.FeeCharge), from the brand's balance account to the platform's."""

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from campaigns.models import Brand


class FeeTransferStatus(models.TextChoices):
    PENDING = "pending", _("To send")
    SENT = "sent", _("Taken by the provider")
    BOOKED = "booked", _("Booked by the provider")
    REFUSED = "refused", _("Refused by the provider; sent again later")
    WAITING = "waiting", _("Waiting for the brand's balance account")


# What is still to be asked of the provider: neither taken (its booking comes by webhook) nor booked.
FEE_TRANSFER_DUE = ("pending", "refused", "waiting")


class FeeTransfer(models.Model):
    """What the provider is asked to move for a batch of fees; `reference` is unique, is the
    transfer's reference at the provider (with "-R<n>" after the n-th refusal, so each webhook
    names its attempt), and keys its Idempotency-Key (with the number of refusals, so a transfer
    the provider refused can be asked for again, and a lost answer never twice). Booked in the
    ledger once, when the provider says booked, under the unique key fee_ledger_key(reference)."""

    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+")
    currency = models.CharField(max_length=3)
    amount = models.BigIntegerField()
    reference = models.CharField(max_length=40, unique=True)
    status = models.CharField(
        max_length=10, choices=FeeTransferStatus.choices, default=FeeTransferStatus.PENDING
    )
    refusals = models.PositiveIntegerField(default=0)
    attempts = models.PositiveIntegerField(default=0)
    provider_transfer_id = models.CharField(max_length=64, blank=True, default="")
    provider_status = models.CharField(max_length=40, blank=True, default="")
    reason = models.CharField(max_length=300, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    sent_at = models.DateTimeField(null=True, blank=True)
    booked_at = models.DateTimeField(null=True, blank=True)
    ledger_transaction_id = models.BigIntegerField(null=True, blank=True)
    # The provider's message the booking rests on (its answer, a webhook, or its answer to the
    # poll's GET /transfers/{id}), in words staff can look up.
    booked_on = models.CharField(max_length=120, blank=True, default="", db_default="")
    # The poll (payouts.fees.fee_transfers_poll) asks about a transfer taken and not booked; after
    # STUCK_AFTER it is named to staff once.
    polled_at = models.DateTimeField(null=True, blank=True)
    stuck_alerted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(amount__gt=0), name="payouts_fee_transfer_positive")
        ]
        indexes = [
            models.Index(
                fields=["next_attempt_at"],
                condition=models.Q(status__in=FEE_TRANSFER_DUE),
                name="payouts_fee_transfer_due",
            ),
            models.Index(
                fields=["sent_at"],
                condition=models.Q(status="sent"),
                name="payouts_fee_transfer_taken",
            ),
        ]

    def __str__(self):
        return f"{self.reference} {self.amount} {self.currency} {self.status}"
