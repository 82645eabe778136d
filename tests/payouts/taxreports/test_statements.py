"""Each person's statement of what was reported, in their own language, as a PDF any reader opens."""

import pytest

from payouts.taxreports.records import Jurisdiction
from payouts.taxreports.statement import statement_pdf
from tests.payouts.taxreports.records_fixtures import OPERATOR, row


@pytest.mark.parametrize(
    ("country", "jurisdiction", "words"),
    [
        ("DE", Jurisdiction.DAC7, b"Deine Zahlungen 2026"),
        ("ES", Jurisdiction.DAC7, b"Tus pagos de 2026"),
        ("GB", Jurisdiction.UK, b"Your payments in 2026"),
        # Chinese is set in the reader's own CJK font, as UCS-2 hex: 您 is U+60A8.
        ("US", Jurisdiction.US, b"60A8"),
    ],
)
def test_a_statement_speaks_the_persons_language(country, jurisdiction, words):
    pdf = statement_pdf(row=row(country), operator=OPERATOR, jurisdiction=jurisdiction, year=2026)
    assert pdf.startswith(b"%PDF-1.4") and pdf.rstrip().endswith(b"%%EOF")
    assert words in pdf
    reference = row(country).doc_ref_id  # what the person quotes to have it corrected
    assert reference.encode() in pdf or "".join(f"{ord(c):04X}" for c in reference).encode() in pdf
