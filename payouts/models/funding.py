"""Funding through the payment provider: a virtual IBAN per brand (payouts/funding/), the money
that arrives on it, the provider's booked transactions, and its balance against the ledger's."""

from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from campaigns.models import Brand
from joyback.models import LeasedWork
from payouts.models.reconciliation import ReconciliationException


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
    # The account holder it was opened under: the brand's own (its ProviderOnboarding's); empty
    # for an account opened under the platform's account holder before brands held their own.
    account_holder_id = models.CharField(max_length=64, blank=True, default="", db_default="")
    # The balance account it had under the platform's account holder, when it was opened again under
    # the brand's own (payouts.funding.services.virtual_account_request): what still arrives there
    # is recognised, and never booked as the brand's funding.
    legacy_balance_account_id = models.CharField(max_length=64, blank=True, default="", db_default="")
    # Reconciliation per balance account: the provider's balance against the brand's own ledger
    # account, as the last pass found them; a drift pauses this brand's payouts only.
    provider_balance = models.BigIntegerField(null=True, blank=True, help_text="Minor units")
    ledger_balance = models.BigIntegerField(null=True, blank=True, help_text="Minor units")
    # What explains a difference, as the check found it (VirtualAccount.drift_unexplained): the
    # brand's payouts the provider may have paid before the check read it and the ledger had not
    # booked (sent, not settled), and how the ledger moved between its read before the provider's
    # and its read under the lock (a booking that caught up with what the provider did first).
    payouts_open_amount = models.BigIntegerField(default=0, db_default=0, help_text="Minor units")
    ledger_moved_while_read = models.BigIntegerField(default=0, db_default=0, help_text="Minor units")
    balance_checked_at = models.DateTimeField(null=True, blank=True)

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
    def drift(self) -> int:
        if self.provider_balance is None or self.ledger_balance is None:
            return 0
        return self.ledger_balance - self.provider_balance

    @property
    def drift_unexplained(self) -> int:
        """The drift that nothing found explains (ledger minus provider beyond what is explained):
        positive when the provider holds less than the ledger less the payouts it may have paid,
        negative when it holds more than the ledger held at either read. Payouts sent more than
        payouts.funding.selectors.PAYOUT_EXPLAINS_DRIFT_FOR ago explain nothing, so a debit is not
        hidden for long."""
        if self.provider_balance is None or self.ledger_balance is None:
            return 0
        lowest = self.ledger_balance + min(0, self.ledger_moved_while_read) - self.payouts_open_amount
        highest = self.ledger_balance + max(0, self.ledger_moved_while_read)
        if self.provider_balance < lowest:
            return lowest - self.provider_balance
        if self.provider_balance > highest:
            return highest - self.provider_balance
        return 0

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
    PAYOUT = "payout", _("Payout")
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
