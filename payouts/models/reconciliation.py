"""Reconciliation: bank statements (camt.053 / camt.054), their lines, what did not match and what
was done about it, and the references brands write on their transfers to the platform."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import get_language, gettext
from django.utils.translation import gettext_lazy as _

from campaigns.models import Brand
from joyback.money import money_format
from payouts.models.payouts import PaymentBatch, Payout


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

    # The foreign keys' own indexes would repeat the first column of the Meta indexes: a statement
    # writes 100,000 lines at once, and every index is written for each of them.
    statement = models.ForeignKey(Statement, on_delete=models.PROTECT, related_name="lines", db_index=False)
    brand = models.ForeignKey(
        Brand, null=True, blank=True, on_delete=models.PROTECT, related_name="+", db_index=False
    )
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
        Payout,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="statement_lines",
        db_index=False,
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
        direction = gettext("in") if self.credit else gettext("out")
        said = " · ".join(
            part for part in (self.counterparty, self.reference[:80], self.end_to_end_id) if part
        )
        amount = money_format(self.amount, self.currency, get_language() or "en")
        return f"{amount} {direction}" + (f" · {said}" if said else "")

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
    PROVIDER_MOVEMENT = "provider_movement", _("Money moved on a virtual account that is not a deposit")
    FEE_REFUSED = "fee_refused", _("The provider keeps refusing to move the platform's fee")
    FEE_STUCK = "fee_stuck", _("The provider took the platform's fee long ago and has not booked it")


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
    # The provider's transfer a movement on a brand's virtual account came from: one question each,
    # however often its webhooks arrive.
    provider_transfer_id = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        permissions = [("exception_resolve", "Can resolve reconciliation exceptions (platform staff)")]
        constraints = [
            models.UniqueConstraint(
                fields=["provider_transfer_id"],
                condition=~Q(provider_transfer_id=""),
                name="payouts_recexc_one_per_provider_transfer",
            ),
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
        return f"{self.get_reason_display()} ({self.get_status_display().lower()})"

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


class BrandFundingReference(models.Model):
    """The payment reference a brand writes on its transfers to the platform's account (an ISO 11649
    creditor reference: its check digits catch a mistyped reference before it funds another brand)."""

    brand = models.OneToOneField(Brand, on_delete=models.PROTECT, related_name="funding_reference")
    reference = models.CharField(max_length=25, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.reference


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
