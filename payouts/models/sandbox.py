"""The sandbox bank: a PSP inside the app that answers as a real one would (payouts/sandbox/), and
its balance platform for funding (virtual IBANs, sweeps, transfers)."""

from django.db import models
from django.utils import timezone

from payouts.models.payees import VopResult


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
    # The balance account it leaves from: a brand's own (SandboxBalanceAccount.account_id), or
    # empty for the platform's (ADYEN_BALANCE_ACCOUNT_ID) and a pain.001 file's.
    balance_account_id = models.CharField(max_length=64, blank=True, default="", db_default="")

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
    # An internal transfer from this account is taken (received) and then left there, neither
    # booked nor failed: what a provider that never finishes one looks like, for trying the fee's poll.
    internal_stays_received = models.BooleanField(default=False, db_default=False)

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
    # An internal transfer asked for through POST /transfers: the same key again is a replay (looked
    # up under the balance account's lock, so no index is needed).
    idempotency_key = models.CharField(max_length=64, blank=True, default="", db_default="")
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


class SandboxLegalEntityStatus(models.TextChoices):
    DOCUMENTS = "documents", "Documents needed"
    PENDING = "pending", "Checking"
    VERIFIED = "verified", "Verified"
    REFUSED = "refused", "Refused"


class SandboxLegalEntity(models.Model):
    """A legal entity the sandbox bank's Legal Entity Management API made, with the one account
    holder of it the Balance Platform API made, and where its verification stands. `version`
    counts changes; the account holder's webhook is sent for each one `sent_version` has not seen."""

    legal_entity_id = models.CharField(max_length=64, unique=True)
    legal_name = models.CharField(max_length=200)
    registration_number = models.CharField(max_length=64, blank=True, default="")
    country = models.CharField(max_length=2)
    idempotency_key = models.CharField(max_length=64, null=True, blank=True, unique=True)
    account_holder_id = models.CharField(max_length=64, null=True, blank=True, unique=True)
    account_holder_key = models.CharField(max_length=64, null=True, blank=True, unique=True)
    account_holder_reference = models.CharField(max_length=150, blank=True, default="")
    capabilities = models.JSONField(default=list, blank=True)
    status = models.CharField(
        max_length=10, choices=SandboxLegalEntityStatus.choices, default=SandboxLegalEntityStatus.DOCUMENTS
    )
    version = models.PositiveIntegerField(default=0)
    sent_version = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    def __str__(self):
        return f"{self.legal_entity_id} {self.status}"
