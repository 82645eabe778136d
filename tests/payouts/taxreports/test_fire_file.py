"""The 1099-NEC file as Publication 1220 lays it out: every record 750 characters, each field at its
position and width, the payer's totals equal to its payees', and nothing filed below the
threshold or in another currency than dollars."""

import pytest

from payouts.taxreports.fire import (
    FIELDS,
    RECORD,
    FireInvalid,
    fire_file,
    fire_record,
    name_control,
    nec_threshold,
)
from payouts.taxreports.records import Jurisdiction
from tests.payouts.taxreports.records_fixtures import message, row


def field(record: str, kind: str, name: str) -> str:
    start, length, _ = FIELDS[kind][name]
    return record[start : start + length]


def us_file(rows):
    return fire_file(message=message(Jurisdiction.US, rows), test=True).decode("ascii").split("\r\n")[:-1]


def test_the_layout_fields_never_overlap_and_stay_inside_the_record():
    for kind, layout in FIELDS.items():
        taken = set()
        for name, (start, length, _) in layout.items():
            span = set(range(start, start + length))
            assert not span & taken, f"{kind}.{name} overlaps"
            assert start + length <= RECORD
            taken |= span


def test_a_year_with_one_person_above_the_threshold():
    wei = row("US", currency="USD", consideration=(100_000, 50_000, 50_000, 25))
    records = us_file([wei])
    assert [r[0] for r in records] == ["T", "A", "B", "C", "F"]
    assert all(len(r) == RECORD for r in records)
    t, a, b, c, f = records
    assert field(t, "T", "payment_year") == "2026"
    assert field(t, "T", "test_file") == "T"
    assert field(t, "T", "tcc") == "12ABC"
    assert field(t, "T", "total_payees") == "00000001"
    assert field(a, "A", "tin") == "123456789"
    assert field(a, "A", "type_of_return") == "NE"
    assert field(b, "B", "tin") == "123456789"
    assert field(b, "B", "name_control") == "ZHAN"
    assert field(b, "B", "amount_1") == "000000200025"  # $2,000.25 in cents, right-justified
    assert field(b, "B", "payee_state") == "TX"
    assert field(b, "B", "payee_zip") == "78701    "
    assert field(c, "C", "number_of_payees") == "00000001"
    assert field(c, "C", "total_1") == "000000000000200025"
    assert field(f, "F", "total_payees") == "00000001"
    assert [field(r, r[0], "sequence") for r in records] == [f"{n:08d}" for n in range(1, 6)]


def test_below_the_threshold_or_not_in_dollars_no_form_is_filed():
    assert nec_threshold(2025) == 600_00 and nec_threshold(2026) == 2_000_00
    below = row("US", currency="USD", consideration=(199_999, 0, 0, 0))
    euros = row("US", currency="EUR", consideration=(900_000, 0, 0, 0))
    _t, _a, c, _f = us_file([below, euros])
    assert field(c, "C", "number_of_payees") == "00000000"
    assert field(c, "C", "total_1") == "0" * 18


def test_a_number_too_long_for_its_field_is_refused_not_cut():
    with pytest.raises(FireInvalid):
        fire_record("B", {"amount_1": 10**12})


def test_names_are_written_in_the_irss_characters():
    assert name_control("O'Brien") == "OBRI"
    assert name_control("Groß") == "GRO"
    assert field(fire_record("B", {"payee_name": "Jürgen Groß"}), "B", "payee_name").strip() == "JURGEN GRO"
