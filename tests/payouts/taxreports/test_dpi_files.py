"""The DPI XML files (DAC7 and HMRC's) against the OECD's own schema: HMRC's published samples pass
it, every file we write passes it, and a file the schema would refuse is never written."""

import datetime
import hashlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from payouts.taxreports import dpi
from payouts.taxreports.dpi import DpiInvalid, dpi_validate, dpi_xml, whole_units
from payouts.taxreports.records import Address, Jurisdiction, Seller
from tests.payouts.taxreports.records_fixtures import PEOPLE, message, row

XSD_DIR = Path(dpi.__file__).resolve().parent / "xsd"
NS = {"dpi": dpi.DPI, "stf": dpi.STF}


def test_the_vendored_schema_is_the_official_file_unchanged():
    readme = (XSD_DIR / "README.md").read_text()
    for path in sorted(XSD_DIR.glob("*.xsd")) + sorted((XSD_DIR / "examples").glob("*.xml")):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert digest in readme, f"{path.name} is not the file the README names"


@pytest.mark.parametrize("sample", sorted((XSD_DIR / "examples").glob("*.xml")), ids=lambda p: p.stem[-25:])
def test_hmrcs_published_samples_pass_our_validation(sample):
    assert dpi_validate(sample.read_bytes()) == []


def test_a_broken_sample_is_refused_with_the_schemas_words():
    sample = sorted((XSD_DIR / "examples").glob("*New*.xml"))[0].read_bytes()
    broken = sample.replace(
        b'<dpi:ConsQ1 currCode="GBP">2000</dpi:ConsQ1>', b"<dpi:ConsQ1>20.00</dpi:ConsQ1>"
    )
    errors = dpi_validate(broken)
    assert errors and any("ConsQ1" in error for error in errors)


def test_a_dac7_file_names_each_person_with_what_the_directive_asks():
    xml = dpi_xml(message=message(Jurisdiction.DAC7, [row("DE"), row("ES")]))
    document = etree.fromstring(xml)
    assert document.findtext("dpi:MessageSpec/dpi:MessageType", namespaces=NS) == "DAC7"
    assert document.findtext("dpi:MessageSpec/dpi:MessageTypeIndic", namespaces=NS) == "DPI401"
    assert document.findtext("dpi:MessageSpec/dpi:ReportingPeriod", namespaces=NS) == "2026-12-31"
    sellers = document.findall("dpi:DPIBody/dpi:ReportableSeller", namespaces=NS)
    assert len(sellers) == 2
    jurgen = sellers[0]
    person = "dpi:Identity/dpi:IndividualSeller/dpi:Standard/dpi:IndSellerID"
    assert jurgen.findtext(f"{person}/dpi:Name/dpi:FirstName", namespaces=NS) == "Jürgen"
    assert jurgen.find(f"{person}/dpi:TIN", namespaces=NS).get("issuedBy") == "DE"
    assert jurgen.findtext(f"{person}/dpi:BirthInfo/dpi:BirthDate", namespaces=NS) == "1990-04-01"
    iban = "dpi:Identity/dpi:IndividualSeller/dpi:Standard/dpi:FinancialIdentifier/dpi:Identifier"
    assert jurgen.findtext(iban, namespaces=NS) == "DE89370400440532013000"
    cons = jurgen.findall("dpi:RelevantActivities/dpi:PersonalServices/dpi:Consideration/*", namespaces=NS)
    # 123.45 -> 123, 0.50 -> 1 (half up), 999.99 -> 1000: whole euros, as MonAmnt_Type is an integer
    assert [(c.text, c.get("currCode")) for c in cons] == [
        ("123", "EUR"),
        ("0", "EUR"),
        ("1", "EUR"),
        ("1000", "EUR"),
    ]
    assert jurgen.findtext("dpi:DocSpec/stf:DocTypeIndic", namespaces=NS) == "OECD1"


def test_the_uk_file_is_hmrcs_variant_of_the_same_schema():
    xml = dpi_xml(
        message=message(
            Jurisdiction.UK,
            [row("GB", currency="GBP")],
            message_ref_id="GB2026GB-XEDPI2078675698-1",
            operator_doc_ref_id="GB2026GB-XEDPI2078675698-1_PO",
        )
    )
    document = etree.fromstring(xml)
    spec = document.find("dpi:MessageSpec", namespaces=NS)
    assert spec.findtext("dpi:SendingEntityIN", namespaces=NS) == "XEDPI2078675698"
    assert spec.findtext("dpi:TransmittingCountry", namespaces=NS) == "GB"
    assert spec.findtext("dpi:ReceivingCountry", namespaces=NS) == "GB"
    assert spec.findtext("dpi:MessageType", namespaces=NS) == "DPI"


def test_a_correction_replaces_the_row_it_names_and_resends_the_operator():
    corrected = row("DE", doc="2", doc_type="OECD2", corr_doc_ref_id="DE2026DE-JOYBACK-1-DE-1")
    document = etree.fromstring(dpi_xml(message=message(Jurisdiction.DAC7, [corrected], correction=True)))
    assert document.findtext("dpi:MessageSpec/dpi:MessageTypeIndic", namespaces=NS) == "DPI402"
    platform = document.find("dpi:DPIBody/dpi:PlatformOperator", namespaces=NS)
    assert platform.findtext("dpi:DocSpec/stf:DocTypeIndic", namespaces=NS) == "OECD0"
    seller = document.find("dpi:DPIBody/dpi:ReportableSeller", namespaces=NS)
    assert seller.findtext("dpi:DocSpec/stf:DocTypeIndic", namespaces=NS) == "OECD2"
    assert seller.findtext("dpi:DocSpec/stf:CorrDocRefId", namespaces=NS) == "DE2026DE-JOYBACK-1-DE-1"


def test_a_year_with_nobody_to_report_is_a_valid_nil_return():
    document = etree.fromstring(dpi_xml(message=message(Jurisdiction.DAC7, [])))
    assert document.findtext("dpi:MessageSpec/dpi:MessageTypeIndic", namespaces=NS) == "DPI403"


def test_data_the_schema_refuses_makes_no_file():
    too_long = PEOPLE["DE"].__class__(**{**PEOPLE["DE"].__dict__, "first_name": "J" * 201})
    bad = row("DE").__class__(**{**row("DE").__dict__, "seller": too_long})
    with pytest.raises(DpiInvalid) as refused:
        dpi_xml(message=message(Jurisdiction.DAC7, [bad]))
    assert any("FirstName" in error for error in refused.value.errors)


def test_amounts_round_half_up_to_whole_units_of_their_currency():
    assert whole_units(149, "EUR") == 1
    assert whole_units(150, "EUR") == 2
    assert whole_units(1_000, "JPY") == 1_000


names = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=60
)
amounts = st.tuples(*[st.integers(min_value=0, max_value=10**12)] * 4)


@settings(max_examples=40, deadline=None)
@given(
    first=names,
    last=names,
    city=names,
    consideration=amounts,
    fees=amounts,
    currency=st.sampled_from(["EUR", "GBP", "PLN", "SEK"]),
    born=st.dates(min_value=datetime.date(1900, 1, 1), max_value=datetime.date(2010, 12, 31)),
)
def test_every_file_written_passes_the_official_schema(
    first, last, city, consideration, fees, currency, born
):
    seller = Seller(
        key="P-1",
        first_name=first.strip() or "x",
        last_name=last.strip() or "y",
        address=Address(country="FR", city=city.strip() or "Paris", street="1 rue X", postcode="75001"),
        tin="1234567890123",
        tin_country="FR",
        birth_date=born,
    )
    person = row("DE").__class__(
        seller=seller, currency=currency, consideration=consideration, fees=fees, doc_ref_id="X-1"
    )
    assert dpi_validate(dpi_xml(message=message(Jurisdiction.DAC7, [person]))) == []
