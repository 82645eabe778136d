"""A brand onboarded at the payment provider: its own legal entity and account holder there, the
capabilities the provider allows it, and what the provider still asks of it."""

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from campaigns.models import Brand


class OnboardingStatus(models.TextChoices):
    REQUESTED = "requested", _("Being set up at the payment provider")
    DOCUMENTS_NEEDED = "documents", _("The payment provider needs documents")
    PENDING = "pending", _("The payment provider is checking")
    VERIFIED = "verified", _("Verified by the payment provider")
    REFUSED = "refused", _("Refused by the payment provider")
    FAILED = "failed", _("Could not be set up")


class ProviderOnboarding(models.Model):
    """One per live brand: the brand is its own legal entity (type organization) and account holder
    at the provider, which verifies it (KYC) and holds its money on its own balance account. Its
    capabilities and the provider's verification come from the provider's signed
    balancePlatform.accountHolder.updated webhooks only; `allowed` is true only while every
    capability JoyBack needs is allowed there (fail closed: anything else, or nothing heard yet,
    keeps live funding and payouts shut)."""

    brand = models.OneToOneField(Brand, on_delete=models.PROTECT, related_name="provider_onboarding")
    provider = models.CharField(max_length=12)
    status = models.CharField(
        max_length=10, choices=OnboardingStatus.choices, default=OnboardingStatus.REQUESTED
    )
    legal_entity_id = models.CharField(max_length=64, blank=True, default="")
    account_holder_id = models.CharField(max_length=64, blank=True, default="")
    # The provider's word per capability: {name: {"allowed", "verificationStatus", "enabled"}}.
    capabilities = models.JSONField(default=dict, blank=True)
    # What the provider asks for: [{"code", "message"}] of its remediating actions, or its errors.
    problems = models.JSONField(default=list, blank=True)
    allowed = models.BooleanField(default=False)
    error = models.CharField(max_length=300, blank=True, default="")
    # The newest webhook applied (its timestamp): an older one delivered late changes nothing.
    provider_updated_at = models.DateTimeField(null=True, blank=True)
    reminded_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "account_holder_id"],
                condition=~models.Q(account_holder_id=""),
                name="payouts_onboarding_account_holder_once",
            )
        ]

    def __str__(self):
        return f"{self.brand} {self.status}"
