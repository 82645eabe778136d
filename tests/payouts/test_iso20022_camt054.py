"""camt.054.001.08 notifications the sandbox bank sends: bookings, batch bookings and returns."""

import datetime

import pytest
from lxml import etree

from payouts.iso20022.camt054 import camt054_xml
from payouts.iso20022.types import Entry, EntryDetail, Iso20022Error
from payouts.iso20022.validate import xsd_validate

NS = {"c": "urn:iso:std:iso:20022:tech:xsd:camt.054.001.08"}
CREATED = datetime.datetime(2026, 1, 14, 10, 5, tzinfo=datetime.UTC)
DAY = datetime.date(2026, 1, 14)
ACCOUNT = "DE89370400440532013000"


def notification(entries, **changes):
    arguments = {"msg_id": "NTF-20260114-0042", "created_at": CREATED, "account_iban": ACCOUNT}
    return camt054_xml(**(arguments | {"entries": entries} | changes))


def texts(root, path):
    return [element.text for element in root.iterfind(path, NS)]


def test_a_batch_booking_is_one_debit_entry_with_its_batch_and_every_payout():
    payouts = tuple(
        EntryDetail(
            end_to_end_id=f"PO-{n}",
            amount_minor=100 * n,
            msg_id="JOYBACK-ABC-1",
            pmt_inf_id="JOYBACK-ABC-1-1",
            instr_id=f"PO-{n}",
            creditor_name="Zoë Łukasiewicz",
            creditor_iban="NL91ABNA0417164300",
            remittance=f"JoyBack reward {n}",
        )
        for n in range(1, 51)
    )
    entry = Entry(
        amount_minor=sum(p.amount_minor for p in payouts),
        currency="EUR",
        credit=False,
        booking_date=DAY,
        account_servicer_ref="BANKREF-7781",
        details=payouts,
        batch_msg_id="JOYBACK-ABC-1",
        batch_pmt_inf_id="JOYBACK-ABC-1-1",
    )

    xml = notification([entry])

    xsd_validate(xml, "camt.054.001.08")
    root = etree.fromstring(xml)
    assert texts(root, ".//c:Ntry/c:Amt") == ["1275.00"]
    assert texts(root, ".//c:Ntry/c:CdtDbtInd") == ["DBIT"]
    assert texts(root, ".//c:Ntry/c:Sts/c:Cd") == ["BOOK"]
    assert texts(root, ".//c:BkTxCd/c:Domn/c:Fmly/c:SubFmlyCd") == ["ESCT"]
    assert texts(root, ".//c:Btch/c:PmtInfId") == ["JOYBACK-ABC-1-1"]
    assert texts(root, ".//c:Btch/c:NbOfTxs") == ["50"] and texts(root, ".//c:Btch/c:TtlAmt") == ["1275.00"]
    assert len(root.findall(".//c:TxDtls", NS)) == 50
    assert texts(root, ".//c:TxDtls/c:Refs/c:EndToEndId")[:2] == ["PO-1", "PO-2"]
    assert texts(root, ".//c:TxDtls/c:Amt")[:2] == ["1.00", "2.00"]
    assert set(texts(root, ".//c:TxDtls/c:RltdPties/c:Cdtr/c:Pty/c:Nm")) == {"Zoe Lukasiewicz"}


@pytest.mark.parametrize("reason", ["AC01", "AC04", "MD07", "MS03"])
def test_a_returned_payout_is_a_credit_with_its_return_reason(reason):
    entry = Entry(
        amount_minor=30000,
        currency="EUR",
        credit=True,
        booking_date=DAY,
        account_servicer_ref="BANKREF-7802",
        details=(
            EntryDetail(end_to_end_id="PO-131", amount_minor=30000, return_reason=reason, return_info="x"),
        ),
        additional_info="SEPA return PO-131",
    )

    xml = notification([entry])

    xsd_validate(xml, "camt.054.001.08")
    root = etree.fromstring(xml)
    assert texts(root, ".//c:Ntry/c:CdtDbtInd") == ["CRDT"]
    assert texts(root, ".//c:BkTxCd/c:Domn/c:Fmly/c:SubFmlyCd") == ["RRTN"]
    assert texts(root, ".//c:TxDtls/c:RtrInf/c:Rsn/c:Cd") == [reason]
    assert texts(root, ".//c:TxDtls/c:CdtDbtInd") == ["CRDT"]
    assert texts(root, ".//c:AddtlNtryInf") == ["SEPA return PO-131"]


def test_single_instant_payouts_are_one_entry_each():
    entries = [
        Entry(
            amount_minor=150,
            currency="EUR",
            credit=False,
            booking_date=DAY,
            account_servicer_ref=f"BANKREF-{n}",
            details=(EntryDetail(end_to_end_id=f"PO-{n}", amount_minor=150, instant=True),),
        )
        for n in range(3)
    ]

    xml = notification(entries)

    xsd_validate(xml, "camt.054.001.08")
    root = etree.fromstring(xml)
    assert len(root.findall(".//c:Ntry", NS)) == 3
    assert texts(root, ".//c:TxDtls/c:LclInstrm/c:Cd") == ["INST"] * 3


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"amount_minor": 0}, "positive whole number of cents"),
        ({"currency": "USD"}, "only EUR entries"),
        ({"amount_minor": 999}, "do not add up"),
        ({"status": "DONE"}, "'DONE' is not an entry status"),
        ({"details": (EntryDetail("PO-1", 500, return_reason="XX99"),)}, "not a SEPA return reason"),
    ],
)
def test_bad_entries_are_refused_with_a_clear_message(change, message):
    values = {
        "amount_minor": 500,
        "currency": "EUR",
        "credit": False,
        "booking_date": DAY,
        "account_servicer_ref": "BANKREF-1",
        "details": (EntryDetail("PO-1", 500),),
    }
    with pytest.raises(Iso20022Error, match=message):
        notification([Entry(**(values | change))])


def test_a_bad_account_is_refused():
    entry = Entry(500, "EUR", False, DAY, "BANKREF-1")
    with pytest.raises(Iso20022Error, match="account IBAN 'DE00' is not a valid SEPA IBAN"):
        notification([entry], account_iban="DE00")
