"""What the second staff member sees: a statement awaiting approval shows its account, balances and
every line with the bank's words; an exception shows the bank's line in money and words, and a
proposed resolution is approved with one button, without typing it again."""

import pytest
from django.urls import reverse

from payouts.models import ReconciliationException
from payouts.models.reconciliation import ExceptionReason
from payouts.reconciliation.statement_import import Channel, statement_import_create
from tests.conftest import SignedInClient
from tests.payouts.camt_fixtures import Ntry, camt053
from tests.payouts.conftest import staff_user

pytestmark = pytest.mark.django_db
BANK = ("statement_upload", "statement_approve", "exception_resolve", "view_statementimport")


def staff_client(user):
    client = SignedInClient()
    client.force_login(user)
    return client


def test_the_second_person_sees_the_statement_they_are_asked_to_approve(make_user, alpaca):
    sam = staff_user(make_user, "sam@joyback.example", *BANK)
    tara = staff_user(make_user, "tara@joyback.example", *BANK)
    data = camt053(
        [
            Ntry(amount=250_00, credit=True, ref="E2E-DEP", remittance="Alpaca top-up JB-REF"),
            Ntry(amount=3_50, ref="E2E-FEE", info="Account fee"),
        ],
        opening=10_00,
    )
    job = statement_import_create(data=data, filename="stmt1.xml", channel=Channel.STAFF, uploaded_by=sam)

    html = (
        staff_client(tara)
        .get(reverse("admin:payouts_statementimport_change", args=[job.pk]))
        .content.decode()
    )

    assert "What this file would book" in html
    assert "€10.00" in html  # the opening balance
    assert "Alpaca top-up JB-REF" in html and "Account fee" in html
    assert "€250.00" in html and "€3.50" in html


def test_an_exception_reads_in_words_and_a_proposal_is_approved_without_typing_it_again(make_user, alpaca):
    sam = staff_user(make_user, "sam@joyback.example", *BANK)
    tara = staff_user(make_user, "tara@joyback.example", *BANK)
    data = camt053(
        [Ntry(amount=42_00, credit=True, ref="E2E-UNKNOWN", remittance="Invoice 7 top-up")], opening=0
    )
    statement_import_create(data=data, filename="feed.xml", channel=Channel.FEED)
    exception = ReconciliationException.objects.get(reason=ExceptionReason.UNKNOWN_LINE)
    ReconciliationException.objects.filter(pk=exception.pk).update(
        proposed_action="suspense", proposed_by=sam, proposed_note="nobody's we know"
    )
    exception.refresh_from_db()
    line = exception.line

    assert str(exception) == "Unknown statement line (open)"
    assert str(line).startswith("€42.00 in") and "Invoice 7 top-up" in str(line)
    html = (
        staff_client(tara)
        .get(reverse("admin:payouts_reconciliationexception_change", args=[exception.pk]))
        .content.decode()
    )
    assert "Money in: €42.00" in html and "Invoice 7 top-up" in html
    assert 'id="approve-proposal"' in html
    assert "Approve the proposal: " in html

    own = staff_client(sam).get(reverse("admin:payouts_reconciliationexception_change", args=[exception.pk]))
    assert 'id="approve-proposal"' not in own.content.decode()  # not for the one who proposed it
