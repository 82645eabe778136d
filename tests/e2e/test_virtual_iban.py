"""Alice, the owner, opens her brand's funding page in a real browser: she sees the brand's own
virtual IBAN, has the sandbox bank send money to it, and the funding balance shows it once the
provider's signed webhooks booked it."""

import pytest

from joyback.ledger.models import Account, AccountKind
from payouts.models import ProviderDeposit, VirtualAccount
from tests.e2e.conftest import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_owner_funds_the_brand_through_its_virtual_iban(live_server, page, screenshot, alice, alpaca):
    sign_in(page, live_server, alice.email, next_path=f"/brands/{alpaca.slug}/")
    page.get_by_role("link", name="Funding", exact=True).click()
    page.wait_for_selector("[data-testid=virtual-iban]")
    account = VirtualAccount.objects.get(brand=alpaca)
    shown = page.get_by_test_id("virtual-iban").inner_text()
    assert shown == account.iban_grouped and account.status == "open"
    assert page.get_by_text("Nothing has arrived on the virtual account yet.").is_visible()
    screenshot(page, "funding-01-virtual-iban")

    page.get_by_label("Amount").fill("250.00")
    page.get_by_role("button", name="Send to my virtual IBAN").click()
    page.wait_for_selector("tr.deposit[data-status=booked]")
    assert page.get_by_text("it is booked when the provider reports it").is_visible()
    row = page.locator("tr.deposit").first.inner_text()
    assert "250.00" in row and "Booked to your funding" in row
    screenshot(page, "funding-02-deposit-booked")

    deposit = ProviderDeposit.objects.get()
    assert (deposit.brand_id, deposit.amount, deposit.status) == (alpaca.pk, 250_00, "booked")
    assert Account.objects.get(kind=AccountKind.BRAND_FUNDING, brand_id=alpaca.pk).balance == 250_00

    page.get_by_role("link", name="Overview").click()
    tile = page.locator(".tile", has_text="Available funding")
    assert "250.00" in tile.inner_text()
    screenshot(page, "funding-03-dashboard-balance")
