"""Alice uploads a bank statement in a real browser and watches the exceptions queue fill and empty."""

import pytest

from campaigns.services import brand_deposit_record
from tests.e2e.conftest import sign_in
from tests.payouts.camt_fixtures import Ntry, Tx, camt053

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_statement_upload_fills_the_exceptions_queue(
    live_server, page, screenshot, alice, alpaca, tmp_path
):
    brand_deposit_record(brand=alpaca, amount=100_00, currency="EUR", bank_reference="E2E-FUND")
    statement = tmp_path / "camt053.xml"
    statement.write_bytes(
        camt053(
            [
                Ntry(amount=12_00, ref="E2E-UNKNOWN", txs=[Tx("JBNOBODYKNOWSTHIS", 12_00)]),
                Ntry(amount=3_50, ref="E2E-FEE", info="Account fee"),
            ]
        )
    )
    sign_in(page, live_server, "alice@alpaca.example", next_path="/brands/alpaca/reconciliation/")
    page.wait_for_url(f"{live_server.url}/brands/alpaca/reconciliation/")
    assert page.get_by_role("heading", name="Reconciliation").is_visible()

    page.locator("input[name=statement]").set_input_files(str(statement))
    page.get_by_role("button", name="Upload statement").click()

    page.wait_for_selector("#exceptions tr.exception")
    assert page.locator("#exceptions tr.exception").count() == 2
    assert page.get_by_text("Account fee").first.is_visible()
    screenshot(page, "reconciliation-01-exceptions")

    fee = page.locator("#exceptions tr.exception", has_text="Account fee")
    fee.locator("select[name=action]").select_option("suspense")
    fee.get_by_role("button", name="Resolve").click()
    page.wait_for_function("document.querySelectorAll('#exceptions tr.exception').length === 1")
    screenshot(page, "reconciliation-02-resolved")
