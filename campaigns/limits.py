"""Reading the money limits and fraud thresholds in force: a brand's own row for the currency, else
the platform's row for the currency, else the platform default, the setting of the same name
(config.variables) scaled to the currency.

The settings' amounts are euro cents. A currency's default is the same amount of money, roughly:
2,000 euros is about 300,000 yen, not 2,000 yen and not 200,000 yen cents (JPY has no minor unit).
"""

from decimal import ROUND_HALF_UP, Decimal

from babel.numbers import get_currency_precision
from django.conf import settings
from django.core.cache import cache

from campaigns.models import MONEY_LIMITS, Limit, LimitKind

# Units of each currency worth about one euro, rounded to what a person setting a limit would pick:
# a default only, to be replaced per currency by staff (a currency not listed counts one for one).
UNITS_PER_EURO = {
    "EUR": Decimal(1),
    "USD": Decimal(1),
    "GBP": Decimal(1),
    "CHF": Decimal(1),
    "CAD": Decimal("1.5"),
    "AUD": Decimal("1.5"),
    "NZD": Decimal("1.8"),
    "SGD": Decimal("1.5"),
    "HKD": Decimal(8),
    "CNY": Decimal(8),
    "JPY": Decimal(150),
    "KRW": Decimal(1500),
    "SEK": Decimal(11),
    "NOK": Decimal(11),
    "DKK": Decimal("7.5"),
    "PLN": Decimal("4.3"),
    "CZK": Decimal(25),
    "HUF": Decimal(400),
    "RON": Decimal(5),
    "BGN": Decimal(2),
    "INR": Decimal(90),
    "BRL": Decimal(6),
    "MXN": Decimal(20),
    "ZAR": Decimal(20),
    "TRY": Decimal(35),
}

CACHE_KEY = "campaigns:limits"
# Other processes see a confirmed change within this long (this one at once).
CACHE_SECONDS = 60


def limit_currency(kind: str, currency: str) -> str:
    """The currency a row of this kind is kept under: none for a count."""
    return currency if kind in MONEY_LIMITS else ""


def euro_cents_in(*, amount: int, currency: str) -> int:
    """About the same money in the currency's minor units: a default's amount, set in euro cents."""
    if currency in {"", "EUR"}:
        return amount
    euros = Decimal(amount).scaleb(-2)
    converted = euros * UNITS_PER_EURO.get(currency, Decimal(1))
    minor = converted.scaleb(get_currency_precision(currency))
    return int(minor.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def limit_default(*, kind: str, currency: str = "") -> int:
    """The platform default: the setting, scaled from euro cents to the currency's minor units."""
    base = getattr(settings, LimitKind(kind).name)
    if kind not in MONEY_LIMITS:
        return base
    return euro_cents_in(amount=base, currency=currency)


def _rows() -> dict[tuple[str, int | None, str], int]:
    rows = cache.get(CACHE_KEY)
    if rows is None:
        stored = Limit.objects.values_list("kind", "brand_id", "currency", "value")
        rows = {(kind, brand_id, currency): value for kind, brand_id, currency, value in stored}
        cache.set(CACHE_KEY, rows, CACHE_SECONDS)
    return rows


def limits_forget() -> None:
    cache.delete(CACHE_KEY)


def limit_value(*, kind: str, currency: str = "", brand_id: int | None = None) -> int:
    """The limit in force for this brand (None: the platform's) and currency."""
    currency = limit_currency(kind, currency)
    rows = _rows()
    if brand_id is not None and (kind, brand_id, currency) in rows:
        return rows[(kind, brand_id, currency)]
    if (kind, None, currency) in rows:
        return rows[(kind, None, currency)]
    return limit_default(kind=kind, currency=currency)
