"""Reads of funding through the payment provider."""

from django.conf import settings
from django.db.models import Count

from campaigns import roles
from campaigns.models import Brand, Membership
from joyback.metrics import gauge
from payouts.models import ProviderBalanceCheck, ProviderDeposit, VirtualAccount


def virtual_account_for_brand(*, brand: Brand, currency: str) -> VirtualAccount | None:
    # A test twin has none: its play money comes from the sandbox bank (payouts.sandbox_funding).
    return VirtualAccount.objects.filter(brand=brand, currency=currency, brand__livemode=True).first()


def deposits_for_brand(*, brand: Brand, limit: int = 50) -> list[ProviderDeposit]:
    return list(ProviderDeposit.objects.filter(brand=brand).order_by("-created_at", "-pk")[:limit])


def funders_of(*, brand: Brand) -> list[str]:
    """Who funds the brand (its owner and finance members), by name, for the members who do not."""
    members = Membership.objects.filter(brand=brand, role__in=roles.FUND).select_related("user")
    return sorted((member.user.get_full_name() or member.user.email) for member in members.order_by("pk"))


def provider_drift() -> list[ProviderBalanceCheck]:
    return [
        check
        for check in ProviderBalanceCheck.objects.order_by("provider", "currency")
        if abs(check.drift) > settings.PROVIDER_DRIFT_TOLERANCE_MINOR
    ]


def provider_drift_problems() -> list[str]:
    """For /healthz/ and ledger_check: the ledger's provider balance against the provider's, as the
    last reconciliation pass found them."""
    return [
        f"PROVIDER DRIFT {check.provider} {check.currency} at {check.checked_at:%Y-%m-%d %H:%M}: "
        f"ledger {check.ledger_balance}, provider {check.provider_balance}, drift {check.drift}"
        for check in provider_drift()
    ]


def provider_metrics():
    """For GET /metrics: the provider balance drift per currency, and the brands' virtual accounts."""
    yield gauge(
        "joyback_provider_drift_minor",
        "The ledger's provider balance minus the provider's balances of the virtual accounts (minor units)",
        ["provider", "currency"],
        [(c.provider, c.currency, c.drift) for c in ProviderBalanceCheck.objects.order_by("pk")],
    )
    yield gauge(
        "joyback_virtual_accounts",
        "Brands' virtual accounts at the payment provider, by status",
        ["status"],
        VirtualAccount.objects.values_list("status").annotate(n=Count("pk")).order_by(),
    )
