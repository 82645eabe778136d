"""Where a person's money goes: their bank details, as sent and as kept, and the bank's answer
to whether the name on them is the holder's (Verification of Payee)."""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from campaigns.models import Brand
from joyback.crypto import EncryptedTextField
from joyback.models import LeasedWork
from payouts.bank_accounts import BankAccountField, Rail
from verification.models import Participant


class PayeeAccount(models.Model):
    """Where a participant's money goes. Every personal detail is encrypted; only masks are plain."""

    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="payee_accounts")
    # Its participant's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    holder_name = EncryptedTextField()
    # The Latin spelling the person's bank holds, for a name in another script (never guessed).
    holder_name_latin = EncryptedTextField(blank=True, default="")
    # JSON of Adyen's Address (line1, city, postalCode, stateOrProvince, country), for the rails
    # whose payee bank abroad needs it (SWIFT).
    address = EncryptedTextField(blank=True, default="")
    email = EncryptedTextField(null=True, blank=True)
    phone = EncryptedTextField(null=True, blank=True, help_text="E.164, for WhatsApp")
    # The account's rail, in a plain column to filter and count by (the account is encrypted).
    rail = models.CharField(max_length=8, choices=Rail.choices)
    currency = models.CharField(max_length=3)
    country = models.CharField(max_length=2)
    account = BankAccountField(help_text="The bank account (payouts.bank_accounts), encrypted")
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


class PayeeChangeCode(models.Model):
    """A one-time code sent to the contact on file before the person's bank details may change: a
    status link, or a forwarded mail, is not proof of the person; their mailbox or phone is. Only
    its keyed hash is kept; it is spent by the first answer, right or wrong (a wrong guess sends a
    new one), so a code can be tried once."""

    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="payee_change_codes")
    # Its participant's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    code_hash = models.CharField(max_length=64)
    channel = models.CharField(max_length=10, help_text="email or whatsapp")
    sent_to = models.CharField(max_length=80, help_text="The contact it went to, masked")
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    spent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["participant", "created_at"], name="payouts_change_code_recent")]

    def __str__(self):
        return f"Change code for participant #{self.participant_id} by {self.channel}"


class PayeeChange(models.Model):
    """Who changed a person's bank details, when, what, and on what proof: append-only (a trigger
    refuses UPDATE and DELETE), and masked, so it outlives an erasure without holding the details."""

    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="payee_changes")
    # Its participant's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    previous = models.ForeignKey(PayeeAccount, on_delete=models.PROTECT, related_name="+")
    payee = models.ForeignKey(PayeeAccount, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField()
    proof = models.CharField(max_length=40, help_text="The code's channel, or the staff member who decided")
    changed = models.CharField(max_length=60, help_text="Which of name, email, phone, account changed")
    account_before = models.CharField(max_length=40)
    account_after = models.CharField(max_length=40)
    contact_before = models.CharField(max_length=120, blank=True, default="")
    contact_after = models.CharField(max_length=120, blank=True, default="")

    def __str__(self):
        return f"Bank details of participant #{self.participant_id} changed ({self.at:%Y-%m-%d %H:%M})"
