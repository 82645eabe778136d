"""Schema validation of bank messages: the reference's examples pass, bad files are refused by line."""

import re
from pathlib import Path

import pytest
from lxml import etree

from payouts.iso20022.types import SchemaError
from payouts.iso20022.validate import MESSAGES, XSD_DIR, hardened_parser, schema_for, xsd_validate

REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference" / "iso20022-payouts.md"


def reference_examples() -> list[tuple[str, bytes]]:
    text = REFERENCE.read_text()
    found = []
    for block in re.findall(r"```xml\n(.*?)```", text, re.S):
        if block.startswith("<?xml"):
            message = re.search(r'xmlns="urn:iso:std:iso:20022:tech:xsd:([a-z0-9.]+)"', block).group(1)
            found.append((message, block.encode()))
    return found


@pytest.mark.skipif(
    not REFERENCE.is_file(), reason="the shared reference documents are not beside the project"
)
def test_the_reference_examples_are_valid():
    examples = reference_examples()

    assert {message for message, _ in examples} >= {"pain.001.001.09", "pain.002.001.10", "camt.054.001.08"}
    for message, xml in examples:
        xsd_validate(xml, message)


def test_every_shipped_schema_loads_once_per_thread():
    for message in MESSAGES:
        if (XSD_DIR / f"{message}.xsd").is_file():
            assert schema_for(message) is schema_for(message)


def test_an_invalid_file_is_refused_with_its_line_and_reason():
    xml = (
        b'<?xml version="1.0" encoding="UTF-8"?>\n'
        b'<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09">\n'
        b"<CstmrCdtTrfInitn>\n"
        b"<Surprise/>\n"
        b"</CstmrCdtTrfInitn></Document>"
    )
    with pytest.raises(SchemaError) as refused:
        xsd_validate(xml, "pain.001.001.09")

    assert refused.value.line == 4
    assert "Element 'Surprise': This element is not expected. Expected is ( GrpHdr )" in str(refused.value)
    assert str(refused.value).startswith("Not a valid pain.001.001.09 message: line 4: ")


def test_broken_xml_is_refused_with_its_line():
    with pytest.raises(SchemaError, match="line 2: "):
        xsd_validate(b"<?xml version='1.0'?>\n<Document><Unclosed></Document>", "camt.054.001.08")


@pytest.mark.parametrize(
    "xml",
    [
        b'<!DOCTYPE d [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
        b'<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.002.001.10">&e;</Document>',
        b'<!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
        b'<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.002.001.10">&b;</Document>',
    ],
)
def test_entities_and_dtds_are_refused_not_resolved(xml):
    with pytest.raises(SchemaError, match="document type declaration"):
        xsd_validate(xml, "pain.002.001.10")


def test_the_hardened_parser_resolves_no_external_entity():
    xml = b'<!DOCTYPE d [<!ENTITY e SYSTEM "file:///etc/hostname">]><d>&e;</d>'

    root = etree.fromstring(xml, hardened_parser())

    assert etree.tostring(root) == b"<d>&e;</d>"  # left as a reference, the file never read


def test_an_unknown_message_or_missing_schema_is_named():
    with pytest.raises(SchemaError, match=r"pain.008.001.08 is not a message this application validates"):
        xsd_validate(b"<x/>", "pain.008.001.08")


def test_every_message_read_or_written_has_its_official_schema_installed():
    for message in MESSAGES:
        assert (XSD_DIR / f"{message}.xsd").is_file(), message
        schema_for(message)  # parses
