"""People's requests for their data or its erasure."""

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from campaigns.models import Brand
from verification.models import Participant


def new_confirmation_token() -> str:
    return secrets.token_urlsafe(32)


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
