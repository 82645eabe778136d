"""JoyBack is one platform operator: a person paid through two brands (a participant at each) is
one reportable seller and one 1099 payee, matched by their TIN as issued, with the consideration
summed per quarter; people who only look alike (or have no TIN) are never merged."""

import dataclasses

from lxml import etree

from payouts.taxreports.dpi import DPI, dpi_xml
from payouts.taxreports.fire import fire_file
from payouts.taxreports.records import sellers_merged
from tests.payouts.taxreports.records_fixtures import PEOPLE, message, row

NS = {"dpi": DPI}


def at_another_brand(seller, **changes):
    return dataclasses.replace(seller, key=f"{seller.key}-b", **changes)


def test_the_same_tin_at_two_brands_is_one_seller_with_the_sum():
    first = row("DE", consideration=(100, 0, 0, 5), doc="1")
    second = dataclasses.replace(
        row("DE", consideration=(1, 2, 0, 0), doc="2"),
        # As typed at the second brand: the same number with spaces, a different bank account.
        seller=at_another_brand(PEOPLE["DE"], tin="860 957 427 19", iban="DE02120300000000202051"),
    )
    merged = sellers_merged([first, second])
    assert len(merged) == 1
    assert merged[0].consideration == (101, 2, 0, 5)
    assert merged[0].activities == (2, 1, 0, 1)
    assert merged[0].doc_ref_id == first.doc_ref_id
    assert merged[0].merged_refs == (first.doc_ref_id, second.doc_ref_id)

    document = etree.fromstring(dpi_xml(message=message("dac7", merged)))
    assert len(document.findall("dpi:DPIBody/dpi:ReportableSeller", namespaces=NS)) == 1


def test_different_people_and_people_without_a_tin_never_merge():
    lucia = row("ES", doc="1")
    namesake = dataclasses.replace(row("ES", doc="2"), seller=at_another_brand(PEOPLE["ES"], tin="X1234567L"))
    untaxed = [
        dataclasses.replace(row("DE", doc=str(n)), seller=at_another_brand(PEOPLE["DE"], tin=""))
        for n in (3, 4)
    ]
    same_number_elsewhere = dataclasses.replace(
        row("GB", doc="5"), seller=at_another_brand(PEOPLE["GB"], tin="12345678Z", tin_country="GB")
    )
    rows = [lucia, namesake, *untaxed, same_number_elsewhere]
    assert sellers_merged(rows) == rows


def test_one_person_in_two_currencies_stays_one_row_per_currency():
    euros = row("DE", doc="1")
    pounds = dataclasses.replace(row("DE", currency="GBP", doc="2"), seller=at_another_brand(PEOPLE["DE"]))
    assert sellers_merged([euros, pounds]) == [euros, pounds]


def test_a_1099_payee_paid_by_two_brands_is_one_form_over_the_threshold_on_the_sum():
    # $1,200 at each brand: neither reaches the $2,000 threshold alone, the person does.
    wei = row("US", currency="USD", consideration=(120_000, 0, 0, 0), doc="1")
    again = dataclasses.replace(
        row("US", currency="USD", consideration=(0, 120_000, 0, 0), doc="2"),
        seller=at_another_brand(PEOPLE["US"], tin="123456789"),
    )
    records = fire_file(message=message("us", sellers_merged([wei, again]))).decode().split("\r\n")
    assert [record[:1] for record in records if record] == ["T", "A", "B", "C", "F"]
    payee = next(record for record in records if record.startswith("B"))
    assert payee[54:66] == "000000240000"
