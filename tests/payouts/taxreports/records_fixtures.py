"""People and an operator as the report writers take them, for the writers' tests."""

import datetime

from payouts.taxreports.records import (
    Address,
    Jurisdiction,
    PlatformOperator,
    ReportMessage,
    Seller,
    SellerRow,
)

OPERATOR = PlatformOperator(
    name="JoyBack GmbH",
    country="DE",
    tin="DE123456789",
    address=Address(country="DE", city="Berlin", street="Torstraße 1", postcode="10119"),
    business_name="JoyBack",
    hmrc_operator_id="XEDPI2078675698",
    irs_tcc="12ABC",
    contact_name="Rita Staff",
    contact_phone="+1 415 555 0100",
    contact_email="tax@joyback.example",
    us_ein="12-3456789",
    us_address=Address(
        country="US", city="San Francisco", street="1 Market St", postcode="94105", region="CA"
    ),
)

PEOPLE = {
    "DE": Seller(
        key="P-DE-1",
        first_name="Jürgen",
        last_name="Groß",
        address=Address(country="DE", city="München", street="Leopoldstraße 7", postcode="80802"),
        tin="86095742719",
        tin_country="DE",
        birth_date=datetime.date(1990, 4, 1),
        iban="DE89370400440532013000",
        language="de",
    ),
    "ES": Seller(
        key="P-ES-1",
        first_name="Lucía",
        last_name="Núñez",
        address=Address(country="ES", city="Madrid", street="Calle Mayor 1", postcode="28013"),
        tin="12345678Z",
        tin_country="ES",
        birth_date=datetime.date(1995, 12, 31),
        iban="ES9121000418450200051332",
        language="es",
    ),
    "GB": Seller(
        key="P-GB-1",
        first_name="Amy",
        last_name="O'Brien",
        address=Address(country="GB", city="London", street="1 High St", postcode="N1 9GU"),
        tin="AB123456C",
        tin_country="GB",
        birth_date=datetime.date(1988, 7, 9),
        iban="GB33BUKB20201555555555",
        language="en",
    ),
    "US": Seller(
        key="P-US-1",
        first_name="Wei",
        last_name="Zhang",
        address=Address(
            country="US", city="Austin", street="500 Congress Ave", postcode="78701", region="TX"
        ),
        tin="123-45-6789",
        tin_country="US",
        birth_date=datetime.date(1992, 2, 29),
        language="zh-hans",
    ),
}


def message(jurisdiction, rows, **overrides):
    fields = dict(
        jurisdiction=jurisdiction,
        year=2026,
        operator=OPERATOR,
        message_ref_id="DE2026DE-JOYBACK-1",
        timestamp=datetime.datetime(2027, 1, 15, 9, 30, tzinfo=datetime.UTC),
        operator_doc_ref_id="DE2026DE-JOYBACK-1-PO",
        rows=tuple(rows),
        receiving_country="DE",
    )
    fields.update(overrides)
    return ReportMessage(**fields)


def row(country, *, currency="EUR", consideration=(12_345, 0, 50, 99_999), doc="1", **kw):
    return SellerRow(
        seller=PEOPLE[country],
        currency=currency,
        consideration=consideration,
        activities=tuple(1 if amount else 0 for amount in consideration),
        doc_ref_id=f"DE2026DE-JOYBACK-1-{country}-{doc}",
        **kw,
    )


__all__ = ["OPERATOR", "PEOPLE", "Jurisdiction", "message", "row"]
