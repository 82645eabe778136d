"""The platform's monthly invoices: which VAT a brand's country calls for, and the reads of the
brand's invoices.

VAT on the platform's fee (a service to a business, EU VAT directive articles 44 and 196):

- a brand in the platform's own country (PLATFORM_COUNTRY) is charged its VAT (PLATFORM_VAT_RATE_BPS);
- a brand elsewhere in the EU that gave its VAT identification number, confirmed valid by the EU's
  VIES, is not charged VAT: the invoice says "Reverse charge", names both numbers and keeps VIES's
  consultation number and date as the evidence, and the brand accounts for the VAT;
- a brand outside the EU is not charged EU VAT;
- a brand in the EU without a VAT number, or whose number is not one of its country's, or whose
  country is not known, is charged the platform's VAT, as a supply whose customer is not shown to be
  a business abroad: a check that cannot be sure fails closed, never at zero VAT. The brand's finance
  page says so and asks for the number, and the next month's invoice takes it;
- so is a brand whose number VIES says is not valid, or whose number VIES has not confirmed yet (a
  member state's register unavailable, a number just entered): the invoice row and the finance page
  say which, and the next invoice after VIES confirms it is reverse-charged.

The VAT number's form is checked here, when it is entered; VIES is asked by payouts' schedule
(payouts.vies, `payouts-vies-checks`), which records its answer on the brand
(campaigns.services.brands.brand_vies_record). A number changed since VIES's answer is unconfirmed.
"""

import re
from dataclasses import dataclass

from django.conf import settings

from campaigns.models import Brand, Invoice, VatIdCheck, VatTreatment

EU_COUNTRIES = frozenset(
    {"AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU", "IE"}
    | {"IT", "LV", "LT", "LU", "MT", "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE"}
)
# A VAT number starts with its country's code, but for Greece (EL).
VAT_PREFIX = {"GR": "EL"}
VAT_ID = re.compile(r"[A-Z]{2}[0-9A-Z+*]{2,12}")
BPS = 10_000


@dataclass(frozen=True)
class Vat:
    treatment: str
    rate_bps: int
    # Why an EU business abroad is charged VAT: "no_number", or VIES's word on it (VatIdCheck:
    # invalid, unavailable, unchecked); "" otherwise.
    unconfirmed: str = ""

    def on(self, net: int) -> int:
        """VAT on `net` minor units, rounded half away from zero to the minor unit."""
        sign = -1 if net < 0 else 1
        return sign * ((abs(net) * self.rate_bps + BPS // 2) // BPS)


def vat_id_normal(vat_id: str) -> str:
    return re.sub(r"[\s.\-]", "", vat_id or "").upper()


def vat_id_fits(*, country: str, vat_id: str) -> bool:
    """Whether the number has the form of one of the country's (its prefix, letters and digits)."""
    normal = vat_id_normal(vat_id)
    return bool(VAT_ID.fullmatch(normal)) and normal[:2] == VAT_PREFIX.get(country, country)


def vat_for(*, country: str, vat_id: str, vies: str) -> Vat:
    """The VAT the platform's invoice to a brand in `country` with `vat_id` carries, `vies` being
    what VIES said of that very number (VatIdCheck; see brand_vies_said)."""
    domestic = Vat(VatTreatment.DOMESTIC, settings.PLATFORM_VAT_RATE_BPS)
    country = (country or "").upper()
    if not country or country == settings.PLATFORM_COUNTRY:
        return domestic
    if country in EU_COUNTRIES:
        if not vat_id_fits(country=country, vat_id=vat_id):
            return Vat(domestic.treatment, domestic.rate_bps, "no_number")
        if vies == VatIdCheck.VALID:
            return Vat(VatTreatment.REVERSE_CHARGE, 0)
        return Vat(domestic.treatment, domestic.rate_bps, vies or VatIdCheck.UNCHECKED)
    return Vat(VatTreatment.OUTSIDE_EU, 0)


def vat_vies_needed(*, country: str, vat_id: str) -> bool:
    """Whether the number decides a reverse charge, and so must be confirmed by VIES."""
    country = (country or "").upper()
    return (
        country in EU_COUNTRIES
        and country != settings.PLATFORM_COUNTRY
        and vat_id_fits(country=country, vat_id=vat_id)
    )


def brand_vies_said(brand: Brand) -> str:
    """What VIES said of the brand's number as it is now: an answer about another number (changed
    since) counts as none."""
    if brand.vies_vat_id != vat_id_normal(brand.vat_id):
        return VatIdCheck.UNCHECKED
    return brand.vies_status


def brand_vat(brand: Brand) -> Vat:
    return vat_for(country=brand.country, vat_id=brand.vat_id, vies=brand_vies_said(brand))


def invoices_for_brand(*, brand: Brand):
    """A live brand's invoices, newest first (a test twin has none: the free trial)."""
    return Invoice.objects.filter(brand=brand, brand__livemode=True).prefetch_related("lines")


def invoice_get_for_brand(*, brand: Brand, invoice_id: int) -> Invoice | None:
    return invoices_for_brand(brand=brand).filter(pk=invoice_id).first()
