"""The bank channel under concurrency, on PostgreSQL: approvers clicking at once, two workers
fetching the same feed, and second approvals racing; every booking happens once."""

import pytest

from joyback.ledger.models import Account, AccountKind
from payouts.models import ExceptionResolution, ReconciliationException, StatementImport
from payouts.reconciliation.exceptions import exception_resolve
from payouts.reconciliation.references import brand_deposit_reference
from payouts.reconciliation.rules import ReconciliationRefused
from payouts.reconciliation.statement_import import (
    bank_statements_fetch,
    statement_import_approve,
    statement_import_create,
)
from payouts.sandbox.files import incoming_transfer_issue
from tests.payouts.camt_fixtures import Ntry, camt053, camt054
from tests.payouts.conftest import staff_user
from tests.verification.test_claim_races import race

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
PERMISSIONS = ("statement_upload", "statement_approve", "exception_resolve")


def funding(brand) -> int:
    account = Account.objects.filter(kind=AccountKind.BRAND_FUNDING, brand_id=brand.pk).first()
    return account.balance if account else 0


@pytest.fixture
def approvers(make_user):
    return [staff_user(make_user, f"approver{i}@joyback.example", *PERMISSIONS) for i in range(4)]


def test_approvers_clicking_at_once_book_the_statement_once(sam, approvers, alpaca):
    reference = brand_deposit_reference(alpaca)
    data = camt053([Ntry(amount=400_00, credit=True, ref="RACE-1", remittance=reference)], opening=0)
    job = statement_import_create(data=data, channel="staff", uploaded_by=sam)

    results = race(4, lambda i: statement_import_approve(import_id=job.pk, approver=approvers[i]))

    done = [r for r in results if isinstance(r, StatementImport)]
    refused = [r for r in results if isinstance(r, ReconciliationRefused)]
    assert (len(done), len(refused)) == (1, 3), results
    # Read once: one exception for its line (a brand's reference on the platform's account).
    assert ReconciliationException.objects.filter(line__entry_ref="RACE-1").count() == 1
    assert funding(alpaca) == 0


def test_two_workers_fetching_the_feed_at_once_read_a_credit_once(alpaca):
    incoming_transfer_issue(amount=75_00, remittance=brand_deposit_reference(alpaca))

    results = race(3, lambda i: bank_statements_fetch())

    assert not [r for r in results if isinstance(r, Exception)], results
    assert ReconciliationException.objects.filter(amount=75_00).count() == 1 and funding(alpaca) == 0


def test_second_approvers_racing_book_suspense_once(sam, approvers, settings):
    settings.RECONCILIATION_SECOND_APPROVAL_MINOR = 10_00
    statement_import_create(
        data=camt054([Ntry(amount=90_00, credit=True, ref="RACE-STRAY", remittance="?")]), channel="feed"
    )
    exception = ReconciliationException.objects.get()
    exception_resolve(exception=exception, action="suspense", actor=sam, note="trace it")

    results = race(
        4,
        lambda i: exception_resolve(
            exception=ReconciliationException.objects.get(pk=exception.pk),
            action="suspense",
            actor=approvers[i],
            note="agreed",
        ),
    )

    assert sum(isinstance(r, ReconciliationException) for r in results) == 1, results
    assert ExceptionResolution.objects.count() == 1
    assert Account.objects.get(kind=AccountKind.SUSPENSE).balance == 90_00
