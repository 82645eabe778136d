"""The OECD DPI XML (schema v1.0, payouts/taxreports/xsd/) for DAC7 and for HMRC: one pure function from
a `ReportMessage` to bytes, validated against the official schema before anyone sees it.

The same schema serves both: DAC7 files carry MessageType "DAC7" and go to the operator's Member
State (transmitting and receiving country both that State); HMRC's carry "DPI", GB as both
countries, HMRC's platform operator ID as SendingEntityIN and a MessageRefId that starts with
GB<year>GB-<operator ID> (as HMRC's own service writes it, hmrc/digital-platform-reporting).

Amounts are `MonAmnt_Type`, an xsd:integer with a currCode: whole units of the currency each
amount was paid in, so the minor units the ledger holds are rounded half up per quarter here, and
the rows the report keeps stay in minor units (the reconciliation with the ledger is to the cent
on those, the file carries what the schema can).
"""

import threading
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from lxml import etree

from joyback.money import to_major
from payouts.taxreports.records import Jurisdiction, ReportMessage, SellerRow

XSD = Path(__file__).resolve().parent / "xsd" / "DPIXML_v1.0.xsd"
DPI = "urn:oecd:ties:dpi:v1"
STF = "urn:oecd:ties:dpistf:v1"
NSMAP = {"dpi": DPI, "stf": STF}

_local = threading.local()


class DpiInvalid(Exception):
    """The file the data makes is not one the schema accepts: it is never offered."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


def dpi_schema() -> etree.XMLSchema:
    # lxml schemas are not shared between threads; each thread parses this one once.
    schema = getattr(_local, "schema", None)
    if schema is None:
        schema = _local.schema = etree.XMLSchema(etree.parse(str(XSD)))
    return schema


def dpi_validate(xml: bytes) -> list[str]:
    """The schema's complaints about a file, empty when it is valid."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    try:
        document = etree.fromstring(xml, parser)
    except etree.XMLSyntaxError as error:
        return [str(error)]
    schema = dpi_schema()
    if schema.validate(document):
        return []
    return [f"line {e.line}: {e.message}" for e in schema.error_log]


def whole_units(amount: int, currency: str) -> int:
    return int(to_major(amount, currency).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _el(parent, name: str, text: str | None = None, ns: str = DPI, **attrs):
    element = etree.SubElement(parent, f"{{{ns}}}{name}", {k: v for k, v in attrs.items() if v is not None})
    if text is not None:
        element.text = text
    return element


def _address(parent, address, *, legal_type: str):
    element = _el(parent, "Address", legalAddressType=legal_type)
    _el(element, "CountryCode", address.country)
    if not address.city:
        # The operator's address is kept on one line (INVOICE_ISSUER_ADDRESS): the free form.
        _el(element, "AddressFree", address.street)
        return
    fix = _el(element, "AddressFix")
    if address.street:
        _el(fix, "Street", address.street)
    if address.postcode:
        _el(fix, "PostCode", address.postcode)
    _el(fix, "City", address.city)
    if address.region:
        _el(fix, "CountrySubentity", address.region)


def _doc_spec(
    parent, *, doc_type: str, doc_ref_id: str, corr_message_ref_id: str = "", corr_doc_ref_id: str = ""
):
    spec = _el(parent, "DocSpec")
    _el(spec, "DocTypeIndic", doc_type, ns=STF)
    _el(spec, "DocRefId", doc_ref_id, ns=STF)
    if corr_message_ref_id:
        _el(spec, "CorrMessageRefId", corr_message_ref_id, ns=STF)
    if corr_doc_ref_id:
        _el(spec, "CorrDocRefId", corr_doc_ref_id, ns=STF)


def _quarters(parent, name: str, prefix: str, amounts, currency: str | None):
    element = _el(parent, name)
    for number, amount in enumerate(amounts, start=1):
        if currency is None:
            _el(element, f"{prefix}{number}", str(amount))
        else:
            _el(element, f"{prefix}{number}", str(whole_units(amount, currency)), currCode=currency)


def _seller(body, row: SellerRow):
    seller = row.seller
    element = _el(body, "ReportableSeller")
    standard = _el(_el(_el(element, "Identity"), "IndividualSeller"), "Standard")
    person = _el(standard, "IndSellerID")
    _el(person, "ResCountryCode", seller.residence or seller.address.country)
    _el(person, "TIN", seller.tin, issuedBy=seller.tin_country or None)
    name = _el(person, "Name", nameType="OECD202")
    _el(name, "FirstName", seller.first_name)
    _el(name, "LastName", seller.last_name)
    _address(person, seller.address, legal_type="OECD302")
    _el(_el(person, "BirthInfo"), "BirthDate", seller.birth_date.isoformat())
    if seller.iban:
        financial = _el(standard, "FinancialIdentifier")
        _el(financial, "Identifier", seller.iban, AccountNumberType="IBAN")
        _el(financial, "AccountHolderName", f"{seller.first_name} {seller.last_name}")
    activities = _el(element, "RelevantActivities")
    services = _el(activities, "PersonalServices")
    _quarters(services, "Consideration", "ConsQ", row.consideration, row.currency)
    _quarters(services, "NumberOfActivities", "NumbQ", row.activities, None)
    _quarters(services, "Fees", "FeesQ", row.fees, row.currency)
    _quarters(services, "Taxes", "TaxQ", row.taxes, row.currency)
    _doc_spec(
        element,
        doc_type=row.doc_type,
        doc_ref_id=row.doc_ref_id,
        corr_message_ref_id=row.corr_message_ref_id,
        corr_doc_ref_id=row.corr_doc_ref_id,
    )


def dpi_xml(*, message: ReportMessage) -> bytes:
    """The message as a DPI XML file; `DpiInvalid` when the schema refuses it."""
    if message.jurisdiction not in (Jurisdiction.DAC7, Jurisdiction.UK):
        raise ValueError(f"a DPI file is for DAC7 or the UK, not {message.jurisdiction}")
    uk = message.jurisdiction == Jurisdiction.UK
    operator = message.operator
    country = "GB" if uk else (message.receiving_country or operator.country)
    root = etree.Element(f"{{{DPI}}}DPI_OECD", nsmap=NSMAP, version="1.0")
    spec = _el(root, "MessageSpec")
    if uk:
        _el(spec, "SendingEntityIN", operator.hmrc_operator_id)
    _el(spec, "TransmittingCountry", country)
    _el(spec, "ReceivingCountry", country)
    _el(spec, "MessageType", "DPI" if uk else "DAC7")
    _el(spec, "MessageRefId", message.message_ref_id)
    # DPI403: nothing to report for the period; DPI402: corrections of what was sent.
    indic = "DPI403" if not message.rows else "DPI402" if message.correction else "DPI401"
    _el(spec, "MessageTypeIndic", indic)
    _el(spec, "ReportingPeriod", f"{message.year}-12-31")
    _el(spec, "Timestamp", message.timestamp.strftime("%Y-%m-%dT%H:%M:%S"))
    body = _el(root, "DPIBody")
    platform = _el(body, "PlatformOperator")
    _el(platform, "ResCountryCode", operator.country)
    _el(platform, "TIN", operator.tin, issuedBy=operator.country)
    _el(platform, "Name", operator.name)
    if operator.business_name:
        _el(platform, "PlatformBusinessName", operator.business_name)
    _address(platform, operator.address, legal_type="OECD304")
    _el(platform, "AssumedReporting", "false")
    _doc_spec(
        platform, doc_type="OECD0" if message.correction else "OECD1", doc_ref_id=message.operator_doc_ref_id
    )
    for row in message.rows:
        _seller(body, row)
    xml = etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)
    errors = dpi_validate(xml)
    if errors:
        raise DpiInvalid(errors)
    return xml
