"""Payout controls: what a payment partner's risk review asks of payouts made by hand (limits,
the brand's verification, the velocity watch)."""

import hashlib
import logging
from datetime import timedelta

from django.conf import settings
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from campaigns.limits import limit_value
from campaigns.models import LimitKind
from campaigns.services.funding import BrandNotVerified, brand_money_allowed_check
from joyback.ledger.models import AccountKind
from joyback.ledger.selectors import account_find
from joyback.money import money_format
from payouts import sql
from payouts.models import PayoutAlert
from payouts.models.payouts import HoldReason
from payouts.selectors import (
    brand_confirmed_funds,
    brand_paid_account_before,
    brand_paid_out,
    manual_payouts_count_since,
    manual_payouts_in_window,
)
from payouts.submission.states import PayoutRefused

logger = logging.getLogger(__name__)


_LIMITS_LOCK = 0x4A42_4C49  # "JBLI": the advisory lock space of the payout limits


def payout_limits_lock(*, brand_id: int, account_fingerprint: str) -> None:
    """Manual payouts of one brand, and to one bank account, take turns while their limits are
    checked and their payout is stored: two made at once would each see the other's total as it
    was and could pass a limit together. The brand first, then the account; both before the
    participant's row and the ledger's accounts, which the payout locks next."""
    account_key = int(hashlib.sha256(account_fingerprint.encode()).hexdigest()[:7], 16)
    sql.advisory_xact_lock_pairs([(_LIMITS_LOCK, brand_id), (_LIMITS_LOCK + 1, account_key)])


def payout_controls_check(
    *,
    brand,
    currency: str,
    account_fingerprint: str,
    account_masked: str,
    amount: int,
    from_funding: bool = True,
) -> list[str]:
    """Refuse what no approval may allow (more than the funding holds or the bank confirmed, past a
    daily limit); the reasons the payout must wait for a second person otherwise. Run under
    payout_limits_lock (the ledger checks the funding again under its own lock)."""
    brand_verified_check(brand)
    language = translation.get_language() or "en"
    if from_funding:
        funding = account_find(kind=AccountKind.BRAND_FUNDING, brand_id=brand.pk, currency=currency)
        if funding is None or funding.available < amount:
            raise PayoutRefused(_("The brand's funding account does not hold enough for this payout."))
    confirmed = brand_confirmed_funds(brand_id=brand.pk, currency=currency)
    paid_out = brand_paid_out(brand_id=brand.pk, currency=currency)
    # A payment that came back no longer counts as paid out, so paying it again fits.
    if paid_out + amount > confirmed:
        raise PayoutRefused(
            _(
                "The bank has confirmed %(confirmed)s of this brand's transfers, and %(paid)s of it is paid "
                "out already: this payout would pay out more than the brand sent."
            )
            % {
                "confirmed": money_format(confirmed, currency, language),
                "paid": money_format(paid_out, currency, language),
            }
        )
    # Each limit is the brand's own for this currency, else the platform's (campaigns.limits).
    mine = {"currency": currency, "brand_id": brand.pk}
    brand_limit = limit_value(kind=LimitKind.PAYOUT_BRAND_DAILY_LIMIT, **mine)
    account_limit = limit_value(kind=LimitKind.PAYOUT_ACCOUNT_DAILY_LIMIT, **mine)
    since = timezone.now() - timedelta(hours=settings.PAYOUT_LIMIT_WINDOW_HOURS)
    brand_total = manual_payouts_in_window(since=since, currency=currency, brand_id=brand.pk)
    if brand_total + amount > brand_limit:
        raise PayoutRefused(
            _(
                "This payout would take the brand's payouts of the last %(hours)s hours to %(total)s, "
                "above its limit of %(limit)s. Nothing was paid; try again later or ask us to raise "
                "the limit."
            )
            % {
                "hours": settings.PAYOUT_LIMIT_WINDOW_HOURS,
                "total": money_format(brand_total + amount, currency, language),
                "limit": money_format(brand_limit, currency, language),
            }
        )
    account_total = manual_payouts_in_window(
        since=since, currency=currency, account_fingerprint=account_fingerprint
    )
    if account_total + amount > account_limit:
        raise PayoutRefused(
            _(
                "The bank account %(account)s would receive %(total)s in the last %(hours)s hours, above "
                "the limit of %(limit)s for one account. Nothing was paid."
            )
            % {
                "account": account_masked,
                "hours": settings.PAYOUT_LIMIT_WINDOW_HOURS,
                "total": money_format(account_total + amount, currency, language),
                "limit": money_format(account_limit, currency, language),
            }
        )
    reasons = []
    if amount > limit_value(kind=LimitKind.PAYOUT_APPROVAL_THRESHOLD, **mine):
        reasons.append(HoldReason.ABOVE_THRESHOLD)
    if settings.PAYOUT_NEW_ACCOUNT_APPROVAL and not brand_paid_account_before(
        brand_id=brand.pk, account_fingerprint=account_fingerprint
    ):
        reasons.append(HoldReason.NEW_ACCOUNT)
    if brand_total + amount > limit_value(kind=LimitKind.PAYOUT_WINDOW_APPROVAL_THRESHOLD, **mine):
        reasons.append(HoldReason.WINDOW_TOTAL)
    return [str(reason.value) for reason in reasons]


def brand_verified_check(brand) -> None:
    try:
        brand_money_allowed_check(brand=brand)
    except BrandNotVerified as refused:
        raise PayoutRefused(str(refused)) from None


def payout_velocity_watch(*, brand) -> None:
    """Many manual payouts in a short time is how a taken-over account empties a brand: raise an
    alert for platform staff, once per window (they are not refused: the limits do that)."""
    minutes = settings.PAYOUT_VELOCITY_WINDOW_MINUTES
    now = timezone.now()
    window_start = now - timedelta(
        minutes=now.minute % minutes, seconds=now.second, microseconds=now.microsecond
    )
    count = manual_payouts_count_since(brand_id=brand.pk, since=now - timedelta(minutes=minutes))
    if count <= settings.PAYOUT_VELOCITY_ALERT_COUNT:
        return
    limit = settings.PAYOUT_VELOCITY_ALERT_COUNT
    detail = f"{count} manual payouts within {minutes} minutes (alert above {limit})"
    _alert, created = PayoutAlert.objects.get_or_create(
        brand=brand, kind="velocity", window_start=window_start, defaults={"detail": detail}
    )
    if created:
        logger.warning("payout velocity alert for brand %s: %s", brand.pk, detail)
