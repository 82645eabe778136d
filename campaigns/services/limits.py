"""Changing a money limit or fraud threshold takes two staff members: one asks for the change, and
it is in force once a second confirms it, through the same four-eyes grant as a money permission
(joyback.users.four_eyes: a StaffGrant of kind "limit", recorded in AccessChange on both steps)."""

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns.limits import limit_currency, limits_forget
from campaigns.models import MONEY_LIMITS, Brand, Limit, LimitKind
from joyback.money import MoneyError, currency_check
from joyback.users.four_eyes import staff_grant_request
from joyback.users.models import AccessChangeKind, StaffGrant

PLATFORM = "platform"
ANY_CURRENCY = "*"


class LimitRefused(Exception):
    pass


def limit_grant_value(*, kind: str, currency: str, brand_id: int | None, value: int) -> str:
    """What the grant asks for, in its value field: kind:currency:brand:value."""
    return f"{kind}:{currency or ANY_CURRENCY}:{brand_id or PLATFORM}:{value}"


def _grant_value_parse(text: str) -> tuple[str, str, int | None, int]:
    kind, currency, brand, value = text.split(":")
    return (
        LimitKind(kind),
        "" if currency == ANY_CURRENCY else currency,
        None if brand == PLATFORM else int(brand),
        int(value),
    )


def limit_change_request(*, actor, kind: str, currency: str, brand: Brand | None, value: int) -> StaffGrant:
    """Staff ask for a limit: nothing changes until a second staff member confirms it."""
    kind = LimitKind(kind)
    if kind in MONEY_LIMITS:
        try:
            currency_check(currency)
        except MoneyError:
            raise LimitRefused(_("An amount limit needs its currency (ISO 4217, e.g. EUR or JPY).")) from None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise LimitRefused(_("A limit is a whole number, zero or more (minor units for an amount)."))
    asked = limit_grant_value(
        kind=kind, currency=limit_currency(kind, currency), brand_id=brand.pk if brand else None, value=value
    )
    return staff_grant_request(actor=actor, subject=actor, kind=AccessChangeKind.LIMIT, value=asked)


def limit_change_apply(*, subject, value: str, actor) -> Limit:
    """The second staff member's confirmation (in staff_grant_confirm's transaction): the limit the
    first asked for is in force from now on."""
    kind, currency, brand_id, amount = _grant_value_parse(value)
    limit, _created = Limit.objects.update_or_create(
        kind=kind,
        brand_id=brand_id,
        currency=currency,
        defaults={"value": amount, "changed_by": subject, "approved_by": actor, "changed_at": timezone.now()},
    )
    # This process reads the new limit at once; the others when the cached rows expire (or now, once
    # committed and the cache dropped again after any read of the old rows meanwhile).
    limits_forget()
    transaction.on_commit(limits_forget)
    return limit
