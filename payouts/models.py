from django.db import models
from django.db.models import Q

from joyback.crypto import EncryptedTextField
from verification.models import Participant


class Rail(models.TextChoices):
    SEPA = "sepa", "SEPA credit transfer"
    UK_FPS = "uk_fps", "UK Faster Payments"
    US_ACH = "us_ach", "US ACH"


class PayeeAccount(models.Model):
    """Where a participant's money goes. Every personal detail is encrypted; only masks are plain."""

    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="payee_accounts")
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
