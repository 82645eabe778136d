"""What the report writers take: plain data, so each writer is a pure function to bytes and the
tests give it any data without a database."""

import datetime
import re
from dataclasses import dataclass, field, replace

QUARTERS = 4


class Jurisdiction:
    """Where a report is filed, and in which format."""

    DAC7 = "dac7"  # the operator's EU Member State, DPI XML with MessageType DAC7
    UK = "uk"  # HMRC, DPI XML with MessageType DPI
    US = "us"  # IRS, 1099-NEC (Publication 1220 FIRE file)

    ALL = (DAC7, UK, US)


@dataclass(frozen=True)
class Address:
    country: str  # ISO 3166-1 alpha-2
    city: str
    street: str = ""
    postcode: str = ""
    region: str = ""  # a US state's two letters for the 1099

    def one_line(self) -> str:
        return ", ".join(
            part for part in (self.street, f"{self.postcode} {self.city}".strip(), self.country) if part
        )


@dataclass(frozen=True)
class PlatformOperator:
    """The operator filing: from settings (TAX_OPERATOR_*)."""

    name: str
    country: str
    tin: str
    address: Address
    business_name: str = ""
    # HMRC's platform operator ID (XEDPI + 10 digits), the SendingEntityIN of a UK file.
    hmrc_operator_id: str = ""
    # The IRS's Transmitter Control Code for FIRE, and a contact for the transmitter record.
    irs_tcc: str = ""
    contact_name: str = ""
    contact_phone: str = ""
    contact_email: str = ""
    # The US payer of a 1099 (an EIN and a US address), where the platform pays people in the US.
    us_ein: str = ""
    us_address: Address | None = None


@dataclass(frozen=True)
class Seller:
    """One person as the law asks for them; what is missing is listed by `missing()`."""

    key: str  # stable across years: the person's own reference at JoyBack
    first_name: str
    last_name: str
    address: Address | None
    tin: str
    tin_country: str
    birth_date: datetime.date | None
    iban: str = ""
    residence: str = ""  # country of residence (ISO 3166-1 alpha-2)
    language: str = "en"
    email: str = ""

    def missing(self, *, jurisdiction: str) -> list[str]:
        """The fields a report for this jurisdiction cannot be filed without."""
        out = []
        if not (self.first_name and self.last_name):
            out.append("name")
        if self.address is None or not self.address.city:
            out.append("address")
        if not self.tin:
            out.append("tin")
        if jurisdiction != Jurisdiction.US and self.birth_date is None:
            out.append("birth_date")
        if jurisdiction == Jurisdiction.US and (self.address is None or not self.address.region):
            out.append("address")
        return sorted(set(out))


@dataclass(frozen=True)
class SellerRow:
    """A person's year for one report: amounts in minor units of one currency, per quarter."""

    seller: Seller
    currency: str
    consideration: tuple[int, int, int, int]
    fees: tuple[int, int, int, int] = (0, 0, 0, 0)
    taxes: tuple[int, int, int, int] = (0, 0, 0, 0)
    activities: tuple[int, int, int, int] = (0, 0, 0, 0)
    doc_ref_id: str = ""
    # OECD1 new, OECD2 correction, OECD3 deletion; a correction or deletion names the row it replaces.
    doc_type: str = "OECD1"
    corr_doc_ref_id: str = ""
    corr_message_ref_id: str = ""
    # The DocRefIds of the rows (one per brand the person was paid through) summed into this one.
    merged_refs: tuple[str, ...] = ()

    @property
    def total(self) -> int:
        return sum(self.consideration)


def tax_identity(seller: Seller) -> tuple[str, str] | None:
    """Who a seller is for the authorities: the TIN as issued (its country and compact form). A
    seller without one has no identity to match on: a name or a birth date is never enough to say
    two rows are the same person, so such rows stay apart and staff see each."""
    number = re.sub(r"[^0-9A-Za-z]", "", seller.tin or "").upper()
    country = (seller.tin_country or "").upper()
    if not number or not country:
        return None
    return country, number


def _summed(*parts) -> tuple[int, int, int, int]:
    return tuple(sum(values) for values in zip(*parts, strict=True))


def sellers_merged(rows) -> list[SellerRow]:
    """One row per person: JoyBack is one platform operator, so a person paid through several
    brands (a participant, and a row, per brand) is one ReportableSeller and one 1099 payee, with
    the consideration, fees, taxes and activities summed per quarter. Rows are matched by
    `tax_identity`, within one currency and one kind of record (new data or a correction); the
    first row gives the person's details and the DocRefId, and the others are listed in
    `merged_refs`."""
    groups: dict[object, list[SellerRow]] = {}
    for number, row in enumerate(rows):
        identity = tax_identity(row.seller)
        key = (identity, row.currency, row.doc_type) if identity else ("alone", number)
        groups.setdefault(key, []).append(row)
    out = []
    for members in groups.values():
        first = members[0]
        if len(members) == 1:
            out.append(first)
            continue
        out.append(
            replace(
                first,
                consideration=_summed(*(row.consideration for row in members)),
                fees=_summed(*(row.fees for row in members)),
                taxes=_summed(*(row.taxes for row in members)),
                activities=_summed(*(row.activities for row in members)),
                merged_refs=tuple(row.doc_ref_id for row in members),
            )
        )
    return out


@dataclass(frozen=True)
class ReportMessage:
    """One file: the operator, the year, the rows, and how the message is named."""

    jurisdiction: str
    year: int
    operator: PlatformOperator
    message_ref_id: str
    timestamp: datetime.datetime
    operator_doc_ref_id: str
    rows: tuple[SellerRow, ...] = field(default_factory=tuple)
    # For a correction message: the operator element was sent before and is resent unchanged (OECD0).
    correction: bool = False
    # The receiving Member State of a DAC7 file (the operator's own, where it registered).
    receiving_country: str = ""
