"""The one double-entry ledger.

Entries are signed integers in minor units: a debit is positive, a credit negative, so every
transaction sums to zero per currency. Money "moving from A to B" debits A and credits B.

Each account keeps its balance on its normal side (see NORMAL_DEBIT): for the platform's bank
(an asset) that is debits minus credits, for everything owed to brands and people (liabilities)
credits minus debits. So a positive balance always reads as "money is there", which lets the
database hold the no-overdraft rule as a plain CHECK: balance - held >= 0.

The ledger knows tenants only by their id (brand_id) and an opaque subject ("campaign:12"): it
imports no app, so every app can post to it.
"""

from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _


class AccountKind(models.TextChoices):
    PLATFORM_BANK = "platform_bank", _("Platform bank")
    BRAND_FUNDING = "brand_funding", _("Brand funding")
    CAMPAIGN_BUDGET = "campaign_budget", _("Campaign budget")
    PARTICIPANT_PAYABLE = "participant_payable", _("Reward payable")
    # What a person owes back (a reward clawed back after it was paid out), netted at the next payout.
    PARTICIPANT_RECEIVABLE = "participant_receivable", _("Clawback receivable")
    PAYOUT_IN_TRANSIT = "payout_in_transit", _("Payout in transit")
    FEES = "fees", _("Fees")
    SUSPENSE = "suspense", _("Suspense")
    # Money held for the platform at its payment provider (brands' virtual accounts), not yet swept
    # to the account payouts leave from.
    PROVIDER_BALANCE = "provider_balance", _("Provider balance")
    # A brand's own balance account at the payment provider (its virtual IBAN's), mirrored: the
    # brand's money, held in its name by the provider, never the platform's.
    BRAND_BALANCE = "brand_balance", _("Balance account at the provider")
    # VAT the platform charged on its invoices and owes the tax office: never its revenue.
    VAT_PAYABLE = "vat_payable", _("VAT owed to the tax office")


NORMAL_DEBIT = frozenset(
    {
        AccountKind.PLATFORM_BANK,
        AccountKind.PARTICIPANT_RECEIVABLE,
        AccountKind.PROVIDER_BALANCE,
        AccountKind.BRAND_BALANCE,
    }
)


def normal_sign(kind: str) -> int:
    """+1 where the balance grows with debits (assets), -1 where it grows with credits."""
    return 1 if kind in NORMAL_DEBIT else -1


class Account(models.Model):
    kind = models.CharField(max_length=32, choices=AccountKind.choices)
    currency = models.CharField(max_length=3)
    brand_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    subject = models.CharField(max_length=64, blank=True, default="")
    name = models.CharField(max_length=200)
    no_overdraft = models.BooleanField(default=True)
    balance = models.BigIntegerField(default=0)
    held = models.BigIntegerField(default=0)
    # Test money never meets live money: a brand's accounts take its mode, the platform's accounts
    # (bank, suspense) exist once per mode, and the database refuses a transaction that mixes them.
    livemode = models.BooleanField(default=True, db_default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "currency", "brand_id", "subject"],
                condition=Q(brand_id__isnull=False),
                name="ledger_account_unique_per_brand",
            ),
            models.UniqueConstraint(
                fields=["kind", "currency", "subject", "livemode"],
                condition=Q(brand_id__isnull=True),
                name="ledger_account_unique_platform_per_mode",
            ),
            # Target of the (account_id, currency) foreign key from entries (added on PostgreSQL),
            # which makes "an entry is in its account's currency" a database fact.
            models.UniqueConstraint(fields=["id", "currency"], name="ledger_account_id_currency"),
            models.CheckConstraint(
                condition=Q(no_overdraft=False) | Q(balance__gte=F("held")),
                name="ledger_account_no_overdraft",
                violation_error_message="This account may not be overdrawn (holds included).",
            ),
            models.CheckConstraint(condition=Q(held__gte=0), name="ledger_account_held_not_negative"),
        ]

    def __str__(self):
        return f"{self.name} ({self.currency})"

    @property
    def available(self) -> int:
        return self.balance - self.held


class Transaction(models.Model):
    reason = models.CharField(max_length=40)
    description = models.CharField(max_length=200, blank=True, default="")
    reference = models.CharField(max_length=100, blank=True, default="", db_index=True)
    idempotency_key = models.CharField(max_length=120, null=True, blank=True, unique=True)
    fingerprint = models.CharField(max_length=64)
    reverses = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="reversed_by"
    )
    posted_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # A posting moves one brand's money (the ledger refuses one that spans two): the brand of its
    # accounts, the platform's among them taking none. Empty only for the platform's own postings
    # (its bank, its provider balance, suspense), which name no brand.
    brand_id = models.BigIntegerField(null=True, blank=True)

    def __str__(self):
        return f"#{self.pk} {self.reason}"


class Entry(models.Model):
    transaction = models.ForeignKey(Transaction, on_delete=models.PROTECT, related_name="entries")
    # The composite foreign key (account_id, currency) makes the account exist (PostgreSQL, 0002)
    # and the (account, transaction) index finds an account's entries: a foreign key and an index
    # of its own would only check and write each leg once more.
    account = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="entries", db_constraint=False, db_index=False
    )
    amount = models.BigIntegerField(help_text="Minor units; debit positive, credit negative.")
    currency = models.CharField(max_length=3)
    # The transaction's brand, on the platform's legs too: a posting's entries live with it.
    brand_id = models.BigIntegerField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "entries"
        constraints = [models.CheckConstraint(condition=~Q(amount=0), name="ledger_entry_not_zero")]
        indexes = [models.Index(fields=["account", "transaction"], name="ledger_entry_account_tx")]

    def __str__(self):
        return f"{self.amount} {self.currency} on {self.account_id}"


class HoldStatus(models.TextChoices):
    RESERVED = "reserved", "Reserved"
    COMMITTED = "committed", "Committed"
    VOIDED = "voided", "Voided"


class Hold(models.Model):
    """Money set aside on an account: reserve now, then commit (all or part) or void, once."""

    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="holds")
    # Its account's: holds set aside a brand's money (a campaign's budget), never the platform's.
    brand_id = models.BigIntegerField()
    amount = models.BigIntegerField()
    status = models.CharField(max_length=12, choices=HoldStatus.choices, default=HoldStatus.RESERVED)
    committed_amount = models.BigIntegerField(default=0)
    idempotency_key = models.CharField(max_length=120, null=True, blank=True, unique=True)
    reference = models.CharField(max_length=100, blank=True, default="", db_index=True)
    commit_transaction = models.OneToOneField(
        Transaction, null=True, blank=True, on_delete=models.PROTECT, related_name="hold"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="ledger_hold_amount_positive"),
            models.CheckConstraint(
                condition=Q(committed_amount__gte=0, committed_amount__lte=F("amount")),
                name="ledger_hold_commit_within_amount",
            ),
            models.CheckConstraint(
                condition=Q(status=HoldStatus.RESERVED, resolved_at__isnull=True)
                | (~Q(status=HoldStatus.RESERVED) & Q(resolved_at__isnull=False)),
                name="ledger_hold_resolved_at_iff_resolved",
            ),
        ]
        indexes = [models.Index(fields=["account"], condition=Q(status="reserved"), name="ledger_hold_open")]

    def __str__(self):
        return f"hold #{self.pk} {self.amount} {self.status}"
