import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import get_language, gettext
from django.utils.translation import gettext_lazy as _

from campaigns.models import Brand
from joyback.crypto import EncryptedTextField
from joyback.models import LeasedWork
from joyback.money import money_format
from verification.models import Participant


def new_confirmation_token() -> str:
    return secrets.token_urlsafe(32)


class Rail(models.TextChoices):
    SEPA = "sepa", "SEPA credit transfer"
    UK_FPS = "uk_fps", "UK Faster Payments"
    US_ACH = "us_ach", "US ACH"
    SWIFT = "swift", "SWIFT"


class PayeeAccount(models.Model):
    """Where a participant's money goes. Every personal detail is encrypted; only masks are plain."""

    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="payee_accounts")
    # Its participant's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    holder_name = EncryptedTextField()
    email = EncryptedTextField(null=True, blank=True)
    phone = EncryptedTextField(null=True, blank=True, help_text="E.164, for WhatsApp")
    rail = models.CharField(max_length=8, choices=Rail.choices)
    currency = models.CharField(max_length=3)
    country = models.CharField(max_length=2)
    account = EncryptedTextField(help_text="JSON of the rail's account details")
    account_masked = models.CharField(max_length=40)
    account_fingerprint = models.CharField(max_length=64, db_index=True)
    email_fingerprint = models.CharField(max_length=64, blank=True, default="", db_index=True)
    phone_fingerprint = models.CharField(max_length=64, blank=True, default="", db_index=True)
    bank_name = models.CharField(max_length=140, blank=True, default="")
    consent_at = models.DateTimeField()
    consent_version = models.CharField(max_length=20)
    created_at = models.DateTimeField(auto_now_add=True)
    replaced_at = models.DateTimeField(null=True, blank=True)
    language = models.CharField(max_length=10, default="en", help_text="For messages to the person")
    unusable_code = models.CharField(
        max_length=4, blank=True, default="", help_text="The bank's reason the account cannot be paid"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["participant"],
                condition=Q(replaced_at__isnull=True),
                name="payouts_one_current_payee",
            )
        ]

    def __str__(self):
        return f"{self.get_rail_display()} {self.account_masked}"


class PayeeSubmission(LeasedWork):
    """Bank details as the person sent them, kept encrypted until a worker has made them their
    payee account (payouts.payees.services.payee_submissions_process): the request writes this one row
    and answers at once; the standing worker claims it. The details are erased once processed."""

    id = models.UUIDField(primary_key=True)
    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="payee_submissions")
    # Its participant's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    details = EncryptedTextField(
        blank=True, help_text="JSON of the form's cleaned details; empty once processed"
    )
    created_at = models.DateTimeField()
    processed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(
                fields=["participant", "created_at"],
                condition=Q(processed_at__isnull=True),
                name="payouts_submission_waiting",
            )
        ]

    def __str__(self):
        return f"Bank details of participant #{self.participant_id} ({self.created_at:%Y-%m-%d %H:%M})"


class VopResult(models.TextChoices):
    """Verification of Payee answers, with the codes of the EPC VOP scheme."""

    MATCH = "MTCH", _("Match")
    CLOSE_MATCH = "CMTC", _("Close match")
    NO_MATCH = "NMTC", _("No match")
    NOT_POSSIBLE = "NOAP", _("Verification not possible")


class VopChoice(models.TextChoices):
    BANK_NAME = "bank_name", _("Use the name the bank knows")
    KEEP_NAME = "keep_name", _("Keep the name entered, knowing the risk")


class VopCheck(models.Model):
    """The bank's answer to "is this name the holder of this account?", and what the person chose."""

    payee = models.ForeignKey(PayeeAccount, on_delete=models.PROTECT, related_name="vop_checks")
    # Its payee's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    result = models.CharField(max_length=4, choices=VopResult.choices)
    bank_name_returned = EncryptedTextField(
        null=True, blank=True, help_text="The holder's name, on close match"
    )
    checked_at = models.DateTimeField()
    choice = models.CharField(max_length=10, choices=VopChoice.choices, blank=True, default="")
    chosen_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        get_latest_by = "checked_at"

    def __str__(self):
        return f"VoP {self.result} for payee #{self.payee_id}"

    @property
    def settled(self) -> bool:
        """The payout may go: the name matched, or the person decided after the warning."""
        return self.result in (VopResult.MATCH, VopResult.NOT_POSSIBLE) or bool(self.choice)


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


# The sandbox bank: a PSP inside the app that answers as a real one would (see payouts/sandbox/).


class SandboxOutcome(models.TextChoices):
    SETTLE = "settle", "Settle at once"
    PENDING = "pending", "Accept, settle on the next status query"
    TIMEOUT = "timeout", "Take the payment, then time out the answer"
    REJECT_AC01 = "reject_AC01", "Reject AC01 (account identifier incorrect)"
    REJECT_AC04 = "reject_AC04", "Reject AC04 (account closed)"
    REJECT_AC06 = "reject_AC06", "Reject AC06 (account blocked)"
    REJECT_AG01 = "reject_AG01", "Reject AG01 (transaction forbidden)"
    REJECT_AM04 = "reject_AM04", "Reject AM04 (insufficient funds)"
    REJECT_AM05 = "reject_AM05", "Reject AM05 (duplication)"
    REJECT_MS03 = "reject_MS03", "Reject MS03 (reason not specified)"
    REJECT_AB05 = "reject_AB05", "Reject AB05 (timeout at the payee's bank)"
    RETURN_AC04 = "return_AC04", "Settle, then return AC04 (account closed)"
    RETURN_MD07 = "return_MD07", "Settle, then return MD07 (end customer deceased)"
    RETURN_AC01 = "return_AC01", "Settle, then return AC01"


class SandboxBankAccount(models.Model):
    """A tester's choice of what the sandbox bank does with one account (chosen in the admin)."""

    account = models.CharField(max_length=64, unique=True, help_text="IBAN, or sort code + number, ...")
    holder_name = models.CharField(max_length=140, blank=True, default="", help_text="For VoP answers")
    outcome = models.CharField(max_length=16, choices=SandboxOutcome.choices, default=SandboxOutcome.SETTLE)
    vop_result = models.CharField(max_length=4, choices=VopResult.choices, blank=True, default="")

    def __str__(self):
        return self.account


class SandboxBankPayment(models.Model):
    """Every payment order the sandbox bank received: a second one for an EndToEndId is kept, not
    merged, so a test can see it."""

    end_to_end_id = models.CharField(max_length=35, db_index=True)
    scheme = models.CharField(max_length=14)
    amount = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    creditor_name = models.CharField(max_length=140)
    account = models.CharField(max_length=64)
    outcome = models.CharField(max_length=16, choices=SandboxOutcome.choices)
    status = models.CharField(max_length=4, help_text="ISO 20022 transaction status")
    reason_code = models.CharField(max_length=4, blank=True, default="")
    bank_reference = models.CharField(max_length=35, unique=True)
    msg_id = models.CharField(max_length=35, blank=True, default="", help_text="The pain.001 it came in")
    received_at = models.DateTimeField(default=timezone.now)
    settled_at = models.DateTimeField(null=True, blank=True)
    return_due_at = models.DateTimeField(null=True, blank=True)
    returned_at = models.DateTimeField(null=True, blank=True)
    # The Idempotency-Key of the transfer request it came in: the same key again is a replay.
    idempotency_key = models.CharField(max_length=64, null=True, blank=True, unique=True)

    def __str__(self):
        return f"{self.end_to_end_id} {self.status}"


class SandboxBankEvent(models.Model):
    """A status change of a transfer at the sandbox bank, in the order it happened: each is sent as
    a signed transfer webhook (payouts.sandbox.bank.webhooks_deliver)."""

    payment = models.ForeignKey(SandboxBankPayment, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=20)
    reason_code = models.CharField(max_length=4, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"{self.kind} {self.payment_id}"


class SandboxBankMessage(models.Model):
    """A status report or notification the sandbox bank issued, for reconciliation to import."""

    kind = models.CharField(max_length=20, help_text="pain.002.001.10 or camt.054.001.08")
    msg_id = models.CharField(max_length=35, unique=True)
    xml = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"{self.kind} {self.msg_id}"


# Reconciliation: bank statements (camt.053 / camt.054), their lines, and what did not match.


class StatementImportStatus(models.TextChoices):
    AWAITING = "awaiting", _("Waiting for a second person")
    QUEUED = "queued", _("Waiting")
    RUNNING = "running", _("Importing")
    DONE = "done", _("Imported")
    FAILED = "failed", _("Refused")


class StatementImport(models.Model):
    """One file handed in (upload, API, folder or the sandbox bank), and how far its import got.

    `brand` is the brand whose member or key handed it in; without one it is the platform's own
    statement, matched against every brand's payouts.
    """

    brand = models.ForeignKey(Brand, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    source = models.CharField(max_length=10, default="upload")
    filename = models.CharField(max_length=200, blank=True, default="")
    data = models.BinaryField()
    sha256 = models.CharField(max_length=64, db_index=True)
    message = models.CharField(max_length=20, blank=True, default="")
    status = models.CharField(
        max_length=8, choices=StatementImportStatus.choices, default=StatementImportStatus.QUEUED
    )
    total = models.PositiveIntegerField(default=0)
    processed = models.PositiveIntegerField(default=0)
    new_lines = models.PositiveIntegerField(default=0)
    known_lines = models.PositiveIntegerField(default=0)
    matched = models.PositiveIntegerField(default=0)
    exceptions = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    error_line = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # A file staff uploaded books nothing until a second staff member approves it.
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    approved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["brand", "-created_at"], name="payouts_stmtimport_brand")]
        permissions = [
            ("statement_upload", "Can upload a bank statement for a second person to approve"),
            ("statement_approve", "Can approve a bank statement another person uploaded"),
        ]

    def __str__(self):
        return f"import {self.pk} {self.filename} {self.status}"

    @property
    def percent(self) -> int:
        if self.status == StatementImportStatus.DONE:
            return 100
        return int(100 * self.processed / self.total) if self.total else 0


class Statement(models.Model):
    """One Stmt (camt.053) or Ntfctn (camt.054) of an imported file: an account and its balances."""

    statement_import = models.ForeignKey(StatementImport, on_delete=models.PROTECT, related_name="statements")
    brand = models.ForeignKey(Brand, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    message = models.CharField(max_length=20)
    msg_id = models.CharField(max_length=35)
    statement_id = models.CharField(max_length=35)
    sequence = models.BigIntegerField(null=True, blank=True, help_text="ElctrncSeqNb")
    account = models.CharField(max_length=40)
    currency = models.CharField(max_length=3, blank=True, default="")
    opening_balance = models.BigIntegerField(null=True, blank=True, help_text="Minor units, signed")
    closing_balance = models.BigIntegerField(null=True, blank=True, help_text="Minor units, signed")
    closing_date = models.DateField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"{self.message} {self.statement_id}"


class LineKind(models.TextChoices):
    PAYOUT = "payout", _("Payout")
    BATCH = "batch", _("Batch booking")
    RETURN = "return", _("Return")
    DEPOSIT = "deposit", _("Deposit")
    OTHER = "other", _("Other")


class LineState(models.TextChoices):
    NEW = "new", _("Not matched yet")
    MATCHED = "matched", _("Matched")
    EXCEPTION = "exception", _("Exception")
    PENDING = "pending", _("Not booked (pending or information)")


class StatementLine(models.Model):
    """One booking on a statement: a transaction (TxDtls) of an entry, or the entry itself when the
    bank gave no breakdown. Never edited by hand; matching fills in what it belongs to."""

    statement = models.ForeignKey(Statement, on_delete=models.PROTECT, related_name="lines")
    brand = models.ForeignKey(Brand, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    dedupe_key = models.CharField(max_length=120, unique=True)
    entry_ref = models.CharField(max_length=35, blank=True, default="", help_text="AcctSvcrRef")
    kind = models.CharField(max_length=8, choices=LineKind.choices)
    credit = models.BooleanField()
    amount = models.BigIntegerField(help_text="Minor units, positive")
    currency = models.CharField(max_length=3)
    booking_date = models.DateField(null=True, blank=True)
    entry_status = models.CharField(max_length=4, default="BOOK")
    reversal = models.BooleanField(default=False)
    end_to_end_id = models.CharField(max_length=35, blank=True, default="", db_index=True)
    batch_ref = models.CharField(max_length=35, blank=True, default="", help_text="Btch MsgId or PmtInfId")
    return_reason = models.CharField(max_length=4, blank=True, default="")
    reference = models.CharField(max_length=500, blank=True, default="", help_text="Remittance, entry info")
    counterparty = models.CharField(max_length=140, blank=True, default="")
    state = models.CharField(max_length=9, choices=LineState.choices, default=LineState.NEW)
    payout = models.ForeignKey(
        Payout, null=True, blank=True, on_delete=models.PROTECT, related_name="statement_lines"
    )
    payment_batch = models.ForeignKey(
        PaymentBatch, null=True, blank=True, on_delete=models.PROTECT, related_name="statement_lines"
    )
    ledger_transaction_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["statement", "state"], name="payouts_stmtline_state"),
            models.Index(fields=["brand", "state", "currency"], name="payouts_stmtline_brand"),
            models.Index(fields=["payout"], name="payouts_stmtline_payout"),
        ]

    def __str__(self):
        return f"{'CRDT' if self.credit else 'DBIT'} {self.amount} {self.currency} {self.end_to_end_id}"

    @property
    def signed_amount(self) -> int:
        return self.amount if self.credit else -self.amount


class ExceptionReason(models.TextChoices):
    UNKNOWN_LINE = "unknown_line", _("Unknown statement line")
    AMOUNT_MISMATCH = "amount_mismatch", _("Amount differs from the payout")
    CURRENCY_MISMATCH = "currency_mismatch", _("Currency differs from the payout")
    DUPLICATE = "duplicate", _("Booked twice")
    STATE_MISMATCH = "state_mismatch", _("Booked, but the payout did not go out")
    NO_STATEMENT_LINE = "no_statement_line", _("Sent long ago, not on any statement")
    SEQUENCE_GAP = "sequence_gap", _("A statement is missing in the sequence")
    OPENING_MISMATCH = "opening_mismatch", _("Opening balance differs from the previous closing balance")
    BANK_DRIFT = "bank_drift", _("The ledger's bank balance differs from the bank's")
    PROVIDER_UNMATCHED = "provider_unmatched", _("Booked by the payment provider, not in the ledger")
    PROVIDER_AMOUNT = "provider_amount", _("The provider booked another amount than the ledger")


class ExceptionStatus(models.TextChoices):
    OPEN = "open", _("Open")
    RESOLVED = "resolved", _("Resolved")


class ResolutionAction(models.TextChoices):
    LINK = "link", _("Linked to a payout")
    SUSPENSE = "suspense", _("Booked to suspense")
    REPAID = "repaid", _("Marked re-paid")
    CLEAR = "clear", _("Cleared after checking")
    DEPOSIT = "deposit", _("Booked as a brand's deposit")


class ReconciliationException(models.Model):
    """Something a person must look at: a line nothing explains, or a payout no line explains."""

    brand = models.ForeignKey(Brand, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    line = models.ForeignKey(
        StatementLine, null=True, blank=True, on_delete=models.PROTECT, related_name="exceptions"
    )
    payout = models.ForeignKey(
        Payout, null=True, blank=True, on_delete=models.PROTECT, related_name="reconciliation_exceptions"
    )
    statement = models.ForeignKey(
        Statement, null=True, blank=True, on_delete=models.PROTECT, related_name="exceptions"
    )
    reason = models.CharField(max_length=20, choices=ExceptionReason.choices)
    detail = models.CharField(max_length=300, blank=True, default="")
    amount = models.BigIntegerField(default=0, help_text="Minor units, signed as on the bank account")
    currency = models.CharField(max_length=3, blank=True, default="")
    status = models.CharField(max_length=8, choices=ExceptionStatus.choices, default=ExceptionStatus.OPEN)
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    # A money-moving resolution above the second-approval amount waits here for another person.
    proposed_action = models.CharField(
        max_length=10, choices=ResolutionAction.choices, blank=True, default=""
    )
    proposed_payout = models.ForeignKey(
        Payout, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    proposed_brand = models.ForeignKey(
        Brand, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    proposed_note = models.CharField(max_length=500, blank=True, default="")
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    proposed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        permissions = [("exception_resolve", "Can resolve reconciliation exceptions (platform staff)")]
        constraints = [
            # One open question per line, and per payout with no line: a re-import or a second
            # sweep finds the existing one instead of a copy.
            models.UniqueConstraint(
                fields=["line"], condition=Q(line__isnull=False), name="payouts_recexc_one_per_line"
            ),
            models.UniqueConstraint(
                fields=["payout", "reason"],
                condition=Q(line__isnull=True, status="open"),
                name="payouts_recexc_one_open_per_payout",
            ),
        ]
        indexes = [models.Index(fields=["brand", "status", "-id"], name="payouts_recexc_queue")]

    def __str__(self):
        return f"{self.reason} {self.status}"

    @property
    def detail_shown(self) -> str:
        """The detail in the reader's language with amounts as money. Amounts differing and the
        bank's drift are said again from the line, payout and statement, so rows stored with minor
        units in their text ("150 minor units") read the same as new ones; anything else as stored."""
        language = get_language() or "en"
        if self.reason == ExceptionReason.AMOUNT_MISMATCH and self.line_id and self.payout_id:
            return amount_mismatch_text(line=self.line, payout=self.payout, language=language)
        statement = self.statement
        if self.reason == ExceptionReason.BANK_DRIFT and statement and statement.closing_balance is not None:
            return bank_drift_text(
                statement=statement, ledger=statement.closing_balance + self.amount, language=language
            )
        return self.detail


class ExceptionResolution(models.Model):
    """What a finance member did about an exception, with who and when; never edited."""

    exception = models.ForeignKey(
        ReconciliationException, on_delete=models.PROTECT, related_name="resolutions"
    )
    # The exception's: empty where the exception's is (a credit that matched no brand).
    brand = models.ForeignKey(
        Brand, null=True, blank=True, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    action = models.CharField(max_length=10, choices=ResolutionAction.choices)
    payout = models.ForeignKey(Payout, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    ledger_transaction_id = models.BigIntegerField(null=True, blank=True)
    note = models.CharField(max_length=500, blank=True, default="")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="Empty when a later statement line settled it",
    )
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The second person, for a resolution above the second-approval amount",
    )
    at = models.DateTimeField(default=timezone.now)

    def __str__(self):
        return f"{self.action} by {self.actor_id}"


class PrivacyKind(models.TextChoices):
    EXPORT = "export", _("Download my data")
    ERASE = "erase", _("Erase my data")


class PrivacyRequest(models.Model):
    """A person's request for their data or its erasure, confirmed through a link sent to the email
    or WhatsApp number on file (the status link alone is not enough: it travels in mails and
    browser histories); or made by staff in the admin for a person who asked otherwise."""

    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="privacy_requests")
    # Its participant's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    kind = models.CharField(max_length=6, choices=PrivacyKind.choices)
    token = models.CharField(max_length=64, unique=True, default=new_confirmation_token)
    channel = models.CharField(max_length=10, blank=True, default="", help_text="email, whatsapp or admin")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)
    confirmed_at = models.DateTimeField(null=True, blank=True)
    done_at = models.DateTimeField(null=True, blank=True, help_text="Erased (what the law lets go at once)")
    retention_done_at = models.DateTimeField(
        null=True, blank=True, help_text="The records kept for the retention period pseudonymised too"
    )

    class Meta:
        indexes = [
            models.Index(
                fields=["done_at"],
                condition=Q(kind="erase", done_at__isnull=False, retention_done_at__isnull=True),
                name="payouts_privacy_retained",
            )
        ]

    def __str__(self):
        return f"{self.get_kind_display()} for participant #{self.participant_id}"


class BrandFundingReference(models.Model):
    """The payment reference a brand writes on its transfers to the platform's account (an ISO 11649
    creditor reference: its check digits catch a mistyped reference before it funds another brand)."""

    brand = models.OneToOneField(Brand, on_delete=models.PROTECT, related_name="funding_reference")
    reference = models.CharField(max_length=25, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.reference


# Funding through the payment provider: a virtual IBAN per brand (payouts/funding/).


class VirtualAccountStatus(models.TextChoices):
    REQUESTED = "requested", _("Being opened")
    OPEN = "open", _("Open")
    FAILED = "failed", _("Could not be opened")


class VirtualAccount(LeasedWork):
    """A brand's own account at the payment provider, for its bank transfers: a balance account of
    the platform's account holder with a virtual IBAN (a bankAccount payment instrument) and a sweep
    that moves what arrives on to the platform's balance account. One per brand and currency;
    opened by the standing worker after the request committed, step by step, each step keyed so a
    retry continues where the last attempt stopped."""

    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="virtual_accounts")
    currency = models.CharField(max_length=3)
    provider = models.CharField(max_length=12)
    status = models.CharField(
        max_length=10, choices=VirtualAccountStatus.choices, default=VirtualAccountStatus.REQUESTED
    )
    balance_account_id = models.CharField(max_length=64, blank=True, default="")
    payment_instrument_id = models.CharField(max_length=64, blank=True, default="")
    sweep_id = models.CharField(max_length=64, blank=True, default="")
    iban = models.CharField(max_length=34, blank=True, default="")
    bic = models.CharField(max_length=11, blank=True, default="")
    holder_name = models.CharField(max_length=140, blank=True, default="")
    error = models.CharField(max_length=300, blank=True, default="")
    requested_at = models.DateTimeField(default=timezone.now)
    opened_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["brand", "currency"], name="payouts_one_virtual_account"),
            models.UniqueConstraint(
                fields=["provider", "balance_account_id"],
                condition=~Q(balance_account_id=""),
                name="payouts_virtual_account_balance_account",
            ),
        ]
        indexes = [
            models.Index(fields=["id"], condition=Q(status="requested"), name="payouts_virtual_account_todo")
        ]

    def __str__(self):
        return f"{self.brand} {self.currency} {self.iban or self.status}"

    @property
    def iban_grouped(self) -> str:
        return " ".join(self.iban[i : i + 4] for i in range(0, len(self.iban), 4))


class ProviderDepositStatus(models.TextChoices):
    RECEIVED = "received", _("Arriving")
    BOOKED = "booked", _("Booked")
    RETURNED = "returned", _("Returned to the sender")


class ProviderDeposit(models.Model):
    """Money sent to a brand's virtual account, as the provider's signed webhooks report it: one row
    per provider transfer, booked to the brand's funding once, and reversed once if it goes back."""

    provider = models.CharField(max_length=12)
    transfer_id = models.CharField(max_length=64)
    virtual_account = models.ForeignKey(VirtualAccount, on_delete=models.PROTECT, related_name="deposits")
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="provider_deposits")
    amount = models.BigIntegerField(help_text="Minor units")
    currency = models.CharField(max_length=3)
    status = models.CharField(
        max_length=10, choices=ProviderDepositStatus.choices, default=ProviderDepositStatus.RECEIVED
    )
    payer_name = models.CharField(max_length=140, blank=True, default="")
    reason = models.CharField(max_length=60, blank=True, default="", help_text="The provider's, on a return")
    ledger_transaction_id = models.BigIntegerField(null=True, blank=True)
    return_transaction_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["provider", "transfer_id"], name="payouts_provider_deposit_once"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="payouts_provider_deposit_positive"),
        ]
        indexes = [models.Index(fields=["brand", "-created_at"], name="payouts_provider_deposit_brand")]

    def __str__(self):
        return f"{self.transfer_id} {self.amount} {self.currency} {self.status}"


class ProviderTransactionKind(models.TextChoices):
    DEPOSIT = "deposit", _("Deposit")
    RETURN = "return", _("Returned deposit")
    SWEEP = "sweep", _("Swept to the platform's account")
    OTHER = "other", _("Other")


class ProviderTransaction(models.Model):
    """One booked transaction of the provider's transaction list on a brand's virtual account, and
    the ledger transaction it matched (or the exception it raised)."""

    provider = models.CharField(max_length=12)
    transaction_id = models.CharField(max_length=64)
    transfer_id = models.CharField(max_length=64, blank=True, default="")
    balance_account_id = models.CharField(max_length=64)
    brand = models.ForeignKey(Brand, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=8, choices=ProviderTransactionKind.choices)
    amount = models.BigIntegerField(help_text="Minor units, signed as on the balance account")
    currency = models.CharField(max_length=3)
    booked_at = models.DateTimeField(null=True, blank=True)
    matched = models.BooleanField(default=False)
    ledger_transaction_id = models.BigIntegerField(null=True, blank=True)
    exception = models.ForeignKey(
        ReconciliationException, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "transaction_id"], name="payouts_provider_transaction_once"
            )
        ]

    def __str__(self):
        return f"{self.transaction_id} {self.amount} {self.currency}"


class SandboxBalanceAccount(models.Model):
    """A balance account the sandbox bank opened (Adyen's Balance Platform API), with its virtual
    IBAN and its sweep once asked for."""

    account_id = models.CharField(max_length=64, unique=True)
    account_holder_id = models.CharField(max_length=64)
    currency = models.CharField(max_length=3)
    description = models.CharField(max_length=300, blank=True, default="")
    idempotency_key = models.CharField(max_length=64, null=True, blank=True, unique=True)
    payment_instrument_id = models.CharField(max_length=64, null=True, blank=True, unique=True)
    instrument_key = models.CharField(max_length=64, null=True, blank=True, unique=True)
    iban = models.CharField(max_length=34, null=True, blank=True, unique=True)
    sweep_id = models.CharField(max_length=64, blank=True, default="")
    sweep_to = models.CharField(max_length=64, blank=True, default="")
    sweep_key = models.CharField(max_length=64, null=True, blank=True, unique=True)

    def __str__(self):
        return self.account_id


class SandboxFundingTransfer(models.Model):
    """A transfer on a sandbox balance account: money arriving on a virtual IBAN, or a sweep."""

    transfer_id = models.CharField(max_length=35, unique=True)
    account = models.ForeignKey(SandboxBalanceAccount, on_delete=models.CASCADE, related_name="transfers")
    category = models.CharField(max_length=10)
    direction = models.CharField(max_length=10)
    amount = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    counterparty_name = models.CharField(max_length=140, blank=True, default="")
    counterparty_iban = models.CharField(max_length=34, blank=True, default="")
    counterparty_balance_account = models.CharField(max_length=64, blank=True, default="")
    reference = models.CharField(max_length=80, blank=True, default="")
    chaos = models.BooleanField(default=False, help_text="Its webhooks go twice and newest first")
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self):
        return f"{self.transfer_id} {self.direction} {self.amount}"


class SandboxFundingEvent(models.Model):
    """A status a sandbox transfer took, in order: each is sent as a signed transfer webhook, and a
    booked or returned one is a transaction on the balance account."""

    transfer = models.ForeignKey(SandboxFundingTransfer, on_delete=models.CASCADE, related_name="events")
    status = models.CharField(max_length=12)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self):
        return f"{self.transfer_id} {self.status}"


class ProviderBalanceCheck(models.Model):
    """The provider's balance of the brands' virtual accounts against the ledger's provider balance,
    as the last reconciliation pass found them (what /healthz/ and the metrics report)."""

    provider = models.CharField(max_length=12)
    currency = models.CharField(max_length=3)
    provider_balance = models.BigIntegerField(help_text="Minor units, the sum of the balance accounts")
    ledger_balance = models.BigIntegerField(help_text="Minor units")
    checked_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "currency"], name="payouts_provider_balance_check_once"
            )
        ]

    def __str__(self):
        return f"{self.provider} {self.currency}: {self.drift}"

    @property
    def drift(self) -> int:
        return self.ledger_balance - self.provider_balance


def amount_mismatch_text(*, line: StatementLine, payout: Payout, language: str) -> str:
    return gettext("The bank booked %(line)s; the payout is %(payout)s.") % {
        "line": money_format(line.amount, line.currency, language),
        "payout": money_format(payout.amount, payout.currency, language),
    }


def bank_drift_text(*, statement: Statement, ledger: int, language: str) -> str:
    return gettext("On %(date)s the ledger's bank held %(ledger)s, the bank's statement %(bank)s.") % {
        "date": date_format(statement.closing_date),
        "ledger": money_format(ledger, statement.currency, language),
        "bank": money_format(statement.closing_balance, statement.currency, language),
    }
