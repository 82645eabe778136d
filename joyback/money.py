"""Money is an integer number of minor units plus an ISO 4217 currency code, never a float."""

from decimal import Decimal

from babel.numbers import format_currency, get_currency_precision, list_currencies

KNOWN_CURRENCIES = frozenset(list_currencies())


class MoneyError(ValueError):
    pass


def currency_check(currency: str) -> str:
    if not isinstance(currency, str) or currency not in KNOWN_CURRENCIES:
        raise MoneyError(f"{currency!r} is not an ISO 4217 currency code")
    return currency


def minor_units_check(amount) -> int:
    # bool is an int subclass and Decimal/float would silently round: refuse all three.
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise MoneyError(
            f"amounts are whole numbers of minor units (cents), not {type(amount).__name__} {amount!r}"
        )
    return amount


def to_major(amount: int, currency: str) -> Decimal:
    return Decimal(amount).scaleb(-get_currency_precision(currency))


def from_major(value: Decimal | str, currency: str) -> int:
    """Parse a decimal amount typed by a person ("12.50") into minor units, refusing extra digits."""
    exponent = get_currency_precision(currency_check(currency))
    quantity = Decimal(value)
    minor = quantity.scaleb(exponent)
    if minor != minor.to_integral_value():
        raise MoneyError(f"{value} {currency} has more than {exponent} decimals")
    return int(minor)


def money_format(amount: int, currency: str, locale: str = "en") -> str:
    return format_currency(to_major(amount, currency), currency, locale=locale.replace("-", "_"))
