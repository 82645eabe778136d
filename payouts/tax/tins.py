"""Tax identification numbers checked by country, with python-stdnum where it knows the number
(the library a tax team would use: the check digits of each scheme, kept up to date). The UK's
National Insurance number has no stdnum module: its format is HMRC's (NIM39110)."""

import re
from dataclasses import dataclass

from django.utils.translation import gettext_lazy as _
from stdnum.exceptions import ValidationError
from stdnum.util import get_cc_module

from payouts.models.tax import TinKind

# The personal TIN of each EU country as stdnum names its module: what DAC7 reports as the TIN.
# Cyprus, Luxembourg and Malta are missing: stdnum knows only their VAT numbers, not a person's TIN.
EU_TIN_MODULES = {
    "AT": "tin",
    "BE": "nn",
    "BG": "egn",
    "CZ": "rc",
    "DK": "cpr",
    "EE": "ik",
    "FI": "hetu",
    "FR": "nif",
    "GR": "vat",  # the AFM, Greece's one tax number for people and companies
    "HR": "oib",
    "IE": "pps",
    "IT": "codicefiscale",
    "LT": "asmens",
    "LV": "pvn",
    "NL": "bsn",
    "PL": "pesel",
    "PT": "nif",
    "RO": "cnp",
    "SE": "personnummer",
    "SI": "emso",
    "SK": "rc",
}
# The TINs a person of these countries may give, in the order the form offers them.
KINDS_BY_COUNTRY = {
    "DE": (TinKind.DE_IDNR,),
    "ES": (TinKind.ES_NIF, TinKind.ES_NIE),
    "GB": (TinKind.GB_UTR, TinKind.GB_NINO),
    "US": (TinKind.US_SSN, TinKind.US_ITIN),
}
_STDNUM = {
    TinKind.DE_IDNR: "stdnum.de.idnr",
    TinKind.ES_NIF: "stdnum.es.nif",
    TinKind.ES_NIE: "stdnum.es.nie",
    TinKind.GB_UTR: "stdnum.gb.utr",
    TinKind.US_SSN: "stdnum.us.ssn",
    TinKind.US_ITIN: "stdnum.us.itin",
}
# HMRC's NINO: two prefix letters (not D F I Q U V; the second not O; not BG GB KN NK NT TN ZZ),
# six digits, a suffix A-D.
_NINO = re.compile(r"^(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]\d{6}[A-D]$")

EXAMPLES = {
    TinKind.DE_IDNR: "12 345 678 901",
    TinKind.ES_NIF: "12345678Z",
    TinKind.ES_NIE: "X1234567L",
    TinKind.GB_UTR: "12345 67890",
    TinKind.GB_NINO: "AB 12 34 56 C",
    TinKind.US_SSN: "123-45-6789",
    TinKind.US_ITIN: "912-70-1234",
}


class TinRefused(ValueError):
    """The number cannot be this kind's: the message says so in the person's language."""

    def __init__(self, message):
        super().__init__(str(message))
        self.message = message


@dataclass(frozen=True)
class CheckedTin:
    number: str  # compact: what is stored and reported
    kind: str
    country: str


def tin_check(*, number: str, kind: str, country: str) -> CheckedTin:
    """The TIN compacted if it is valid for its kind and the country that issued it, else TinRefused.
    A country with no module known here is taken as typed (letters and digits only): DAC7 asks for
    the TIN as issued, and refusing a valid foreign number would leave the person unpaid."""
    country = country.upper()
    raw = (number or "").strip()
    if kind == TinKind.NONE:
        if raw:
            raise TinRefused(_("Leave the number empty if your country issues you none."))
        return CheckedTin(number="", kind=kind, country=country)
    if not raw:
        raise TinRefused(_("Please enter your tax identification number."))
    expected = KINDS_BY_COUNTRY.get(country)
    if expected and kind not in expected:
        raise TinRefused(_("This kind of number is not issued by the country you chose."))
    try:
        if kind == TinKind.GB_NINO:
            compact = re.sub(r"[\s-]", "", raw).upper()
            if not _NINO.match(compact):
                raise ValidationError()
            return CheckedTin(number=compact, kind=kind, country=country)
        if kind in _STDNUM:
            module = __import__(_STDNUM[kind], fromlist=["validate"])
        elif kind == TinKind.OTHER and country in EU_TIN_MODULES:
            module = get_cc_module(country.lower(), EU_TIN_MODULES[country])
        else:
            compact = re.sub(r"[\s./-]", "", raw).upper()
            if not re.fullmatch(r"[A-Z0-9]{4,20}", compact):
                raise ValidationError()
            return CheckedTin(number=compact, kind=kind, country=country)
        return CheckedTin(number=module.validate(raw), kind=kind, country=country)
    except ValidationError:
        example = EXAMPLES.get(kind)
        if example:
            raise TinRefused(
                _("This is not a valid %(kind)s. It looks like %(example)s.")
                % {"kind": TinKind(kind).label, "example": example}
            ) from None
        raise TinRefused(_("This is not a valid tax identification number for that country.")) from None
