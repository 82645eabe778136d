"""A payout on its way to the bank: its states, its holds and alerts, its history, the payment
files it left in, and the provider's events about it."""

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from campaigns.models import Brand
from joyback.models import LeasedWork
from payouts.models.payees import PayeeAccount
from verification.models import Participant


class PayoutStatus(models.TextChoices):
    AWAITING_APPROVAL = "awaiting_approval", _("Awaiting approval")
    CREATED = "created", _("Created")
    PAYEE_VERIFIED = "payee_verified", _("Payee verified")
    SUBMITTED = "submitted", _("Submitted")
    ACCEPTED = "accepted", _("Accepted by the bank")
    SETTLED = "settled", _("Paid")
    REJECTED = "rejected", _("Rejected")
    RETURNED = "returned", _("Returned")
    UNKNOWN = "unknown", _("Unknown, being checked")
    CANCELLED = "cancelled", _("Cancelled")


# Still moving: the person's money sits in transit until one of these resolves.
OPEN_STATUSES = (
    PayoutStatus.AWAITING_APPROVAL,
    PayoutStatus.CREATED,
    PayoutStatus.PAYEE_VERIFIED,
    PayoutStatus.SUBMITTED,
    PayoutStatus.ACCEPTED,
    PayoutStatus.UNKNOWN,
)


class PayoutScheme(models.TextChoices):
    """How the PSP moves the money; chosen from the payee's rail."""

    SEPA_INSTANT = "sepa_instant", "SEPA Instant"
    SEPA = "sepa", "SEPA credit transfer (batch file)"
    FPS = "fps", "UK Faster Payments"
    ACH = "ach", "US ACH"
    SWIFT = "swift", "SWIFT"


def new_end_to_end_id() -> str:
    # 32 characters of the SEPA set, unique without a database round trip, so the id exists before
    # anything is sent and every retry and status query reuses it.
    return "JB" + secrets.token_hex(15).upper()


def new_beneficiary_reference() -> str:
    # What the payee's statement shows on rails whose reference is short: Adyen takes 15 letters and
    # digits for any account but an IBAN (35, where the EndToEndId goes). Random, so it says
    # nothing of the EndToEndId; unique, so one reference finds one payout.
    return "JB" + "".join(secrets.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(13))


class Payout(models.Model):
    """Money owed to one person, on its way to their bank: payable -> in transit -> bank."""

    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="payouts")
    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="payouts")
    payee = models.ForeignKey(PayeeAccount, on_delete=models.PROTECT, related_name="payouts")
    amount = models.BigIntegerField(help_text="Minor units")
    currency = models.CharField(max_length=3)
    scheme = models.CharField(max_length=14, choices=PayoutScheme.choices)
    status = models.CharField(max_length=18, choices=PayoutStatus.choices, default=PayoutStatus.CREATED)
    reason_code = models.CharField(max_length=8, blank=True, default="")
    end_to_end_id = models.CharField(max_length=35, unique=True, default=new_end_to_end_id)
    # Payouts made before it was kept have none: the adapter derives theirs from the EndToEndId.
    beneficiary_reference = models.CharField(  # noqa: DJ001
        max_length=15, unique=True, null=True, default=new_beneficiary_reference
    )
    psp_reference = models.CharField(max_length=64, blank=True, default="")
    batch = models.ForeignKey(
        "PaymentBatch", null=True, blank=True, on_delete=models.PROTECT, related_name="payouts"
    )
    repays = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="repaid_by"
    )
    manual = models.BooleanField(default=False, help_text="Made by a person, not by a reward")
    hold_reasons = models.CharField(
        max_length=120, blank=True, default="", help_text="Why it waits for a second approver (codes)"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # A payout made through the API: the key, whose creator is created_by (what a key does, the
    # person who made it did).
    api_key = models.ForeignKey(
        "api.ApiKey",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        # Never searched by: no index to build on a live table.
        db_index=False,
    )
    ledger_transaction_id = models.BigIntegerField(null=True, blank=True, help_text="Payable -> in transit")
    submissions = models.PositiveSmallIntegerField(default=0)
    submitted_at = models.DateTimeField(null=True, blank=True)
    next_check_at = models.DateTimeField(null=True, blank=True, help_text="When the worker looks again")
    settled_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="payouts_payout_amount_positive"),
            # One payout at a time per person and currency: a second would pay the same money twice.
            models.UniqueConstraint(
                fields=["participant", "currency"],
                condition=Q(status__in=[s.value for s in OPEN_STATUSES]) & Q(manual=False),
                name="payouts_one_open_payout",
            ),
        ]
        indexes = [
            models.Index(fields=["brand", "status", "created_at"], name="payouts_brand_status"),
            models.Index(
                fields=["next_check_at"],
                condition=Q(status__in=["created", "payee_verified", "submitted", "accepted", "unknown"]),
                name="payouts_due",
            ),
        ]

    def __str__(self):
        return f"payout {self.end_to_end_id} {self.status}"

    @property
    def open(self) -> bool:
        return self.status in OPEN_STATUSES

    @property
    def hold_texts(self) -> list[str]:
        """Why a second person must approve it, in words."""
        return [str(HOLD_REASONS.get(code, code)) for code in self.hold_reasons.split(",") if code]


class HoldReason(models.TextChoices):
    ABOVE_THRESHOLD = "amount", _("The amount is above the single-payout approval threshold.")
    NEW_ACCOUNT = "new_account", _("It is the first payout to this bank account.")
    WINDOW_TOTAL = (
        "window_total",
        _("The brand's payouts of the last day have passed the approval threshold."),
    )


HOLD_REASONS = dict(HoldReason.choices)


class PayoutAlert(models.Model):
    """Something about a brand's payouts that platform staff should look at (velocity): one per
    brand, kind and window, so a burst raises it once."""

    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=20)
    window_start = models.DateTimeField()
    detail = models.CharField(max_length=300)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["brand", "kind", "window_start"], name="payouts_one_alert_per_window"
            )
        ]

    def __str__(self):
        return f"{self.kind} of {self.brand}"


class PayoutEvent(models.Model):
    """Each transition of a payout, with its time and the bank's reason code; never edited."""

    payout = models.ForeignKey(Payout, on_delete=models.PROTECT, related_name="events")
    # Its payout's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    from_status = models.CharField(max_length=18, blank=True, default="")
    to_status = models.CharField(max_length=18)
    reason_code = models.CharField(max_length=8, blank=True, default="")
    detail = models.CharField(max_length=300, blank=True, default="")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["at", "pk"]

    def __str__(self):
        return f"{self.from_status or '-'} -> {self.to_status} {self.reason_code}"


class PaymentBatch(models.Model):
    """One pain.001 file: what left for the bank, byte for byte, sent at most once."""

    msg_id = models.CharField(max_length=35, unique=True)
    currency = models.CharField(max_length=3)
    instant = models.BooleanField(default=False)
    number_of_transactions = models.PositiveIntegerField()
    control_sum = models.BigIntegerField(help_text="Minor units")
    xml = models.BinaryField()
    sha256 = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "payment batches"

    def __str__(self):
        return self.msg_id


class PspFeedCursor(models.Model):
    """How far the PSP's event feed has been read; one row per feed."""

    name = models.CharField(max_length=40, unique=True)
    position = models.BigIntegerField(default=0)

    def __str__(self):
        return f"{self.name} at {self.position}"


class TransferEvent(LeasedWork):
    """A payment provider's signed webhook about one transfer, stored once (the provider delivers at
    least once) and applied by the standing worker (payouts.submission.webhooks.transfer_events_process)."""

    provider = models.CharField(max_length=12)
    event_id = models.CharField(
        max_length=100, help_text="The transfer's id and the webhook's sequence number"
    )
    payload = models.JSONField()
    received_at = models.DateTimeField(default=timezone.now)
    processed_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=40, blank=True, db_default="", default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["provider", "event_id"], name="payouts_transfer_event_once")
        ]
        indexes = [
            models.Index(
                fields=["id"], condition=Q(processed_at__isnull=True), name="payouts_transfer_event_pending"
            )
        ]

    def __str__(self):
        return f"{self.provider} {self.event_id}"
