"""Sam from treasury uploads the bank's statement in the admin of a real browser; it books nothing
until Tara, a second staff member, approves it there. A credit with a brand's payment reference on
the platform's account is an exception for staff, never the brand's funding (brands fund their own
virtual IBAN at the provider)."""

import pytest

from joyback.ledger.models import Account, AccountKind
from payouts.models import StatementImport
from payouts.reconciliation.references import brand_deposit_reference
from tests.e2e.conftest import sign_in_here
from tests.payouts.camt_fixtures import Ntry, camt053
from tests.payouts.conftest import staff_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
BANK_PERMISSIONS = ("statement_upload", "statement_approve", "exception_resolve")


def admin_login(open_page, live_server, email):
    """Staff open the admin, are sent to the product's sign-in, and give password and code."""
    page = open_page()
    page.goto(f"{live_server.url}/admin/payouts/statementimport/")
    page.wait_for_url("**/accounts/login/**")
    sign_in_here(page, email)
    page.wait_for_url(f"{live_server.url}/admin/payouts/statementimport/")
    return page


def funded(brand) -> int:
    account = Account.objects.filter(kind=AccountKind.BRAND_FUNDING, brand_id=brand.pk).first()
    return account.balance if account else 0


def test_staff_upload_books_only_once_a_second_person_approves(
    open_page, live_server, screenshot, make_user, alpaca, tmp_path
):
    staff_user(make_user, "sam@joyback.example", *BANK_PERMISSIONS)
    staff_user(make_user, "tara@joyback.example", *BANK_PERMISSIONS)
    reference = brand_deposit_reference(alpaca)
    statement = tmp_path / "camt053-from-the-bank.xml"
    statement.write_bytes(
        camt053(
            [
                Ntry(amount=250_00, credit=True, ref="E2E-DEPOSIT", remittance=f"Alpaca top-up {reference}"),
                Ntry(amount=3_50, ref="E2E-FEE", info="Account fee"),
            ],
            opening=0,
        )
    )

    sam = admin_login(open_page, live_server, "sam@joyback.example")
    sam.get_by_role("link", name="Upload a bank statement").click()
    sam.locator("input[name=statement]").set_input_files(str(statement))
    sam.get_by_role("button", name="Upload for approval").click()
    sam.wait_for_selector("text=waiting for a second person's approval")
    assert sam.get_by_text("You uploaded this statement: a second staff member must approve it.").is_visible()
    assert sam.get_by_role("button", name="Approve and import").count() == 0
    screenshot(sam, "bank-statement-01-uploaded-awaiting")
    assert funded(alpaca) == 0

    tara = admin_login(open_page, live_server, "tara@joyback.example")
    tara.get_by_role("link", name="camt053-from-the-bank.xml").click()
    # The second person sees what they approve: the account, its balances, every line and its words.
    preview = tara.locator("#statement-preview")
    preview.wait_for()
    assert preview.get_by_text("What this file would book").is_visible()
    assert preview.get_by_text("Opening balance").is_visible()
    assert preview.get_by_text(f"Alpaca top-up {reference}").is_visible()
    assert preview.get_by_text("€250.00").first.is_visible() and preview.get_by_text("€3.50").is_visible()
    assert preview.get_by_text("Account fee").is_visible()
    screenshot(tara, "bank-statement-02-second-person")
    tara.get_by_role("button", name="Approve and import").click()
    tara.wait_for_selector(".messagelist")
    screenshot(tara, "bank-statement-03-approved")
    assert tara.get_by_text("Approved and imported: 0 matched, 2 exceptions.").is_visible()

    assert funded(alpaca) == 0
    job = StatementImport.objects.get()
    assert (job.uploaded_by.email, job.approved_by.email, job.status) == (
        "sam@joyback.example",
        "tara@joyback.example",
        "done",
    )

    # The line nothing explains is an exception staff read in words and money, with the bank's text.
    from payouts.models import ReconciliationException

    exception = ReconciliationException.objects.get(line__reference__contains="Account fee")
    tara.goto(f"{live_server.url}/admin/payouts/reconciliationexception/{exception.pk}/change/")
    tara.locator("#bank-line").wait_for()
    assert tara.get_by_role("heading", name="The bank's line").is_visible()
    assert tara.locator("#bank-line").get_by_text("Money out: €3.50").is_visible()
    assert tara.locator("#bank-line").get_by_text("Account fee").is_visible()
    assert "unknown_line" not in tara.locator("#content").inner_text()
    screenshot(tara, "bank-statement-04-exception-in-words")
