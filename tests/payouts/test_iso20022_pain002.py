"""pain.002.001.10 status reports: what the sandbox bank writes, the payouts read back the same."""

import datetime

import pytest

from payouts.iso20022.pain002 import pain002_parse, pain002_xml
from payouts.iso20022.types import Iso20022Error, TxStatus
from payouts.iso20022.validate import xsd_validate

CREATED = datetime.datetime(2026, 1, 5, 9, 31, 12, tzinfo=datetime.timezone(datetime.timedelta(hours=1)))
NS = "urn:iso:std:iso:20022:tech:xsd:pain.002.001.10"


def report(transactions, **changes):
    arguments = {
        "msg_id": "STS-20260105-000987",
        "created_at": CREATED,
        "original_msg_id": "JOYBACK-ABCDEF234567-1",
        "original_pmt_inf_id": "JOYBACK-ABCDEF234567-1-1",
        "transactions": transactions,
    }
    return pain002_xml(**(arguments | changes))


def test_a_mixed_report_round_trips_with_each_status_reason_and_info():
    sent = [
        ("PO-1", "ACSC", "", ""),
        ("PO-2", "RJCT", "AC01", "Creditor IBAN invalid"),
        ("PO-3", "RJCT", "AC04", ""),
        ("PO-4", "RJCT", "AC06", "Account blocked"),
        ("PO-5", "RJCT", "AG01", ""),
        ("PO-6", "RJCT", "AM04", ""),
        ("PO-7", "RJCT", "AM05", "Duplicate"),
        ("PO-8", "RJCT", "MS03", ""),
        ("PO-9", "ACCC", "", ""),
        ("PO-10", "ACSP", "", ""),
        ("PO-11", "PDNG", "", "Further checks"),
    ]
    xml = report(sent)

    xsd_validate(xml, "pain.002.001.10")
    parsed = pain002_parse(xml)
    assert parsed.transactions == [TxStatus(*item) for item in sent]
    assert (parsed.msg_id, parsed.original_msg_id) == ("STS-20260105-000987", "JOYBACK-ABCDEF234567-1")
    assert parsed.original_msg_name == "pain.001.001.09"
    assert parsed.group_status == "PART"
    assert set(parsed.batch_of.values()) == {"JOYBACK-ABCDEF234567-1-1"}


def test_the_group_status_is_the_common_one_when_all_agree():
    parsed = pain002_parse(report([("PO-1", "ACSC", "", ""), ("PO-2", "ACSC", "", "")]))

    assert parsed.group_status == "ACSC"
    assert parsed.status_of("PO-1") == TxStatus("PO-1", "ACSC", "", "")


def test_a_group_rjct_rejects_every_transaction_whatever_they_say():
    xml = report(
        [("PO-1", "ACSC", "", ""), ("PO-2", "RJCT", "AC01", "")],
        group_status="RJCT",
        group_reason="AM04",
        group_info="Insufficient funds",
    )

    parsed = pain002_parse(xml)
    assert parsed.transactions == [
        TxStatus("PO-1", "RJCT", "AM04", "Insufficient funds"),
        TxStatus("PO-2", "RJCT", "AC01", "Insufficient funds"),
    ]
    # A payout of the file the report does not list is rejected too.
    assert parsed.status_of("PO-99") == TxStatus("PO-99", "RJCT", "AM04", "Insufficient funds")


def test_a_file_rejected_with_no_transaction_lines_rejects_each_payout_of_it():
    xml = report([], group_status="RJCT", group_reason="FF01", group_info="File format invalid")

    parsed = pain002_parse(xml)
    assert parsed.transactions == []
    assert parsed.status_of("PO-1", "JOYBACK-ABCDEF234567-1-1") == TxStatus(
        "PO-1", "RJCT", "FF01", "File format invalid"
    )


def test_the_lowest_level_present_wins():
    xml = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<Document xmlns="{NS}"><CstmrPmtStsRpt>'
        "<GrpHdr><MsgId>STS-1</MsgId><CreDtTm>2026-01-05T09:31:12+01:00</CreDtTm></GrpHdr>"
        "<OrgnlGrpInfAndSts><OrgnlMsgId>M-1</OrgnlMsgId><OrgnlMsgNmId>pain.001.001.09</OrgnlMsgNmId>"
        "<GrpSts>ACSP</GrpSts></OrgnlGrpInfAndSts>"
        "<OrgnlPmtInfAndSts><OrgnlPmtInfId>B-1</OrgnlPmtInfId><PmtInfSts>ACSC</PmtInfSts>"
        "<TxInfAndSts><OrgnlEndToEndId>PO-1</OrgnlEndToEndId></TxInfAndSts>"
        "<TxInfAndSts><OrgnlEndToEndId>PO-2</OrgnlEndToEndId><TxSts>RJCT</TxSts>"
        "<StsRsnInf><Rsn><Cd>AC04</Cd></Rsn><AddtlInf>Account</AddtlInf><AddtlInf>closed</AddtlInf>"
        "</StsRsnInf></TxInfAndSts>"
        "</OrgnlPmtInfAndSts>"
        "<OrgnlPmtInfAndSts><OrgnlPmtInfId>B-2</OrgnlPmtInfId><PmtInfSts>RJCT</PmtInfSts>"
        "<StsRsnInf><Rsn><Prtry>X123</Prtry></Rsn></StsRsnInf>"
        "<TxInfAndSts><OrgnlEndToEndId>PO-3</OrgnlEndToEndId><TxSts>ACSC</TxSts></TxInfAndSts>"
        "</OrgnlPmtInfAndSts>"
        "</CstmrPmtStsRpt></Document>"
    ).encode()

    parsed = pain002_parse(xml)
    assert parsed.transactions == [
        TxStatus("PO-1", "ACSC", "", ""),  # from its batch
        TxStatus("PO-2", "RJCT", "AC04", "Account closed"),  # its own
        TxStatus("PO-3", "RJCT", "X123", ""),  # a rejected batch rejects all in it
    ]
    assert parsed.status_of("PO-8", "B-1") == TxStatus("PO-8", "ACSC", "", "")
    assert parsed.status_of("PO-9", "B-2") == TxStatus("PO-9", "RJCT", "X123", "")
    assert parsed.status_of("PO-10", "B-3") == TxStatus("PO-10", "ACSP", "", "")


def test_transactions_of_several_batches_are_filed_under_their_own_batch():
    xml = report(
        [("PO-1", "ACSC", "", ""), ("PO-2", "RJCT", "AC01", "")],
        original_pmt_inf_id={"PO-1": "B-1", "PO-2": "B-2"},
    )

    assert pain002_parse(xml).batch_of == {"PO-1": "B-1", "PO-2": "B-2"}


def test_long_information_is_cut_to_105_characters_and_escaped():
    parsed = pain002_parse(report([("PO-1", "RJCT", "MS03", "Bank <said> & " + "x" * 200)]))

    assert parsed.transactions[0].info.startswith("Bank <said> & x")
    assert len(parsed.transactions[0].info) == 105


@pytest.mark.parametrize(
    ("transactions", "changes", "message"),
    [
        ([("PO-1", "DONE", "", "")], {}, "'DONE' is not a payment status code"),
        ([("PO-1", "RJCT", "account closed", "")], {}, "not a status reason code"),
        ([("PO-1", "ACSC", "", "")], {"group_status": "NOPE"}, "'NOPE' is not a payment status code"),
        ([("PO-1", "ACSC", "", "")], {"msg_id": "STS 1"}, "status report id 'STS 1' is not a valid"),
        ([("PO-1", "ACSC", "", "")], {"created_at": datetime.datetime(2026, 1, 5)}, "timezone-aware"),  # noqa: DTZ001
    ],
)
def test_the_writer_refuses_bad_input_with_a_clear_message(transactions, changes, message):
    with pytest.raises(Iso20022Error, match=message):
        report(transactions, **changes)


def test_the_parser_refuses_a_file_that_is_not_a_status_report():
    with pytest.raises(Iso20022Error, match=r"Not a valid pain.002.001.10 message: line \d+"):
        pain002_parse(b'<?xml version="1.0"?>\n<Document xmlns="urn:other"><X/></Document>')
