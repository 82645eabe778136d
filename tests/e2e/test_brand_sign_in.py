"""Alice, owner of Alpaca Coffee, signs in in a real browser and reads her brand's balances."""

import pytest

from tests.conftest import PASSWORD, fund, totp_code

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_member_signs_in_and_sees_the_ledger_balances(live_server, page, screenshot, alice, alpaca):
    fund(alpaca, 1234_56, "EUR", reference="E2E-1")

    page.goto(live_server.url)
    screenshot(page, "01-home")
    page.get_by_role("link", name="Sign in to your brand").click()

    page.get_by_label("Email").fill("alice@alpaca.example")
    page.get_by_label("Password").fill(PASSWORD)
    screenshot(page, "02-sign-in")
    page.get_by_role("button", name="Sign In").click()
    page.get_by_label("Code").fill(totp_code())  # Alice, an owner, has her authenticator app
    page.get_by_role("button", name="Sign In").click()

    page.wait_for_url(f"{live_server.url}/brands/alpaca/")
    assert page.get_by_role("heading", name="Overview").is_visible()
    assert page.locator("#balances").get_by_text("€1,234.56").is_visible()
    screenshot(page, "03-dashboard")

    # The ledger is finance's reading, on its own page.
    page.get_by_role("link", name="Accounts and ledger").first.click()
    assert page.get_by_text("to the virtual account").first.is_visible()  # its deposit, on its own IBAN
    screenshot(page, "03-finance")

    page.get_by_role("link", name="Alpaca Coffee funding").click()
    assert page.get_by_role("heading", name="Statement").is_visible()
    screenshot(page, "04-account-statement")

    page.get_by_role("link", name="Security").click()
    assert page.get_by_text("Authenticator App").first.is_visible()
    screenshot(page, "05-two-factor")


def test_a_wrong_password_shows_a_clear_message(live_server, page, screenshot, alice):
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Email").fill("alice@alpaca.example")
    page.get_by_label("Password").fill("wrong password")
    page.get_by_role("button", name="Sign In").click()

    assert page.get_by_text("not correct").is_visible()
    screenshot(page, "06-sign-in-refused")
