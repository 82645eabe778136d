"""Which rail pays a currency, and what account details each rail needs and accepts: the checks
that make a BankAccount (payouts.bank_accounts) from what a person typed, or say what is wrong."""

import re

from babel import Locale, UnknownLocaleError
from django.conf import settings
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from schwifty import BIC, IBAN
from schwifty.exceptions import SchwiftyException

from payouts.bank_accounts import BankAccount, Rail

RAIL_FOR_CURRENCY = {"EUR": Rail.SEPA, "GBP": Rail.UK_FPS, "USD": Rail.US_ACH}


def rail_for(currency: str) -> str | None:
    """The local rail of a currency, else SWIFT where the platform serves that currency, else none."""
    if currency in RAIL_FOR_CURRENCY:
        return RAIL_FOR_CURRENCY[currency]
    return Rail.SWIFT if currency in settings.PAYOUT_SWIFT_CURRENCIES else None


class AccountInvalid(ValueError):
    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field
        self.message = message


def iban_check(raw: str) -> BankAccount:
    compact = re.sub(r"[\s-]", "", raw or "").upper()
    if not compact:
        raise AccountInvalid("iban", _("Enter your IBAN."))
    if not re.fullmatch(r"[A-Z]{2}[0-9A-Z]+", compact):
        raise AccountInvalid("iban", _("An IBAN starts with two letters for the country, then digits."))
    try:
        iban = IBAN(compact)
    except SchwiftyException as error:
        raise AccountInvalid("iban", _iban_message(error, compact)) from None
    if not iban.in_sepa_zone:
        raise AccountInvalid(
            "iban",
            _(
                "This account is at a bank in %(country)s. We can send euros only to a bank in Europe's "
                "SEPA area (the EU, the UK, Switzerland, Norway and a few more): please give the IBAN "
                "of an account there."
            )
            % {"country": _country_name(compact[:2])},
        )
    return BankAccount(rail=Rail.SEPA, iban=str(iban.compact), bic=_bank_bic(iban))


# The registry's BIC of each bank seen, by its codes: schwifty builds and validates a BIC anew on
# every lookup, a tenth of a claim's bank-detail check. Bounded, as the codes come from people.
_BIC_BY_BANK: dict[tuple[str, str, str], str] = {}
_BIC_BY_BANK_MAX = 20_000


def _bank_bic(iban: IBAN) -> str:
    key = (iban.country_code, iban.bank_code, iban.branch_code)
    bic = _BIC_BY_BANK.get(key)
    if bic is None:
        if len(_BIC_BY_BANK) >= _BIC_BY_BANK_MAX:
            _BIC_BY_BANK.clear()
        bic = _BIC_BY_BANK[key] = str(iban.bic or "")
    return bic


def _country_name(code: str) -> str:
    """The country's name in the reader's language (Brasil, 巴西), else its code."""

    try:
        locale = Locale.parse((get_language() or "en").replace("-", "_"))
    except (UnknownLocaleError, ValueError):
        locale = Locale("en")
    return locale.territories.get(code, code)


def _iban_message(error: Exception, compact: str) -> str:
    name = type(error).__name__
    if name == "InvalidCountryCode":
        return _("%(code)s is not a country that uses IBANs.") % {"code": compact[:2]}
    if name == "InvalidLength":
        return _("This IBAN has the wrong number of characters for %(code)s.") % {"code": compact[:2]}
    if name == "InvalidChecksumDigits":
        return _("The IBAN's check digits do not match: please look for a typo.")
    return _("This is not a valid IBAN: please check it.")


def uk_account_check(sort_code: str, account_number: str) -> BankAccount:
    sort_code = re.sub(r"[\s-]", "", sort_code or "")
    account_number = re.sub(r"\s", "", account_number or "")
    if not re.fullmatch(r"\d{6}", sort_code):
        raise AccountInvalid("sort_code", _("A sort code has six digits, like 12-34-56."))
    if not re.fullmatch(r"\d{8}", account_number):
        raise AccountInvalid("account_number", _("A UK account number has eight digits."))
    return BankAccount(rail=Rail.UK_FPS, sort_code=sort_code, account_number=account_number)


def aba_routing_valid(routing: str) -> bool:
    if not re.fullmatch(r"\d{9}", routing):
        return False
    digits = [int(d) for d in routing]
    return sum(w * d for w, d in zip([3, 7, 1] * 3, digits, strict=True)) % 10 == 0


def us_account_check(routing_number: str, account_number: str) -> BankAccount:
    routing_number = re.sub(r"\s", "", routing_number or "")
    account_number = re.sub(r"\s", "", account_number or "")
    if not aba_routing_valid(routing_number):
        raise AccountInvalid("routing_number", _("A US routing number has nine digits and a valid checksum."))
    if not re.fullmatch(r"\d{4,17}", account_number):
        raise AccountInvalid("account_number", _("A US account number has 4 to 17 digits."))
    return BankAccount(rail=Rail.US_ACH, routing_number=routing_number, account_number=account_number)


def swift_account_check(bic: str, account_number: str) -> BankAccount:
    """SWIFT, where no local rail reaches: the bank's BIC and the account number as the bank writes it."""
    bic = re.sub(r"\s", "", bic or "").upper()
    account_number = re.sub(r"[\s-]", "", account_number or "").upper()
    try:
        code = BIC(bic)
    except SchwiftyException:
        raise AccountInvalid(
            "bic", _("A BIC (SWIFT code) has 8 or 11 letters and digits, like DEUTDEFF.")
        ) from None
    if not re.fullmatch(r"[0-9A-Z]{4,34}", account_number):
        raise AccountInvalid("account_number", _("An account number has 4 to 34 letters and digits."))
    return BankAccount(rail=Rail.SWIFT, bic=str(code), account_number=account_number)
