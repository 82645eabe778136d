"""Money moves only on the bank's word: each attack a brand user could try, refused with nothing
booked and nothing paid; the channels that do book (the bank's feed, its drop folder, a staff
upload a second staff member approves); and deposits keyed by the account they reached."""

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile

from joyback.api.keys import api_key_create
from joyback.ledger.models import Account, AccountKind, Entry, Transaction
from payouts.models import (
    Payout,
    ReconciliationException,
    SandboxBankPayment,
    StatementImport,
    StatementLine,
)
from payouts.reconciliation.exceptions import exception_resolve
from payouts.reconciliation.references import brand_deposit_reference
from payouts.reconciliation.rules import ReconciliationRefused
from payouts.reconciliation.statement_import import (
    bank_statements_fetch,
    statement_import_approve,
    statement_import_create,
    statement_import_decline,
)
from payouts.sandbox.files import incoming_transfer_issue
from tests.payouts.camt_fixtures import Ntry, Tx, camt053, camt054, paid, returned
from tests.payouts.conftest import IBANS

pytestmark = pytest.mark.django_db
OTHER_ACCOUNT = "DE75512108001245126199"


def ledger_state():
    return (Transaction.objects.count(), Entry.objects.count(), StatementLine.objects.count())


def funding(brand) -> int:
    account = Account.objects.filter(kind=AccountKind.BRAND_FUNDING, brand_id=brand.pk).first()
    return account.balance if account else 0


def brand_upload(client, brand, data):
    """What a brand's finance member posts to the reconciliation page's statement form (the path
    that once imported the file and booked it)."""
    return client.post(
        f"/brands/{brand.slug}/reconciliation/statements/",
        {"statement": SimpleUploadedFile("statement.xml", data, content_type="application/xml")},
    )


def feed(data):
    return statement_import_create(data=data, filename="bank.xml", channel="feed")


# The attacks.


def test_a_made_up_deposit_uploaded_by_a_brand_books_nothing(client, fiona, alpaca):
    reference = brand_deposit_reference(alpaca)
    made_up = camt053([Ntry(amount=500_00, credit=True, ref="FAKE-1", remittance=reference)], opening=0)
    before = ledger_state()
    client.force_login(fiona)

    response = brand_upload(client, alpaca, made_up)

    assert response.status_code == 200 and "Nothing was booked" in response.content.decode()
    assert funding(alpaca) == 0
    assert ledger_state() == before and StatementImport.objects.count() == 0


def test_a_made_up_return_and_pay_again_pays_nobody_twice(owed, client, fiona, alpaca):
    owed()
    payout = Payout.objects.get()
    assert payout.status == "settled"
    before = ledger_state()
    client.force_login(fiona)

    brand_upload(client, alpaca, camt053([returned(payout, "AC04")]))
    client.post(f"/brands/{alpaca.slug}/payouts/{payout.pk}/action/", {"action": "retry"})

    payout.refresh_from_db()
    assert payout.status == "settled"
    assert Payout.objects.count() == 1 and SandboxBankPayment.objects.count() == 1
    assert ledger_state() == before


def test_a_brand_cannot_squat_another_brands_bank_reference(client, bob, alpaca, bison):
    squat = camt053(
        [
            Ntry(
                amount=1_00,
                credit=True,
                ref="BANK-REF-OF-ALPACA",
                remittance=brand_deposit_reference(bison),
            )
        ]
    )
    client.force_login(bob)
    brand_upload(client, bison, squat)

    job = feed(
        camt054(
            [
                Ntry(
                    amount=800_00,
                    credit=True,
                    ref="BANK-REF-OF-ALPACA",
                    remittance=brand_deposit_reference(alpaca),
                )
            ]
        )
    )

    # Funding by reference to the platform's account is retired: whoever's reference it names, it is
    # an exception for staff, never either brand's money.
    assert (job.status, job.matched, job.exceptions) == ("done", 0, 1)
    assert (funding(alpaca), funding(bison)) == (0, 0)


def reconciliation_account():
    from tests.payouts.camt_fixtures import ACCOUNT

    return ACCOUNT


def test_a_credit_with_no_brands_reference_is_an_exception_for_staff_never_a_brands_money(
    client, fiona, alpaca
):
    reference = brand_deposit_reference(alpaca)
    typo = reference[:-1] + ("A" if reference[-1] != "A" else "B")  # its check digits no longer hold
    job = feed(
        camt054(
            [
                Ntry(amount=40_00, credit=True, ref="ANON-1", remittance="invoice 42"),
                Ntry(amount=60_00, credit=True, ref="ANON-2", remittance=f"top-up {typo}"),
            ]
        )
    )

    assert (job.matched, job.exceptions) == (0, 2)
    assert funding(alpaca) == 0
    assert set(ReconciliationException.objects.values_list("brand", flat=True)) == {None}
    client.force_login(fiona)
    assert "ANON-1" not in client.get(f"/brands/{alpaca.slug}/reconciliation/").content.decode()


def platform_bank_balance() -> int:
    return sum(Account.objects.filter(kind=AccountKind.PLATFORM_BANK).values_list("balance", flat=True))


def test_a_brand_cannot_drain_the_bank_through_suspense(client, fiona, alpaca, owed):
    owed()
    feed(camt054([Ntry(amount=90_00, ref="FEE-1", info="Unexplained debit")]))
    exception = ReconciliationException.objects.get(line__entry_ref="FEE-1")
    bank_before = platform_bank_balance()
    client.force_login(fiona)

    response = client.post(
        f"/brands/{alpaca.slug}/reconciliation/exceptions/{exception.pk}/resolve/",
        {"action": "suspense", "note": "mine"},
    )
    with pytest.raises(ReconciliationRefused, match="Only platform staff"):
        exception_resolve(exception=exception, action="suspense", actor=fiona, note="mine")

    assert response.status_code == 404
    exception.refresh_from_db()
    assert exception.status == "open"
    assert platform_bank_balance() == bank_before
    assert not Account.objects.filter(kind=AccountKind.SUSPENSE).exists()


def test_a_brand_api_key_cannot_import_a_statement(client, alpaca):
    key = api_key_create(brand_id=alpaca.pk, name="erp", scopes=["payouts"]).secret
    made_up = camt053(
        [
            Ntry(
                amount=500_00,
                credit=True,
                ref="API-1",
                remittance=brand_deposit_reference(alpaca),
            )
        ]
    )
    before = ledger_state()

    response = client.post(
        "/api/v1/statements", made_up, content_type="application/xml", HTTP_AUTHORIZATION=f"Bearer {key}"
    )

    assert response.status_code == 404
    assert funding(alpaca) == 0 and ledger_state() == before and StatementImport.objects.count() == 0


def test_no_other_channel_books(alpaca):
    with pytest.raises(ReconciliationRefused, match="only from the bank"):
        statement_import_create(data=camt053([]), channel="brand")
    assert StatementImport.objects.count() == 0


# The channels that book.


def test_a_staff_upload_books_only_when_a_second_staff_member_approves(sam, tara, alpaca):
    data = camt053(
        [
            Ntry(
                amount=250_00,
                credit=True,
                ref="STAFF-1",
                remittance=brand_deposit_reference(alpaca),
            )
        ],
        opening=0,
    )

    job = statement_import_create(data=data, filename="s.xml", channel="staff", uploaded_by=sam)
    assert (job.status, funding(alpaca), StatementLine.objects.count()) == ("awaiting", 0, 0)
    with pytest.raises(ReconciliationRefused, match="second person"):
        statement_import_approve(import_id=job.pk, approver=sam)
    assert StatementLine.objects.count() == 0

    done = statement_import_approve(import_id=job.pk, approver=tara)

    assert (done.status, done.approved_by, StatementLine.objects.count()) == ("done", tara, 1)
    with pytest.raises(ReconciliationRefused, match="not waiting"):
        statement_import_approve(import_id=job.pk, approver=tara)
    # The brand's reference on the platform's account is only a hint: staff send it back.
    assert funding(alpaca) == 0
    assert ReconciliationException.objects.filter(line__entry_ref="STAFF-1").count() == 1


def test_a_declined_staff_upload_never_books(sam, tara, alpaca):
    data = camt053(
        [
            Ntry(
                amount=250_00,
                credit=True,
                ref="STAFF-2",
                remittance=brand_deposit_reference(alpaca),
            )
        ]
    )
    job = statement_import_create(data=data, channel="staff", uploaded_by=sam)

    with pytest.raises(ReconciliationRefused, match="Say why"):
        statement_import_decline(import_id=job.pk, actor=tara, note=" ")
    declined = statement_import_decline(import_id=job.pk, actor=tara, note="not our bank's file")
    with pytest.raises(ReconciliationRefused, match="not waiting"):
        statement_import_approve(import_id=job.pk, approver=tara)

    assert declined.status == "failed" and "not our bank's file" in declined.error
    assert funding(alpaca) == 0 and StatementLine.objects.count() == 0


def test_staff_without_the_permission_and_brand_members_cannot_upload(drew, fiona, alice):
    for person in (drew, fiona, alice, None):
        with pytest.raises(ReconciliationRefused, match="Only platform staff"):
            statement_import_create(data=camt053([]), channel="staff", uploaded_by=person)
    assert StatementImport.objects.count() == 0


def test_a_bad_staff_upload_is_refused_before_anyone_approves_it(sam):
    from payouts.iso20022.types import SchemaError

    with pytest.raises(SchemaError, match="truncated"):
        statement_import_create(data=camt053([])[:-40], channel="staff", uploaded_by=sam)
    assert StatementImport.objects.count() == 0


def test_the_sandbox_banks_feed_is_read_once_and_a_brands_transfer_is_never_its_funding(alpaca):
    incoming_transfer_issue(amount=120_00, remittance=f"Funding {brand_deposit_reference(alpaca)}")

    first = bank_statements_fetch()
    second = bank_statements_fetch()

    assert [job.source for job in first] == ["feed"] and second == []
    assert funding(alpaca) == 0
    line = StatementLine.objects.get()
    assert (line.kind, line.amount, line.state) == ("deposit", 120_00, "exception")
    assert "send it back" in ReconciliationException.objects.get().detail


def test_the_drop_folder_is_read_once_and_a_bad_file_reported_once(alpaca, settings, tmp_path):
    settings.BANK_DROP_FOLDER = str(tmp_path)
    reference = brand_deposit_reference(alpaca)
    (tmp_path / "a.xml").write_bytes(
        camt054([Ntry(amount=70_00, credit=True, ref="DROP-1", remittance=reference)])
    )
    (tmp_path / "b.xml").write_bytes(b"<not-a-statement/>")
    (tmp_path / "notes.txt").write_text("not the bank's")

    first = bank_statements_fetch()
    second = bank_statements_fetch()

    assert sorted((job.filename, job.status) for job in first) == [("a.xml", "done"), ("b.xml", "failed")]
    assert second == [] and funding(alpaca) == 0
    assert ReconciliationException.objects.filter(line__entry_ref="DROP-1").count() == 1


# Resolutions: platform staff only, a second person above the threshold, who and why kept.


def test_a_large_suspense_booking_needs_a_second_staff_member(sam, tara, settings):
    settings.RECONCILIATION_SECOND_APPROVAL_MINOR = 50_00
    feed(camt054([Ntry(amount=90_00, credit=True, ref="STRAY-1", remittance="?")]))
    exception = ReconciliationException.objects.get()

    with pytest.raises(ReconciliationRefused, match="Say why"):
        exception_resolve(exception=exception, action="suspense", actor=sam, note="")
    proposed = exception_resolve(
        exception=exception, action="suspense", actor=sam, note="bank to trace the sender"
    )
    assert (proposed.status, proposed.proposed_by) == ("open", sam)
    assert not Account.objects.filter(kind=AccountKind.SUSPENSE).exists()
    with pytest.raises(ReconciliationRefused, match="second person"):
        exception_resolve(exception=proposed, action="suspense", actor=sam, note="again")
    with pytest.raises(ReconciliationRefused, match="approves what was proposed"):
        exception_resolve(exception=proposed, action="repaid", actor=tara, note="other")

    done = exception_resolve(exception=proposed, action="suspense", actor=tara, note="agreed")

    assert done.status == "resolved"
    resolution = done.resolutions.get()
    assert (resolution.actor, resolution.approved_by, resolution.action) == (sam, tara, "suspense")
    assert "bank to trace the sender" in resolution.note and "agreed" in resolution.note
    assert Account.objects.get(kind=AccountKind.SUSPENSE).balance == 90_00


def test_a_small_resolution_is_one_staff_members_with_a_reason(sam, settings):
    settings.RECONCILIATION_SECOND_APPROVAL_MINOR = 50_00
    feed(camt054([Ntry(amount=2_00, credit=True, ref="STRAY-2", remittance="?")]))
    exception = ReconciliationException.objects.get()

    done = exception_resolve(exception=exception, action="suspense", actor=sam, note="small stray")

    assert done.status == "resolved" and done.resolutions.get().approved_by is None


def test_linking_a_small_line_to_a_payout_pays_no_one_until_a_second_staff_member_confirms(owed, sam, tara):
    owed(iban=IBANS["pending"])
    payout = Payout.objects.get()
    feed(camt054([Ntry(amount=payout.amount, ref="TYPO-1", txs=[Tx("JBTYPO", payout.amount)])]))
    exception = ReconciliationException.objects.get()
    assert abs(exception.amount) < settings.RECONCILIATION_SECOND_APPROVAL_MINOR

    proposed = exception_resolve(exception=exception, action="link", actor=sam, payout=payout, note="typo")
    payout.refresh_from_db()
    assert proposed.status == "open" and payout.status != "settled"
    with pytest.raises(ReconciliationRefused, match="A second person must approve a resolution you proposed"):
        exception_resolve(exception=proposed, action="link", actor=sam, payout=payout, note="again")

    done = exception_resolve(exception=proposed, action="link", actor=tara, payout=payout, note="agreed")

    payout.refresh_from_db()
    assert done.status == "resolved" and payout.status == "settled"
    resolution = done.resolutions.get()
    assert (resolution.actor, resolution.approved_by) == (sam, tara)


def test_money_on_the_platforms_account_is_never_booked_as_a_brands_deposit(sam, alpaca, fiona):
    """The platform keeps no brand's money: staff send it back; the brand funds its own IBAN."""
    feed(camt054([Ntry(amount=5_00, credit=True, ref="NOREF-2", remittance="Alpaca")]))
    exception = ReconciliationException.objects.get()

    with pytest.raises(ReconciliationRefused, match="Only platform staff"):
        exception_resolve(exception=exception, action="deposit", actor=fiona, brand=alpaca, note="ours")
    with pytest.raises(ReconciliationRefused, match="Choose the brand"):
        exception_resolve(exception=exception, action="deposit", actor=sam, note="whose?")
    with pytest.raises(ReconciliationRefused, match="keeps no brand's money: send it back"):
        exception_resolve(exception=exception, action="deposit", actor=sam, brand=alpaca, note="theirs")

    exception.refresh_from_db()
    assert exception.status == "open" and exception.proposed_by is None and funding(alpaca) == 0


def test_a_payout_paid_by_the_bank_is_on_the_brands_page_with_its_line(owed, client, fiona, alpaca):
    owed()
    payout = Payout.objects.get()
    feed(camt054([paid(payout, ref="EVIDENCE-1")]))
    client.force_login(fiona)

    body = client.get(f"/brands/{alpaca.slug}/reconciliation/").content.decode()

    assert "EVIDENCE-1" in body


def test_money_that_went_out_is_never_booked_as_a_deposit(sam, alpaca):
    feed(camt054([Ntry(amount=20_00, ref="OUT-1", info="debit")]))
    exception = ReconciliationException.objects.get()

    with pytest.raises(ReconciliationRefused, match="Only money that came in"):
        exception_resolve(exception=exception, action="deposit", actor=sam, brand=alpaca, note="x")
    assert funding(alpaca) == 0


def amount_differs_fed(owed) -> None:
    """A payout of 1.00 that the bank's statement books as 1.50."""
    owed()
    payout = Payout.objects.get()
    assert payout.amount == 1_00
    feed(camt054([Ntry(amount=150, ref="MORE-1", txs=[Tx(payout.end_to_end_id, 150)])]))


def test_an_amount_that_differs_is_said_as_money_on_the_brands_page_in_its_language(
    owed, client, fiona, alpaca
):
    amount_differs_fed(owed)
    client.force_login(fiona)

    english = client.get(f"/brands/{alpaca.slug}/reconciliation/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    german = client.get(f"/brands/{alpaca.slug}/reconciliation/", HTTP_ACCEPT_LANGUAGE="de").content.decode()

    assert "The bank booked €1.50; the payout is €1.00." in english
    assert "Die Bank hat 1,50\xa0€ gebucht; die Auszahlung beträgt 1,00\xa0€." in german
    assert "minor units" not in english and "Währungseinheiten" not in german


def test_an_amount_that_differs_stored_in_minor_units_reads_as_money_to_staff(owed, client, sam):
    amount_differs_fed(owed)
    exception = ReconciliationException.objects.get()
    # As rows made before amounts were said as money still read.
    ReconciliationException.objects.filter(pk=exception.pk).update(
        detail="The bank booked 150 minor units; the payout is 100."
    )
    client.force_login(sam)

    listed = client.get("/admin/payouts/reconciliationexception/").content.decode()
    shown = client.get(f"/admin/payouts/reconciliationexception/{exception.pk}/change/").content.decode()

    assert "-€1.50" in listed and "-150" not in listed
    assert "The bank booked €1.50; the payout is €1.00." in shown and "minor units" not in shown
