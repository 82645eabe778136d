"""Reads of funding through the payment provider."""

from datetime import timedelta

from django.conf import settings
from django.db.models import Count, Sum
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from campaigns import roles
from campaigns.models import Brand, Membership
from joyback.metrics import gauge
from joyback.remembered import Remembered
from payouts.models import ProviderBalanceCheck, ProviderDeposit, ProviderOnboarding, VirtualAccount
from payouts.models.funding import VirtualAccountStatus
from payouts.models.payouts import Payout
from payouts.models.transitions import SENT

# Within one payout batch (balance_accounts_remembered), each brand's account is read once, not once
# per payout; outside one, every call reads it afresh.
_BALANCE_ACCOUNTS = Remembered("balance_accounts")
balance_accounts_remembered = _BALANCE_ACCOUNTS.kept


def brand_balance_account_id(*, brand: Brand | int, currency: str | None = None) -> str:
    """The one way to find a brand's own balance account at the payment provider (the account its
    deposits stay on, its payouts and fees leave from): its id, or "" while it has none open under
    its own account holder (test data never has one). `brand`: the brand or its id; `currency`:
    the brand's default unless said (needed when only the id is given)."""
    if isinstance(brand, Brand):
        brand_id, currency = brand.pk, currency or brand.default_currency
    else:
        brand_id = brand
        currency = currency or Brand.objects.values_list("default_currency", flat=True).get(pk=brand_id)
    remembered = _BALANCE_ACCOUNTS.answers()
    if remembered is not None and (brand_id, currency) in remembered:
        return remembered[(brand_id, currency)]
    found = (
        VirtualAccount.objects.filter(
            brand_id=brand_id,
            brand__livemode=True,
            currency=currency,
            status=VirtualAccountStatus.OPEN,
        )
        .exclude(account_holder_id="")
        .values_list("balance_account_id", flat=True)
        .first()
    )
    if remembered is not None:
        remembered[(brand_id, currency)] = found or ""
    return found or ""


# Adyen's remediating actions (LegalEntityService and the account holder webhooks' problems), in
# the words the brand reads; any other is shown as Adyen words it.
ADYEN_ACTION_WORDS = {
    "1_501": gettext_lazy("Adyen needs your company's register extract."),
    "1_500": gettext_lazy("Adyen needs your company's details corrected (name, registration number)."),
    "1_502": gettext_lazy("Adyen needs a document proving your company's tax number."),
    "1_503": gettext_lazy("Adyen needs your company's articles of association."),
    "2_902": gettext_lazy("Adyen needs you to accept its terms of service."),
    "2_124": gettext_lazy("Adyen needs to know who signs for your company."),
    "2_151": gettext_lazy("Adyen needs to know who owns or controls your company."),
    "1_703": gettext_lazy("Adyen needs a bank statement of your company's account."),
    "1_800": gettext_lazy("Adyen needs an ID document of the person who signs for your company."),
}


def onboarding_problem_words(problems) -> list[str]:
    """What the provider asks of the brand, each once, in words: ours for the actions we know,
    Adyen's own message otherwise."""
    words = []
    for problem in problems or []:
        known = ADYEN_ACTION_WORDS.get(str(problem.get("code") or ""))
        said = (
            str(known) if known else _("Adyen asks: %(message)s") % {"message": problem.get("message") or "?"}
        )
        if said not in words:
            words.append(said)
    return words


def onboarding_for_brand(*, brand: Brand) -> ProviderOnboarding | None:
    return ProviderOnboarding.objects.filter(brand_id=brand.pk).first()


def brands_custody_blocked(*, brand_ids) -> set[int]:
    """Of these brands, the live ones whose money may not move at the provider now: the provider
    has not allowed their capabilities (or was never asked), they have no balance account of their
    own there (a brand from before brands held their own: its money would leave the platform's
    pool), or a balance account of theirs drifted from its ledger account (fail closed: nothing
    heard is a no)."""
    live = set(Brand.objects.filter(pk__in=list(brand_ids), livemode=True).values_list("pk", flat=True))
    allowed = set(
        ProviderOnboarding.objects.filter(brand_id__in=live, allowed=True).values_list("brand_id", flat=True)
    )
    drifted = {account.brand_id for account in brand_balance_drift(brand_ids=live)}
    return (live - allowed) | (live - brands_holding_own(brand_ids=live)) | drifted


def brands_holding_own(*, brand_ids) -> set[int]:
    """Of these brands, those whose money may move: each with a balance account of its own open at
    the provider."""
    return set(
        VirtualAccount.objects.filter(
            brand_id__in=list(brand_ids), brand__livemode=True, status=VirtualAccountStatus.OPEN
        )
        .exclude(account_holder_id="")
        .values_list("brand_id", flat=True)
    )


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
    ] + [
        f"BRAND BALANCE DRIFT brand {account.brand_id} {account.balance_account_id} {account.currency} "
        f"at {account.balance_checked_at:%Y-%m-%d %H:%M}: ledger {account.ledger_balance}, provider "
        f"{account.provider_balance}, payouts sent and not settled {account.payouts_open_amount}, "
        f"unexplained drift {account.drift_unexplained}; the brand's payouts are paused"
        for account in brand_balance_drift()
    ]


def brand_balance_drift(*, brand_ids=None) -> list[VirtualAccount]:
    """Brands' own balance accounts whose provider balance differs from their ledger account."""
    checked = VirtualAccount.objects.filter(balance_checked_at__isnull=False).order_by("pk")
    if brand_ids is not None:
        checked = checked.filter(brand_id__in=list(brand_ids))
    tolerance = settings.PROVIDER_DRIFT_TOLERANCE_MINOR
    return [account for account in checked if abs(account.drift_unexplained) > tolerance]


# A payout sent longer ago than this and still not settled no longer explains a provider balance
# lower than the ledger's: the sweep asks the provider about it within minutes, so by then the
# difference is something else, and the brand pauses.
PAYOUT_EXPLAINS_DRIFT_FOR = timedelta(days=2)


def payouts_sent_unsettled_amount(*, brand_id: int, currency: str, read_at) -> int:
    """What the brand's payouts in `currency` sent by `read_at` (the provider's balance read) and not
    settled add up to: each may have left the provider's balance before the ledger heard. A payout
    is sent once its submitted state is committed, on a replica too (synchronous replication), so
    one not marked sent never left."""
    sent = Payout.objects.filter(
        brand_id=brand_id,
        currency=currency,
        status__in=SENT,
        submitted_at__lte=read_at,
        submitted_at__gte=read_at - PAYOUT_EXPLAINS_DRIFT_FOR,
    )
    return sent.aggregate(total=Sum("amount"))["total"] or 0


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
