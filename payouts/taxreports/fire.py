"""The 1099-NEC as an IRS Publication 1220 file for FIRE: fixed-length 750-character records, a
transmitter "T", one payer "A", a payee "B" per person, the payer's end "C" and the end of
transmission "F". A pure function from a `ReportMessage` to bytes.

Why this format and not the IRIS CSV: Publication 1220 states every field's position, width and
fill, so the tests check each one (`FIELDS` below is the layout, 0-based starts, as Publication 1220
and moov-io/irs's `pkg/config/specification.go` give them), while the IRIS portal's CSV template
has no published schema to check a file against. The IRS is moving information returns from FIRE
to IRIS; the writer takes the same `ReportMessage`, so an IRIS writer is a second serializer of
the same rows, not a change to the reports (docs/design.md, "Tax reports").

Only USD is filed (box 1 is dollars and cents); a person paid in another currency is listed as
needing review and left out. Box 1 only counts when the year's total reaches the threshold
(`nec_threshold`).
"""

import unicodedata

from payouts.taxreports.records import Jurisdiction, ReportMessage, SellerRow

RECORD = 750
ALPHA, NUMBER = "a", "n"  # left-justified blank-filled, right-justified zero-filled

# name: (start, length, kind); the spaces between them are blank.
FIELDS = {
    "T": {
        "record_type": (0, 1, ALPHA),
        "payment_year": (1, 4, NUMBER),
        "prior_year": (5, 1, ALPHA),
        "tin": (6, 9, NUMBER),
        "tcc": (15, 5, ALPHA),
        "test_file": (27, 1, ALPHA),
        "foreign_entity": (28, 1, ALPHA),
        "transmitter_name": (29, 40, ALPHA),
        "company_name": (109, 40, ALPHA),
        "company_address": (189, 40, ALPHA),
        "company_city": (229, 40, ALPHA),
        "company_state": (269, 2, ALPHA),
        "company_zip": (271, 9, ALPHA),
        "total_payees": (295, 8, NUMBER),
        "contact_name": (303, 40, ALPHA),
        "contact_phone": (343, 15, ALPHA),
        "contact_email": (358, 50, ALPHA),
        "sequence": (499, 8, NUMBER),
        "vendor_indicator": (517, 1, ALPHA),
    },
    "A": {
        "record_type": (0, 1, ALPHA),
        "payment_year": (1, 4, NUMBER),
        "cfsf": (5, 1, ALPHA),
        "tin": (11, 9, NUMBER),
        "name_control": (20, 4, ALPHA),
        "last_filing": (24, 1, ALPHA),
        "type_of_return": (25, 2, ALPHA),
        "amount_codes": (27, 16, ALPHA),
        "foreign_entity": (51, 1, ALPHA),
        "payer_name": (52, 40, ALPHA),
        "payer_name_2": (92, 40, ALPHA),
        "transfer_agent": (132, 1, ALPHA),
        "payer_address": (133, 40, ALPHA),
        "payer_city": (173, 40, ALPHA),
        "payer_state": (213, 2, ALPHA),
        "payer_zip": (215, 9, ALPHA),
        "payer_phone": (224, 15, ALPHA),
        "sequence": (499, 8, NUMBER),
    },
    "B": {
        "record_type": (0, 1, ALPHA),
        "payment_year": (1, 4, NUMBER),
        "corrected": (5, 1, ALPHA),
        "name_control": (6, 4, ALPHA),
        "type_of_tin": (10, 1, ALPHA),
        "tin": (11, 9, NUMBER),
        "account_number": (20, 20, ALPHA),
        **{f"amount_{code}": (54 + 12 * i, 12, NUMBER) for i, code in enumerate("123456789ABCDEFGHJ")},
        "foreign_country": (286, 1, ALPHA),
        "payee_name": (287, 40, ALPHA),
        "payee_name_2": (327, 40, ALPHA),
        "payee_address": (367, 40, ALPHA),
        "payee_city": (447, 40, ALPHA),
        "payee_state": (487, 2, ALPHA),
        "payee_zip": (489, 9, ALPHA),
        "sequence": (499, 8, NUMBER),
        # Positions 544-750 for Form 1099-NEC.
        "second_tin_notice": (543, 1, ALPHA),
        "direct_sales": (546, 1, ALPHA),
        "state_tax_withheld": (722, 12, NUMBER),
        "local_tax_withheld": (734, 12, NUMBER),
        "cfsf_code": (746, 2, ALPHA),
    },
    "C": {
        "record_type": (0, 1, ALPHA),
        "number_of_payees": (1, 8, NUMBER),
        **{f"total_{code}": (15 + 18 * i, 18, NUMBER) for i, code in enumerate("123456789ABCDEFGHJ")},
        "sequence": (499, 8, NUMBER),
    },
    "F": {
        "record_type": (0, 1, ALPHA),
        "number_of_a_records": (1, 8, NUMBER),
        "zeros": (9, 21, NUMBER),
        "total_payees": (49, 8, NUMBER),
        "sequence": (499, 8, NUMBER),
    },
}


class FireInvalid(Exception):
    pass


def nec_threshold(year: int) -> int:
    """Box 1's reporting threshold in cents: $600 until 2025, $2,000 for payments from 2026 on."""
    return 2_000_00 if year >= 2026 else 600_00


def _ascii(value) -> str:
    text = unicodedata.normalize("NFKD", str(value)).encode("ascii", "ignore").decode()
    return " ".join(text.upper().split())


def _digits(value) -> str:
    return "".join(char for char in str(value) if char.isdigit())


def fire_record(kind: str, values: dict) -> str:
    """One 750-character record; a value too long for its field is refused, never cut silently
    where it is a number."""
    line = [" "] * RECORD
    layout = FIELDS[kind]
    for name, value in values.items():
        start, length, fill = layout[name]
        if fill == NUMBER:
            text = _digits(value)
            if len(text) > length:
                raise FireInvalid(f"{kind}.{name}: {value} does not fit in {length} digits")
            text = text.rjust(length, "0")
        else:
            text = _ascii(value)[:length].ljust(length)
        line[start : start + length] = text
    return "".join(line)


def name_control(last_name: str) -> str:
    """The first four letters of the surname, as the IRS matches a TIN to a name."""
    letters = "".join(char for char in _ascii(last_name) if char.isalnum() or char in "-&")
    return letters[:4]


def fire_rows(message: ReportMessage) -> list[SellerRow]:
    """The rows a 1099-NEC is filed for: paid in USD and at least the year's threshold."""
    return [row for row in message.rows if row.currency == "USD" and row.total >= nec_threshold(message.year)]


def fire_file(*, message: ReportMessage, test: bool = False) -> bytes:
    if message.jurisdiction != Jurisdiction.US:
        raise ValueError("a 1099-NEC file is for the US")
    operator = message.operator
    payer = operator.us_address
    if payer is None or len(_digits(operator.us_ein)) != 9 or len(operator.irs_tcc) != 5:
        raise FireInvalid("the US payer needs an EIN, a TCC and a US address (TAX_US_* settings)")
    rows = fire_rows(message)
    year = message.year
    records = [
        fire_record(
            "T",
            {
                "record_type": "T",
                "payment_year": year,
                "tin": operator.us_ein,
                "tcc": operator.irs_tcc,
                "test_file": "T" if test else "",
                "transmitter_name": operator.name,
                "company_name": operator.name,
                "company_address": payer.street,
                "company_city": payer.city,
                "company_state": payer.region,
                "company_zip": _digits(payer.postcode),
                "total_payees": len(rows),
                "contact_name": operator.contact_name,
                "contact_phone": _digits(operator.contact_phone),
                "contact_email": operator.contact_email.upper(),
                "sequence": 1,
                "vendor_indicator": "I",  # software written in-house
            },
        ),
        fire_record(
            "A",
            {
                "record_type": "A",
                "payment_year": year,
                "tin": operator.us_ein,
                "type_of_return": "NE",
                "amount_codes": "14",  # box 1 compensation, box 4 federal income tax withheld
                "payer_name": operator.name,
                "transfer_agent": "0",
                "payer_address": payer.street,
                "payer_city": payer.city,
                "payer_state": payer.region,
                "payer_zip": _digits(payer.postcode),
                "payer_phone": _digits(operator.contact_phone),
                "sequence": 2,
            },
        ),
    ]
    total_paid = total_withheld = 0
    for sequence, row in enumerate(rows, start=3):
        seller = row.seller
        withheld = sum(row.taxes)
        total_paid += row.total
        total_withheld += withheld
        records.append(
            fire_record(
                "B",
                {
                    "record_type": "B",
                    "payment_year": year,
                    "corrected": "G" if row.doc_type == "OECD2" else "",
                    "name_control": name_control(seller.last_name),
                    "type_of_tin": "2",  # an individual's SSN or ITIN
                    "tin": seller.tin,
                    "account_number": seller.key,
                    "amount_1": row.total,
                    "amount_4": withheld,
                    "payee_name": f"{seller.first_name} {seller.last_name}",
                    "payee_address": seller.address.street,
                    "payee_city": seller.address.city,
                    "payee_state": seller.address.region,
                    "payee_zip": _digits(seller.address.postcode),
                    "sequence": sequence,
                    "state_tax_withheld": 0,
                    "local_tax_withheld": 0,
                },
            )
        )
    count = len(rows)
    records.append(
        fire_record(
            "C",
            {
                "record_type": "C",
                "number_of_payees": count,
                "total_1": total_paid,
                "total_4": total_withheld,
                "sequence": count + 3,
            },
        )
    )
    records.append(
        fire_record(
            "F",
            {
                "record_type": "F",
                "number_of_a_records": 1,
                "zeros": 0,
                "total_payees": count,
                "sequence": count + 4,
            },
        )
    )
    for record in records:
        if len(record) != RECORD:
            raise FireInvalid(f"a {record[0]} record is {len(record)} characters, not {RECORD}")
    return ("\r\n".join(records) + "\r\n").encode("ascii")
