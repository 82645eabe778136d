"""Reads, each scoped to the brands the signed-in member belongs to."""

from campaigns.models import Brand, Membership
from joyback.ledger.models import AccountKind
from joyback.ledger.selectors import accounts_for_brand


def brands_for_user(*, user):
    if not user.is_authenticated:
        return Brand.objects.none()
    return Brand.objects.filter(memberships__user=user).order_by("name")


def membership_get(*, user, brand_slug: str) -> Membership | None:
    """The member's membership of the brand with this slug, or None: the one access check."""
    if not user.is_authenticated:
        return None
    return Membership.objects.select_related("brand").filter(user=user, brand__slug=brand_slug).first()


def brand_balances(*, brand: Brand) -> dict:
    """Balances of the brand's ledger accounts, grouped for the dashboard tiles."""
    accounts = list(accounts_for_brand(brand_id=brand.pk))
    totals: dict[str, dict[str, int]] = {}
    for account in accounts:
        tile = totals.setdefault(account.currency, {"funding": 0, "budgets": 0, "held": 0, "payable": 0})
        if account.kind == AccountKind.BRAND_FUNDING:
            tile["funding"] += account.available
        elif account.kind == AccountKind.CAMPAIGN_BUDGET:
            tile["budgets"] += account.available
        elif account.kind in (AccountKind.PARTICIPANT_PAYABLE, AccountKind.PAYOUT_IN_TRANSIT):
            tile["payable"] += account.balance
        tile["held"] += account.held
    return {"accounts": accounts, "totals": totals}
