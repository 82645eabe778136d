"""Bank statements come in (camt.053 / camt.054, .02 and .08) and every payout ends matched,
returned or an exception; bad files import nothing."""

import re
from pathlib import Path

import pytest

from joyback.ledger.models import Account, AccountKind
from joyback.ledger.selectors import ledger_drift
from payouts.iso20022.camt import camt_read
from payouts.iso20022.types import SchemaError
from payouts.models import (
    ExceptionResolution,
    Payout,
    ReconciliationException,
    StatementImport,
    StatementLine,
)
from payouts.reconciliation.exceptions import ALERTS, exception_resolve
from payouts.reconciliation.matching import payouts_unreconciled_flag
from payouts.reconciliation.references import brand_deposit_reference
from payouts.reconciliation.rules import ReconciliationRefused
from payouts.reconciliation.statement_import import statement_import_create, statement_import_run
from tests.payouts.camt_fixtures import Ntry, Tx, camt053, camt054, paid, returned
from tests.payouts.conftest import IBANS

pytestmark = pytest.mark.django_db
STATEMENTS = Path(__file__).parent / "statements"


def imported(data, **kw):
    """A file from the bank's feed, the channel that books at once."""
    return statement_import_create(data=data, filename="s.xml", channel="feed", **kw)


def exceptions():
    """Questions about lines and payouts (alerts about the whole account are tested on their own)."""
    return sorted(ReconciliationException.objects.exclude(reason__in=ALERTS).values_list("reason", flat=True))


@pytest.mark.parametrize(
    "name", ["camt053_v08_batch.xml", "camt053_v02_return_ac04.xml", "camt054_v08_return_ac04.xml"]
)
def test_the_reference_examples_read_in_both_versions(name):
    parsed = camt_read((STATEMENTS / name).read_bytes())
    lines = parsed.statements[0].lines
    assert all(line.end_to_end_id.startswith("PO-0001") for line in lines)
    if "batch" in name:
        assert [(line.amount, line.credit, line.kind) for line in lines] == [
            (50000, False, "payout"),
            (30000, False, "payout"),
        ]
        assert parsed.statements[0].closing_balance == 920000
    else:
        assert [(line.amount, line.kind, line.return_reason) for line in lines] == [(30000, "return", "AC04")]


def test_a_pending_payout_booked_on_a_v08_statement_settles(owed):
    owed(iban=IBANS["pending"])
    payout = Payout.objects.get()
    assert payout.status in ("submitted", "accepted")

    job = imported(camt053([paid(payout)]))

    assert (job.status, job.new_lines, job.matched, job.exceptions) == ("done", 1, 1, 0)
    payout.refresh_from_db()
    assert payout.status == "settled"
    assert StatementLine.objects.get().payout == payout
    assert ledger_drift() == []


def test_a_settled_payout_is_confirmed_and_the_same_statement_twice_changes_nothing(owed):
    owed()
    payout = Payout.objects.get()
    data = camt053([paid(payout)], version="02")

    first = imported(data)
    second = imported(data)

    assert (first.matched, second.new_lines, second.known_lines) == (1, 0, 1)
    assert StatementLine.objects.count() == 1 and exceptions() == []
    assert payout.events.filter(to_status="settled").count() == 1


@pytest.mark.parametrize("reason", ["AC01", "AC04", "MD07", "MS03"])
@pytest.mark.parametrize("version", ["02", "08"])
def test_a_return_marks_the_payout_returned_and_gives_the_money_back(owed, reason, version):
    person = owed()
    payout = Payout.objects.get()

    job = imported(camt053([paid(payout), returned(payout, reason)], version=version))

    assert (job.matched, job.exceptions) == (2, 0)
    payout.refresh_from_db()
    assert (payout.status, payout.reason_code) == ("returned", reason)
    payable = Account.objects.get(kind=AccountKind.PARTICIPANT_PAYABLE, subject=person.ledger_subject)
    assert payable.balance == payout.amount
    assert ledger_drift() == []


def test_a_camt054_return_after_the_statement_counts_once(owed):
    owed()
    payout = Payout.objects.get()
    imported(camt053([returned(payout, "AC04", ref="R-1")]))

    job = imported(camt054([returned(payout, "AC04", ref="R-1")]))

    assert job.new_lines == 0
    assert payout.events.filter(to_status="returned").count() == 1


def test_camt054_v02_is_read_against_its_official_schema(owed):
    owed(iban=IBANS["pending"])
    payout = Payout.objects.get()

    job = imported(camt054([paid(payout)], version="02"))

    assert (job.status, job.matched) == ("done", 1)


@pytest.mark.parametrize(
    "defect, reason",
    [
        # An element the 2009 notification does not have.
        (lambda xml: xml.replace(b"<AddtlNtryInf>", b"<Surprise>x</Surprise><AddtlNtryInf>"), "Surprise"),
        # The notification's creation time is required in .001.02.
        (lambda xml: re.sub(rb"(<Ntfctn><Id>[^<]*</Id>)<CreDtTm>[^<]*</CreDtTm>", rb"\1", xml), "CreDtTm"),
    ],
)
def test_a_camt054_v02_the_schema_refuses_is_refused_and_books_nothing(owed, defect, reason):
    owed(iban=IBANS["pending"])
    payout = Payout.objects.get()
    data = defect(
        camt054(
            [Ntry(amount=payout.amount, ref="X", info="x", txs=[Tx(payout.end_to_end_id, payout.amount)])],
            version="02",
        )
    )

    with pytest.raises(SchemaError, match=rf"Not a valid camt.054.001.02 message: line \d+: .*{reason}"):
        camt_read(data)
    assert not StatementImport.objects.exists()


def test_unknown_duplicate_and_mismatched_lines_become_exceptions(owed):
    owed()
    payout = Payout.objects.get()
    entries = [
        paid(payout, ref="A"),
        paid(payout, ref="B"),  # booked a second time
        Ntry(amount=5_00, ref="C", txs=[Tx("JBNOSUCHPAYOUT", 5_00)]),
        Ntry(amount=7_00, ref="D", info="bank fee"),
    ]

    job = imported(camt053(entries))

    assert (job.matched, job.exceptions) == (1, 3)
    assert exceptions() == ["duplicate", "unknown_line", "unknown_line"]
    assert ReconciliationException.objects.get(reason="duplicate").brand == payout.brand


def test_an_amount_mismatch_is_an_exception_not_a_settlement(owed):
    owed(iban=IBANS["pending"])
    payout = Payout.objects.get()

    imported(
        camt053([Ntry(amount=payout.amount + 1, ref="X", txs=[Tx(payout.end_to_end_id, payout.amount + 1)])])
    )

    payout.refresh_from_db()
    assert payout.status != "settled"
    assert exceptions() == ["amount_mismatch"]


def test_a_deposit_with_the_brand_reference_is_one_exception_never_the_brands_funding(alpaca):
    reference = brand_deposit_reference(alpaca)
    data = camt053([Ntry(amount=250_00, credit=True, ref="DEP-1", remittance=f"Top-up {reference}")])

    imported(data)
    imported(camt054([Ntry(amount=250_00, credit=True, ref="DEP-1", remittance=reference)]))

    assert not Account.objects.filter(
        kind=AccountKind.BRAND_FUNDING, brand_id=alpaca.pk, balance__gt=0
    ).exists()
    assert StatementLine.objects.get(kind="deposit").state == "exception"


BAD_FILES = {
    "xml bomb": (
        b'<?xml version="1.0"?>\n<!DOCTYPE Document [<!ENTITY a "aaaaaaaaaa">'
        b'<!ENTITY b "&a;&a;&a;&a;&a;">]>\n'
        b'<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08">&b;</Document>',
        "line 2",
    ),
    "external entity": (
        b'<?xml version="1.0"?>\n<!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
        b'<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08">&x;</Document>',
        "DTD",
    ),
    "not a statement": (b'<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09"/>', "reads"),
    "empty": (b"   ", "empty"),
}


@pytest.mark.parametrize("name", BAD_FILES)
def test_hostile_and_foreign_files_are_refused(name):
    data, says = BAD_FILES[name]
    try:
        job = imported(data)
    except SchemaError as refused:
        message = str(refused)
    else:
        assert job.status == "failed"
        message = job.error
    assert says in message
    assert StatementLine.objects.count() == 0


def test_a_truncated_file_is_refused_with_its_line_and_imports_nothing(owed):
    owed()
    payout = Payout.objects.get()
    data = camt053([paid(payout), Ntry(amount=1_00, ref="Z", info="x")])

    job = imported(data[: len(data) - 40])

    assert job.status == "failed" and job.error_line and "line" in job.error
    assert StatementLine.objects.count() == 0 and ReconciliationException.objects.count() == 0


def test_a_schema_error_names_the_line(owed):
    data = camt053([Ntry(amount=1_00, ref="Z", info="x")]).replace(
        b"<CdtDbtInd>DBIT</CdtDbtInd><Sts>", b"<CdtDbtInd>DEBIT</CdtDbtInd><Sts>"
    )

    job = imported(data)

    assert job.status == "failed" and job.error_line == 7 and "DEBIT" in job.error


def test_every_payout_ends_matched_returned_or_an_exception(
    owed, django_capture_on_commit_callbacks, settings
):
    settings.RECONCILIATION_STALE_DAYS = 0
    owed()
    first = Payout.objects.get()
    imported(camt053([returned(first, "AC04")]))  # return only: the payout's debit is missing
    Payout.objects.filter(pk=first.pk).update(submitted_at=first.submitted_at.replace(year=2020))

    payouts_unreconciled_flag()

    for payout in Payout.objects.all():
        lines = StatementLine.objects.filter(payout=payout, state="matched")
        assert payout.status == "returned" or lines.exists() or payout.reconciliation_exceptions.exists()


def test_platform_staff_resolve_exceptions_and_each_is_recorded(owed, sam, tara):
    owed(iban=IBANS["pending"])
    payout = Payout.objects.get()
    imported(
        camt053(
            [
                Ntry(amount=payout.amount, ref="U1", txs=[Tx("JBTYPO", payout.amount)]),
                Ntry(amount=3_00, credit=True, ref="U2", info="?"),
            ]
        ),
    )
    typo = ReconciliationException.objects.get(line__entry_ref="U1")
    stray = ReconciliationException.objects.get(line__entry_ref="U2")

    proposed = exception_resolve(exception=typo, action="link", actor=sam, payout=payout, note="typo")
    exception_resolve(exception=proposed, action="link", actor=tara, payout=payout, note="agreed")
    exception_resolve(exception=stray, action="suspense", actor=sam, note="bank to explain")

    payout.refresh_from_db()
    assert payout.status == "settled"
    suspense = Account.objects.get(kind=AccountKind.SUSPENSE, brand_id=None)
    assert suspense.balance == 3_00
    assert list(ExceptionResolution.objects.values_list("action", "actor", "approved_by", "note")) == [
        ("link", sam.pk, tara.pk, "typo | agreed"),
        ("suspense", sam.pk, None, "bank to explain"),
    ]
    with pytest.raises(ReconciliationRefused):
        exception_resolve(exception=stray, action="suspense", actor=sam, note="again")
    assert ledger_drift() == []


def test_a_payout_already_matched_cannot_take_a_second_debit_line(owed, sam, tara):
    owed(iban=IBANS["pending"])
    payout = Payout.objects.get()
    imported(
        camt053(
            [
                Ntry(amount=payout.amount, ref="U1", txs=[Tx("JBTYPO", payout.amount)]),
                Ntry(amount=payout.amount, ref="U3", txs=[Tx("JBTYPO2", payout.amount)]),
            ]
        ),
    )
    first = ReconciliationException.objects.get(line__entry_ref="U1")
    second = ReconciliationException.objects.get(line__entry_ref="U3")
    exception_resolve(exception=first, action="link", actor=sam, payout=payout, note="typo")
    exception_resolve(exception=first, action="link", actor=tara, payout=payout, note="agreed")

    with pytest.raises(ReconciliationRefused, match="already matched to the statement line U1"):
        exception_resolve(exception=second, action="link", actor=sam, payout=payout, note="typo")

    second.refresh_from_db()
    assert second.status == "open" and second.line.state != "matched"
    assert StatementLine.objects.filter(payout=payout, state="matched").count() == 1
    assert ledger_drift() == []


def test_a_large_file_goes_to_the_queue_and_reports_progress(
    owed, settings, django_capture_on_commit_callbacks
):
    settings.STATEMENT_SYNC_BYTES = 10
    owed(iban=IBANS["pending"])
    payout = Payout.objects.get()

    with django_capture_on_commit_callbacks() as queued:
        job = imported(camt053([paid(payout)]))
    assert job.status == "queued" and len(queued) == 1

    statement_import_run(import_id=job.pk)
    job.refresh_from_db()
    assert (job.status, job.percent) == ("done", 100)
    assert StatementImport.objects.get().matched == 1


@pytest.mark.parametrize("text", ["Infinity", "NaN"])
def test_a_non_finite_amount_is_refused(text):
    data = camt054([Ntry(amount=1_00, ref="X", info="x")], version="02").replace(
        b">1.00<", f">{text}<".encode()
    )

    with pytest.raises(SchemaError, match=r"Not a valid camt\.054\.001\.02 message"):
        camt_read(data)
