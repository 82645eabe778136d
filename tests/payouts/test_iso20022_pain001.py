"""pain.001.001.09 files as a bank receives them: schema-valid, SEPA-clean, deterministic, split at a cap."""

import datetime
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree
from schwifty import IBAN

from payouts.iso20022.pain001 import pain001_files
from payouts.iso20022.text import name_latin
from payouts.iso20022.types import CreditTransfer, Debtor, Iso20022Error
from payouts.iso20022.validate import xsd_validate

NS = {"p": "urn:iso:std:iso:20022:tech:xsd:pain.001.001.09"}
PLATFORM = Debtor(name="JoyBack GmbH", iban="DE89 3704 0044 0532 0130 00", bic="COBADEFFXXX")
CREATED = datetime.datetime(2026, 1, 5, 9, 30, tzinfo=datetime.UTC)
EXECUTION = datetime.date(2026, 1, 6)
IBANS = ["NL91ABNA0417164300", "FR1420041010050500013M02606", "DE89370400440532013000", "BE68539007547034"]
SEPA_TEXT = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/-?:().,'+ ")


def transfer(n: int, **changes) -> CreditTransfer:
    values = {
        "end_to_end_id": f"PO-{n:06d}",
        "amount_minor": 150 + n,
        "currency": "EUR",
        "creditor_name": f"Person {n}",
        "creditor_iban": IBANS[n % len(IBANS)],
        "remittance": f"JoyBack reward {n}",
    }
    return CreditTransfer(**(values | changes))


def files(transfers, **changes):
    arguments = {
        "debtor": PLATFORM,
        "transfers": transfers,
        "msg_id_prefix": "JOYBACK",
        "created_at": CREATED,
        "execution_date": EXECUTION,
        "max_per_file": 1000,
    }
    return pain001_files(**(arguments | changes))


def parsed(file):
    return etree.fromstring(file.xml)


def texts(root, path):
    return [element.text for element in root.iterfind(path, NS)]


def test_a_batch_is_one_schema_valid_file_with_the_sepa_elements_a_bank_expects():
    [file] = files([transfer(1), transfer(2, creditor_bic="ABNANL2A", creditor_country="NL")])

    xsd_validate(file.xml, "pain.001.001.09")
    root = parsed(file)
    assert texts(root, ".//p:GrpHdr/p:MsgId") == [file.msg_id]
    assert texts(root, ".//p:GrpHdr/p:NbOfTxs") == ["2"] and texts(root, ".//p:GrpHdr/p:CtrlSum") == ["3.03"]
    assert texts(root, ".//p:CreDtTm") == ["2026-01-05T09:30:00+00:00"]
    assert texts(root, ".//p:PmtInf/p:PmtInfId") == list(file.pmt_inf_ids)
    assert texts(root, ".//p:PmtMtd") == ["TRF"] and texts(root, ".//p:BtchBookg") == ["true"]
    assert texts(root, ".//p:PmtTpInf/p:SvcLvl/p:Cd") == ["SEPA"]
    assert texts(root, ".//p:PmtTpInf/p:LclInstrm/p:Cd") == []
    assert texts(root, ".//p:ReqdExctnDt/p:Dt") == ["2026-01-06"]
    assert texts(root, ".//p:DbtrAcct/p:Id/p:IBAN") == ["DE89370400440532013000"]
    assert texts(root, ".//p:DbtrAgt/p:FinInstnId/p:BICFI") == ["COBADEFFXXX"]
    assert texts(root, ".//p:ChrgBr") == ["SLEV"]
    assert texts(root, ".//p:EndToEndId") == ["PO-000001", "PO-000002"]
    assert texts(root, ".//p:InstdAmt") == ["1.51", "1.52"]
    assert [e.get("Ccy") for e in root.iterfind(".//p:InstdAmt", NS)] == ["EUR", "EUR"]
    assert texts(root, ".//p:CdtrAgt/p:FinInstnId/p:BICFI") == ["ABNANL2A"]
    assert texts(root, ".//p:Cdtr/p:PstlAdr/p:Ctry") == ["NL"]
    assert texts(root, ".//p:CdtrAcct/p:Id/p:IBAN") == ["FR1420041010050500013M02606", IBANS[2]]
    assert texts(root, ".//p:RmtInf/p:Ustrd") == ["JoyBack reward 1", "JoyBack reward 2"]
    assert (file.number_of_transactions, file.control_sum_minor) == (2, 303)
    assert file.end_to_end_ids == ("PO-000001", "PO-000002")


def test_instant_asks_for_sct_inst_and_one_booking_per_payout():
    [file] = files([transfer(1)], instant=True)

    xsd_validate(file.xml, "pain.001.001.09")
    root = parsed(file)
    assert texts(root, ".//p:PmtTpInf/p:SvcLvl/p:Cd") == ["SEPA"]
    assert texts(root, ".//p:PmtTpInf/p:LclInstrm/p:Cd") == ["INST"]
    assert texts(root, ".//p:BtchBookg") == ["false"]


def test_a_debtor_without_bic_is_written_as_notprovided():
    [file] = files([transfer(1)], debtor=Debtor(name="JoyBack GmbH", iban=PLATFORM.iban))

    assert texts(parsed(file), ".//p:DbtrAgt/p:FinInstnId/p:Othr/p:Id") == ["NOTPROVIDED"]
    xsd_validate(file.xml, "pain.001.001.09")


@pytest.mark.parametrize(
    ("minor", "text"),
    [(1, "0.01"), (10, "0.10"), (100, "1.00"), (123456, "1234.56"), (99_999_999_999, "999999999.99")],
)
def test_amounts_have_exactly_two_decimals(minor, text):
    [file] = files([transfer(1, amount_minor=minor)])

    assert texts(parsed(file), ".//p:InstdAmt") == [text]
    assert texts(parsed(file), ".//p:GrpHdr/p:CtrlSum") == [text]


def test_names_and_remittance_are_transliterated_to_the_sepa_set_and_cut_to_length():
    odd = transfer(
        1,
        creditor_name="Zoë Łukasiewicz ß",
        remittance="Prämie für Søren & Æsa <3 — 100 € 😀 " + "x" * 200,
    )
    long_name = transfer(2, creditor_name="Ö" * 40 + " Straße " + "ß" * 40)
    [file] = files([odd, long_name])

    xsd_validate(file.xml, "pain.001.001.09")
    root = parsed(file)
    names = texts(root, ".//p:Cdtr/p:Nm")
    assert names[0] == "Zoe Lukasiewicz ss"
    assert len(names[1]) == 70 and names[1].startswith("O" * 40 + " Strasse ss")
    remittance = texts(root, ".//p:Ustrd")[0]
    assert remittance.startswith("Pramie fur Soren + AEsa 3 - 100 EUR x")
    assert len(remittance) == 140
    for value in [*names, remittance]:
        assert set(value) <= SEPA_TEXT


def test_identifiers_are_at_most_35_sepa_characters_and_without_slash_tricks():
    batch = [transfer(n, end_to_end_id=f"PO-{n}-" + "9" * (31 - len(str(n)))) for n in range(1, 4)]
    result = files(batch, msg_id_prefix="JB", max_per_file=1, max_per_batch=1)

    ids = [i for f in result for i in (f.msg_id, *f.pmt_inf_ids, *f.end_to_end_ids)]
    assert all(1 <= len(i) <= 35 and "//" not in i and not i.startswith("/") for i in ids)
    assert len({f.msg_id for f in result}) == 3
    assert len({p for f in result for p in f.pmt_inf_ids}) == 3
    assert all(len(e) == 35 for f in result for e in f.end_to_end_ids)


def test_a_prefix_too_long_for_35_character_ids_is_refused_with_the_length_that_fits():
    with pytest.raises(Iso20022Error, match=r"too long.*at most 1[0-9] characters"):
        files([transfer(1)], msg_id_prefix="JOYBACK-PAYOUTS-EUROPE-01")


def test_the_same_batch_twice_gives_identical_ids_and_bytes():
    batch = [transfer(n) for n in range(1, 30)]

    first = files(batch, max_per_file=10)
    second = files(list(batch), max_per_file=10)

    assert first == second
    assert [f.xml for f in first] == [f.xml for f in second]


def test_ids_follow_the_content_not_the_clock():
    batch = [transfer(n) for n in range(1, 4)]
    later = files(batch, created_at=CREATED + datetime.timedelta(hours=3))
    other = files([*batch[:2], transfer(3, amount_minor=999)])

    assert later[0].msg_id == files(batch)[0].msg_id
    assert other[0].msg_id != files(batch)[0].msg_id
    assert files(batch, instant=True)[0].msg_id != files(batch)[0].msg_id


def test_files_split_at_the_cap_with_their_own_counts_and_sums():
    batch = [transfer(n) for n in range(1, 26)]

    result = files(batch, max_per_file=10, max_per_batch=4)

    assert [f.number_of_transactions for f in result] == [10, 10, 5]
    assert sum(f.control_sum_minor for f in result) == sum(t.amount_minor for t in batch)
    assert [e for f in result for e in f.end_to_end_ids] == [t.end_to_end_id for t in batch]
    for file in result:
        xsd_validate(file.xml, "pain.001.001.09")
        root = parsed(file)
        amounts = [Decimal(a) for a in texts(root, ".//p:InstdAmt")]
        assert texts(root, ".//p:GrpHdr/p:NbOfTxs") == [str(file.number_of_transactions)]
        assert Decimal(texts(root, ".//p:GrpHdr/p:CtrlSum")[0]) == sum(amounts)
        assert Decimal(file.control_sum_minor) / 100 == sum(amounts)
        for batch_element in root.iterfind(".//p:PmtInf", NS):
            in_batch = [Decimal(a) for a in texts(batch_element, ".//p:InstdAmt")]
            assert len(in_batch) <= 4
            assert batch_element.findtext("p:NbOfTxs", namespaces=NS) == str(len(in_batch))
            assert Decimal(batch_element.findtext("p:CtrlSum", namespaces=NS)) == sum(in_batch)
        assert texts(root, ".//p:PmtInf/p:PmtInfId") == list(file.pmt_inf_ids)
    assert [len(f.pmt_inf_ids) for f in result] == [3, 3, 2]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"currency": "USD"}, "'USD': SEPA credit transfers are in EUR only"),
        ({"creditor_iban": "DE89370400440532013001"}, "not a valid SEPA IBAN"),
        ({"creditor_iban": "US12345678901234"}, "not a valid SEPA IBAN"),
        (
            {"creditor_iban": "BR1500000000000010932840814P2"},
            r"not a valid SEPA IBAN \(not in the SEPA zone\)",
        ),
        ({"amount_minor": 0}, "between 0.01 and 999999999.99 EUR, not 0 cents"),
        ({"amount_minor": -5}, "between 0.01 and 999999999.99 EUR, not -5 cents"),
        ({"amount_minor": 100_000_000_000}, "between 0.01 and 999999999.99 EUR"),
        ({"amount_minor": 1.5}, "whole number of cents, not 1.5"),
        ({"amount_minor": True}, "whole number of cents"),
        ({"end_to_end_id": "PO 1"}, "EndToEndId 'PO 1' is not a valid SEPA identifier"),
        ({"end_to_end_id": "/PO-1"}, "not a valid SEPA identifier"),
        ({"end_to_end_id": "PO//1"}, "not a valid SEPA identifier"),
        ({"end_to_end_id": "P" * 36}, "not a valid SEPA identifier"),
        ({"end_to_end_id": ""}, "not a valid SEPA identifier"),
        ({"creditor_bic": "ABNA"}, "creditor BIC 'ABNA' is not a valid BIC"),
        ({"creditor_country": "nl"}, "not a two-letter ISO 3166 country code"),
        ({"creditor_name": "😀😀"}, "nothing left in the SEPA character set"),
    ],
)
def test_bad_transfers_are_refused_naming_the_transfer(change, message):
    with pytest.raises(Iso20022Error, match=message) as refused:
        files([transfer(1), transfer(2, **change)])

    assert str(refused.value).startswith("Transfer 2 (EndToEndId ")


def test_a_duplicate_end_to_end_id_in_one_batch_is_refused():
    with pytest.raises(Iso20022Error, match=r"Transfer 3 .*'PO-000001'.*appears twice in this batch"):
        files([transfer(1), transfer(2), transfer(1)])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"transfers": []}, "at least one credit transfer"),
        ({"max_per_file": 0}, "max_per_file must be a positive whole number"),
        ({"max_per_batch": 0}, "max_per_batch must be a positive whole number"),
        ({"created_at": datetime.datetime(2026, 1, 5, 9, 30)}, "timezone-aware"),  # noqa: DTZ001
        ({"execution_date": "2026-01-06"}, "execution_date must be a date"),
        ({"msg_id_prefix": "JOY BACK"}, "message id prefix 'JOY BACK' is not a valid SEPA identifier"),
        (
            {"debtor": Debtor(name="JoyBack", iban="DE00123")},
            "debtor IBAN 'DE00123' is not a valid SEPA IBAN",
        ),
        ({"debtor": Debtor(name="JoyBack", iban=IBANS[0], bic="x")}, "debtor BIC 'x' is not a valid BIC"),
        ({"debtor": Debtor(name="  ", iban=IBANS[0])}, "debtor needs a name"),
    ],
)
def test_bad_batch_settings_are_refused(change, message):
    settings = {"transfers": [transfer(1)]} | change
    with pytest.raises(Iso20022Error, match=message):
        files(**settings)


ibans = st.sampled_from([*IBANS, *(str(IBAN.generate("DE", "37040044", str(n))) for n in range(1, 9))])
# Any text after a first Latin letter, so that something is left of every name in the SEPA set;
# letters of other scripts are left out (a name in them has no spelling we may guess: refused).
names = st.tuples(
    st.sampled_from("AZaz"),
    st.text(max_size=120).map(lambda text: "".join(char for char in text if name_latin(char))),
).map("".join)
transfer_lists = st.lists(
    st.tuples(st.integers(1, 99_999_999_999), names, ibans, st.text(max_size=200)),
    min_size=1,
    max_size=40,
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(transfer_lists, st.integers(1, 15), st.one_of(st.none(), st.integers(1, 7)), st.booleans())
def test_any_valid_transfers_make_schema_valid_files_and_conserve_the_sums(items, cap, per_batch, instant):
    batch = [
        CreditTransfer(f"E2E-{n}", amount, "EUR", name, iban, remittance=remittance, creditor_bic="")
        for n, (amount, name, iban, remittance) in enumerate(items)
    ]
    result = files(batch, max_per_file=cap, max_per_batch=per_batch, instant=instant)

    assert sum(f.number_of_transactions for f in result) == len(batch)
    assert sum(f.control_sum_minor for f in result) == sum(t.amount_minor for t in batch)
    assert all(f.number_of_transactions <= cap for f in result)
    for file in result:
        xsd_validate(file.xml, "pain.001.001.09")
        root = parsed(file)
        assert Decimal(texts(root, ".//p:GrpHdr/p:CtrlSum")[0]) * 100 == file.control_sum_minor
        for value in texts(root, ".//p:Cdtr/p:Nm") + texts(root, ".//p:Ustrd"):
            assert value and set(value) <= SEPA_TEXT and value == value.strip()
        assert all(len(n) <= 70 for n in texts(root, ".//p:Cdtr/p:Nm"))
        assert all(len(u) <= 140 for u in texts(root, ".//p:Ustrd"))
