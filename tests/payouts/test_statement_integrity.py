"""Statements chain (each opening is the previous closing, sequence numbers follow on), their
entries add up, and the ledger's platform bank equals the bank's closing balance: a difference is
shown, alerted on (/healthz/, the admin, ledger_check) and pauses moves from the platform's account
until staff clear it; brands' payouts leave their own accounts and go on."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from campaigns.services.funding import brand_deposit_record
from joyback.ledger.models import Account, AccountKind
from payouts.models import Payout, ReconciliationException, SandboxBankPayment, StatementImport, StatementLine
from payouts.reconciliation.bank_health import platform_moves_paused
from payouts.reconciliation.exceptions import ALERTS, exception_resolve
from payouts.reconciliation.references import brand_deposit_reference
from payouts.reconciliation.rules import ReconciliationRefused
from payouts.reconciliation.statement_import import statement_import_create
from payouts.submission.sweeps import payouts_sweep
from tests.payouts.camt_fixtures import Ntry, camt053

pytestmark = pytest.mark.django_db


def feed(data):
    return statement_import_create(data=data, filename="bank.xml", channel="feed")


def alerts():
    return sorted(ReconciliationException.objects.filter(reason__in=ALERTS).values_list("reason", "amount"))


def deposit(brand, amount, ref):
    """A brand's transfer to the platform's account from before brands held their own money, booked
    then (brand_deposit_record: the ledger's platform bank holds it for the brand until custody_move),
    as the bank's statement reports it now: the line itself books nothing more (an exception)."""
    brand_deposit_record(brand=brand, amount=amount, currency="EUR", bank_reference=ref)
    return Ntry(amount=amount, credit=True, ref=ref, remittance=brand_deposit_reference(brand))


def held_before(brand, amount=100_00):
    """What the platform held for the brand before brands held their own, never on a statement."""
    brand_deposit_record(brand=brand, amount=amount, currency="EUR", bank_reference="HELD-BEFORE")


def test_statements_that_follow_on_raise_nothing_and_the_ledger_agrees(alpaca):
    feed(camt053([deposit(alpaca, 100_00, "D1")], msg_id="S1", seq=1, opening=0))
    feed(camt053([deposit(alpaca, 50_00, "D2")], msg_id="S2", seq=2, opening=100_00))

    assert alerts() == []
    assert Account.objects.get(kind=AccountKind.PLATFORM_BANK).balance == 150_00
    call_command("ledger_check")


def test_a_gap_in_the_sequence_is_an_alert_and_the_lines_still_book(alpaca):
    feed(camt053([deposit(alpaca, 100_00, "D1")], msg_id="S1", seq=1, opening=0))

    feed(camt053([deposit(alpaca, 50_00, "D3")], msg_id="S3", seq=3, opening=100_00))

    alert = ReconciliationException.objects.get(reason="sequence_gap")
    assert "1 missing" in alert.detail and alert.brand is None and alert.statement.sequence == 3
    assert Account.objects.get(kind=AccountKind.BRAND_FUNDING).balance == 150_00


def test_an_opening_balance_that_is_not_the_previous_closing_is_an_alert(alpaca):
    feed(camt053([deposit(alpaca, 100_00, "D1")], msg_id="S1", seq=1, opening=0))

    feed(camt053([], msg_id="S2", seq=2, opening=90_00))

    assert ("opening_mismatch", -10_00) in alerts()


def test_the_same_statement_twice_is_no_gap(alpaca):
    data = camt053([deposit(alpaca, 100_00, "D1")], msg_id="S1", seq=1, opening=0)
    feed(data)

    again = feed(data)

    assert again.known_lines == 1 and alerts() == []


def test_entries_that_do_not_add_up_refuse_the_file_and_book_nothing(alpaca):
    line = Ntry(amount=100_00, credit=True, ref="D1", remittance=brand_deposit_reference(alpaca))
    data = camt053([line], msg_id="S1", seq=1, opening=0, closing=1_000_00)

    job = feed(data)

    assert job.status == "failed" and "does not add up" in job.error
    assert StatementLine.objects.count() == 0
    assert not Account.objects.filter(kind=AccountKind.BRAND_FUNDING, balance__gt=0).exists()


def test_money_the_ledger_holds_that_the_bank_does_not_is_an_alert_until_staff_clear_it(
    owed, alpaca, client, sam, settings
):
    # Money the platform held for Alpaca (100.00) was booked into the ledger, never reported by the bank.
    held_before(alpaca)
    job = feed(camt053([], msg_id="S1", seq=1, opening=0))
    assert job.status == "done"
    drift = ReconciliationException.objects.get(reason="bank_drift")
    assert drift.amount == 100_00 and platform_moves_paused()

    assert client.get("/healthz/").json() == {"status": "failing"}  # the status alone, anonymously
    client.force_login(sam)
    health = client.get("/healthz/")
    assert health.status_code == 503 and "bank_drift" in health.json()["bank"][0]
    ready = client.get("/healthz/ready")  # the load balancer keeps the web nodes: they are fine
    assert ready.status_code == 200 and ready.json()["bank"] == []
    with pytest.raises(CommandError, match="against the bank"):
        call_command("ledger_check")

    client.force_login(sam)
    admin_page = client.get("/admin/payouts/reconciliationexception/").content.decode()
    assert "Moves from the platform&#x27;s account are paused" in admin_page
    # The brand pays from its own balance account at the provider: the platform's drift holds none
    # of its payouts.
    owed()
    payout = Payout.objects.get()
    payouts_sweep(now=timezone.now() + timedelta(minutes=5))
    payout.refresh_from_db()
    assert payout.status == "settled" and SandboxBankPayment.objects.count() == 1

    exception_resolve(exception=drift, action="clear", actor=sam, note="budget booked by hand")

    assert not platform_moves_paused()
    assert client.get("/healthz/").status_code == 200
    drift.refresh_from_db()
    assert drift.resolutions.get().note == "budget booked by hand"


def test_a_drift_below_the_threshold_alerts_without_pausing(summer, settings):
    settings.BANK_DRIFT_PAUSE_MINOR = 100_00
    held_before(summer.brand)

    feed(camt053([], msg_id="S1", seq=1, opening=0))

    assert alerts() == [("bank_drift", 100_00)] and not platform_moves_paused()


def test_staff_see_the_alert_in_the_admin(summer, client, sam):
    held_before(summer.brand)
    feed(camt053([], msg_id="S1", seq=1, opening=0))
    client.force_login(sam)

    body = client.get("/admin/payouts/reconciliationexception/").content.decode()

    assert "BANK ALERT" in body and "bank_drift" in body


def test_staff_read_the_drift_as_money(summer, client, sam):
    held_before(summer.brand)
    feed(camt053([], msg_id="S1", seq=1, opening=0))
    drift = ReconciliationException.objects.get(reason="bank_drift")
    client.force_login(sam)

    body = client.get(f"/admin/payouts/reconciliationexception/{drift.pk}/change/").content.decode()

    assert "held €100.00" in body and "statement €0.00." in body and "minor units" not in body


def test_an_alert_is_cleared_only_by_staff_with_a_reason_and_a_line_is_never_just_cleared(summer, sam, fiona):
    feed(camt053([Ntry(amount=5_00, credit=True, ref="X", remittance="?")], msg_id="S1", seq=1, opening=0))
    drift = ReconciliationException.objects.get(reason="bank_drift")
    line = ReconciliationException.objects.get(reason="unknown_line")

    with pytest.raises(ReconciliationRefused, match="Only platform staff"):
        exception_resolve(exception=drift, action="clear", actor=fiona, note="fine")
    with pytest.raises(ReconciliationRefused, match="Say why"):
        exception_resolve(exception=drift, action="clear", actor=sam, note="")
    with pytest.raises(ReconciliationRefused, match="An alert is cleared"):
        exception_resolve(exception=line, action="clear", actor=sam, note="go away")

    assert ReconciliationException.objects.filter(status="open").count() == 2
    assert StatementImport.objects.count() == 1
