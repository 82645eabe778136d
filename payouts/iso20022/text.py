"""The SEPA character set: transliteration of names and remittance, checks of identifiers and IBANs."""

import re
import unicodedata
from functools import lru_cache

from anyascii import anyascii
from django.utils.text import capfirst
from django.utils.translation import gettext as _
from schwifty import IBAN
from schwifty import registry as schwifty_registry
from schwifty.exceptions import SchwiftyException

from payouts.iso20022.types import Iso20022Error

# EPC basic Latin set; everything else is transliterated or replaced before it reaches a bank.
_TEXT_OK = re.compile(r"[a-zA-Z0-9/\-?:().,'+ ]*")
_NOT_TEXT = re.compile(r"[^a-zA-Z0-9/\-?:().,'+ ]+")
_SPACES = re.compile(r"  +")
# Identifiers take the same set without the space; the slash rules come from the EPC clarification
# paper (no leading or trailing "/", no "//"), which banks enforce with an RR10/FF01 reject.
_ID_OK = re.compile(r"[a-zA-Z0-9\-?:().,'+]([a-zA-Z0-9/\-?:().,'+]{0,33}[a-zA-Z0-9\-?:().,'+])?")
_BIC_OK = re.compile(r"[A-Z0-9]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?")
_COUNTRY_OK = re.compile(r"[A-Z]{2}")
# Letters NFKD does not decompose, spelled as the EPC conversion tables do (anyascii would give "ss"
# for ß too, but "o" for ø is a choice worth pinning).
_SPELLED = str.maketrans(
    {"ß": "ss", "æ": "ae", "Æ": "AE", "ø": "o", "Ø": "O", "œ": "oe", "Œ": "OE", "ł": "l", "Ł": "L",
     "đ": "d", "Đ": "D", "þ": "th", "Þ": "TH", "€": "EUR", "&": "+"}
)  # fmt: skip
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})


# The character sets of the rails (each a pattern of what is NOT allowed), for rail_text. The EPC
# set is also inside what Adyen documents for a holder's name ([a-z] [A-Z] [0-9] , . ; : - / \ + &
# ! ? @ ( ) " ' and space) and for a transfer's description.
SEPA_CHARSET = _NOT_TEXT
# Adyen's address lines: [a-z] [A-Z] [0-9] . - / # , ( ) : ; [ ] & \ | and space (no + ? or ').
ADDRESS_CHARSET = re.compile(r"[^a-zA-Z0-9.\-/#,():;\[\]&\\| ]+")
# Adyen's postal code: letters, digits and space.
POSTAL_CHARSET = re.compile(r"[^a-zA-Z0-9 ]+")


def sepa_text(value: str, max_length: int) -> str:
    """`value` in the SEPA Latin set, whitespace collapsed, cut to `max_length` characters."""
    return rail_text(value, max_length)


def rail_text(value: str, max_length: int, charset: re.Pattern = SEPA_CHARSET) -> str:
    """`value` in a rail's Latin character set, whitespace collapsed, cut to `max_length`: the one
    transliteration of every outgoing payment, pain.001 and the provider's API alike.

    Transliterated first and cut after, because transliteration can lengthen text ("ß" -> "ss").
    The original stays in the database; only the outgoing message carries this form.
    """
    if value.isascii() and _TEXT_OK.fullmatch(value) and "  " not in value:
        text = value.strip()
    else:
        text = _transliterated(value)
    if charset is not SEPA_CHARSET:
        text = _SPACES.sub(" ", charset.sub(" ", text)).strip()
    if len(text) > max_length:
        text = text[:max_length].rstrip()
    return text


def name_latin(value: str) -> bool:
    """True when every letter of the name is a Latin letter (accents and all): a name a bank holds
    in Latin letters can be spelled in a rail's set; one in another script (山田太郎, Иванов) has
    no spelling we may guess, because a reading made up here is not the name the bank holds."""
    for char in unicodedata.normalize("NFKD", value):
        if char.isalpha() and not unicodedata.name(char, "").startswith("LATIN"):
            return False
    return True


def name_text(value: str, max_length: int, charset: re.Pattern = SEPA_CHARSET) -> str:
    """A person's name in the rail's set; "" when it is not written in Latin letters (never a
    guessed reading): the payment must then use the Latin spelling the person's bank holds."""
    return rail_text(value, max_length, charset) if name_latin(value) else ""


@lru_cache(maxsize=8192)
def _transliterated(value: str) -> str:
    text = unicodedata.normalize("NFKD", value.translate(_SPELLED))
    # Combining marks go (é -> e); so do pictographs, which anyascii would spell as ":grinning:".
    text = "".join(
        char for char in text if not unicodedata.combining(char) and unicodedata.category(char) != "So"
    )
    text = anyascii(text.translate(_SPELLED))
    text = _NOT_TEXT.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def xml_escape(text: str) -> str:
    # Transliterated text and checked identifiers never hold these; the guard costs one scan.
    if "&" in text or "<" in text or ">" in text or '"' in text:
        return text.translate(_ESCAPES)
    return text


def identifier_check(value, what) -> str:
    if not isinstance(value, str) or not _ID_OK.fullmatch(value) or "//" in value:
        raise Iso20022Error(
            _(
                "%(what)s %(value)r is not a valid SEPA identifier: 1 to 35 characters from "
                "A-Z a-z 0-9 / - ? : ( ) . , ' +, no spaces, not starting or ending with '/' and "
                "without '//'."
            )
            % {"what": capfirst(what), "value": value}
        )
    return value


def bic_check(value: str, what) -> str:
    if value and (not isinstance(value, str) or not _BIC_OK.fullmatch(value)):
        raise Iso20022Error(
            _("%(what)s %(value)r is not a valid BIC.") % {"what": capfirst(what), "value": value}
        )
    return value


def country_check(value: str, what) -> str:
    if value and (not isinstance(value, str) or not _COUNTRY_OK.fullmatch(value)):
        raise Iso20022Error(
            _("%(what)s %(value)r is not a two-letter ISO 3166 country code.")
            % {"what": capfirst(what), "value": value}
        )
    return value


_IBAN_SHAPE = re.compile(r"[A-Z]{2}[0-9]{2}[A-Z0-9]{8,30}")
# Letters count as 10..35 in the ISO 7064 mod 97-10 check.
_IBAN_DIGITS = str.maketrans({chr(code): str(code - 55) for code in range(ord("A"), ord("Z") + 1)})


@lru_cache(maxsize=128)
def _iban_spec(country: str):
    try:
        return schwifty_registry.get_iban_spec(country)
    except SchwiftyException:
        return None


def _sepa_iban_fast(compact: str) -> bool:
    # schwifty's own checks (shape, country length, BBAN format, check digits) at a tenth of the
    # cost of building an IBAN object, which a file of 100,000 payouts would feel.
    if not _IBAN_SHAPE.fullmatch(compact):
        return False
    spec = _iban_spec(compact[:2])
    if spec is None or not spec.in_sepa_zone or len(compact) != spec.iban_length:
        return False
    if not spec.regex.fullmatch(compact[4:]):
        return False
    return int((compact[4:] + compact[:4]).translate(_IBAN_DIGITS)) % 97 == 1


def _sepa_iban_refusal(value: str) -> Exception:
    """Why schwifty refuses `value`, for the message (the slow path, taken only for bad IBANs)."""
    try:
        iban = IBAN(value)
    except SchwiftyException as error:
        return error
    if not iban.in_sepa_zone:
        return Iso20022Error("not in the SEPA zone")
    return Iso20022Error("invalid")  # pragma: no cover - the fast check and schwifty agree


def sepa_iban(value, what) -> str:
    """The compact IBAN, or a clear refusal: checksum, country length, SEPA zone."""
    if isinstance(value, str):
        compact = value.replace(" ", "").upper()
        if _sepa_iban_fast(compact):
            return compact
        reason = _sepa_iban_refusal(value)
    else:
        reason = type(value).__name__
    raise Iso20022Error(
        _("%(what)s %(value)r is not a valid SEPA IBAN (%(reason)s).")
        % {"what": capfirst(what), "value": value, "reason": reason}
    )
