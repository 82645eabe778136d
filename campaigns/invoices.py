"""The platform's monthly invoices: which VAT a brand's country calls for, and the reads of the
brand's invoices.

VAT on the platform's fee (a service to a business, EU VAT directive articles 44 and 196):

- a brand in the platform's own country (PLATFORM_COUNTRY) is charged its VAT (PLATFORM_VAT_RATE_BPS);
- a brand elsewhere in the EU that gave its VAT identification number is not charged VAT: the
  invoice says "Reverse charge" and names both numbers, and the brand accounts for the VAT;
- a brand outside the EU is not charged EU VAT;
- a brand in the EU without a VAT number, or whose number is not one of its country's, or whose
  country is not known, is charged the platform's VAT, as a supply whose customer is not shown to be
  a business abroad: a check that cannot be sure fails closed, never at zero VAT. The brand's finance
  page says so and asks for the number, and the next month's invoice takes it.

The VAT number is checked for its country's form here; whether the tax office knows it (VIES) is
for staff when they verify the brand.
"""

import re
from dataclasses import dataclass

from django.conf import settings

from campaigns.models import Brand, Invoice, VatTreatment

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


def vat_for(*, country: str, vat_id: str) -> Vat:
    """The VAT the platform's invoice to a brand in `country` with `vat_id` carries."""
    domestic = Vat(VatTreatment.DOMESTIC, settings.PLATFORM_VAT_RATE_BPS)
    country = (country or "").upper()
    if not country or country == settings.PLATFORM_COUNTRY:
        return domestic
    if country in EU_COUNTRIES:
        if vat_id_fits(country=country, vat_id=vat_id):
            return Vat(VatTreatment.REVERSE_CHARGE, 0)
        return domestic
    return Vat(VatTreatment.OUTSIDE_EU, 0)


def invoices_for_brand(*, brand: Brand):
    """A live brand's invoices, newest first (a test twin has none: the free trial)."""
    return Invoice.objects.filter(brand=brand, brand__livemode=True).prefetch_related("lines")


def invoice_get_for_brand(*, brand: Brand, invoice_id: int) -> Invoice | None:
    return invoices_for_brand(brand=brand).filter(pk=invoice_id).first()
