"""Brands' VAT numbers confirmed by the EU's VIES, the evidence a reverse charge rests on
(campaigns.invoices): the schedule `payouts-vies-checks` asks VIES about each live brand's number
that decides a reverse charge and is due (new or changed, VIES unavailable last time, or a
confirmation grown old), outside any transaction, and records its answer on the brand
(campaigns.services.brands.brand_vies_record, which keeps nothing if the number changed meanwhile).

Fail closed: until VIES confirms the number the brand's invoices carry VAT. VIES unavailable (a
member state's register down, too many requests, a timeout) is asked again after RETRY_AFTER,
doubling to RETRY_MOST; a number VIES says is not valid is asked about again daily (a number just
registered shows up later), a confirmed one every RECHECK_VALID.
"""

import logging
from collections import defaultdict
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from campaigns.invoices import EU_COUNTRIES, vat_id_normal, vat_vies_needed
from campaigns.models import Brand, VatIdCheck
from campaigns.services.brands import brand_vies_record
from joyback.modes import provider_routed_for
from payouts.providers import vies

logger = logging.getLogger(__name__)

RETRY_AFTER = timedelta(minutes=15)
RETRY_MOST = timedelta(hours=6)
RECHECK_INVALID = timedelta(days=1)
RECHECK_VALID = timedelta(days=30)
CHECK_MOST = 100


def vat_ids_due(*, now, limit: int = CHECK_MOST) -> list[Brand]:
    """Live brands in another EU country whose number VIES must be asked about now."""
    brands = (
        Brand.objects.filter(livemode=True, country__in=EU_COUNTRIES - {settings.PLATFORM_COUNTRY})
        .exclude(vat_id="")
        .filter(Q(vies_next_check_at__isnull=True) | Q(vies_next_check_at__lte=now))
        .order_by("vies_next_check_at", "pk")[: limit * 2]
    )
    return [brand for brand in brands if vat_vies_needed(country=brand.country, vat_id=brand.vat_id)][:limit]


def vat_ids_check(*, now=None, limit: int = CHECK_MOST) -> dict:
    """Ask VIES about every number due; what it said, counted."""
    now = now or timezone.now()
    done = defaultdict(int)
    for brand in vat_ids_due(now=now, limit=limit):
        done[vat_id_check(brand=brand, now=now)] += 1
    return dict(done)


def _retry_after(brand: Brand, *, now) -> timedelta:
    """Doubling from RETRY_AFTER while VIES stays unavailable, counted from the last answer."""
    if brand.vies_status != VatIdCheck.UNAVAILABLE or brand.vies_checked_at is None:
        return RETRY_AFTER
    waited = max(now - brand.vies_checked_at, RETRY_AFTER)
    return min(waited * 2, RETRY_MOST)


def vat_id_check(*, brand: Brand, now=None) -> str:
    """One brand's number asked of VIES (for a live brand: test data is never invoiced) and its
    answer recorded; returns valid, invalid, unavailable, or changed (the number changed meanwhile)."""
    now = now or timezone.now()
    vat_id = vat_id_normal(brand.vat_id)
    try:
        with provider_routed_for(livemode=brand.livemode):
            answer = vies.vat_number_check(vat_id=vat_id)
    except vies.ViesUnavailable as unavailable:
        logger.warning("VIES about brand %s: %s", brand.pk, unavailable)
        kept = brand_vies_record(
            brand_id=brand.pk,
            vat_id=vat_id,
            status=VatIdCheck.UNAVAILABLE,
            error=unavailable.code,
            next_check_at=now + _retry_after(brand, now=now),
        )
        return VatIdCheck.UNAVAILABLE if kept else "changed"
    status = VatIdCheck.VALID if answer.valid else VatIdCheck.INVALID
    kept = brand_vies_record(
        brand_id=brand.pk,
        vat_id=vat_id,
        status=status,
        request_identifier=answer.request_identifier,
        request_date=answer.request_date,
        error=answer.error,
        next_check_at=now + (RECHECK_VALID if answer.valid else RECHECK_INVALID),
    )
    return status if kept else "changed"
