"""Olga joined Alpaca's finance team without a second factor. Fiona's €900.00 payout waits for a second
person: Olga is sent to set up her authenticator app first, signs in again with its code, and approves."""

import time

import pytest
from django.urls import reverse

from campaigns.models import Role
from campaigns.services.brands import member_add
from payouts.models import Payout
from tests.conftest import PASSWORD, SignedInClient, fund, totp_code
from tests.e2e.conftest import sign_in
from tests.payouts.conftest import IBANS

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def olga(make_user, alpaca):
    user = make_user("olga@alpaca.example", first_name="Olga")
    member_add(brand=alpaca, user=user, role=Role.FINANCE)
    return user


@pytest.fixture
def waiting_payout(fiona, alpaca):
    fund(alpaca, 2_000_00, "EUR", reference="E2E-MFA")
    browser = SignedInClient()
    browser.force_login(fiona)
    details = {"name": "Mo Manual", "email": "mo@example.com", "iban": IBANS["settle"], "consent": "on"}
    browser.post(reverse("payouts:payout_manual", args=["alpaca"]), details | {"amount": "900.00"})
    payout = Payout.objects.get()
    assert payout.status == "awaiting_approval"
    return payout


def test_a_finance_member_sets_up_totp_and_approves_a_payout_with_it(
    live_server, page, screenshot, olga, waiting_payout
):
    detail = f"{live_server.url}/brands/alpaca/payouts/{waiting_payout.pk}/"
    sign_in(page, live_server, "olga@alpaca.example")

    page.goto(detail)
    page.get_by_role("button", name="Approve").click()
    page.get_by_role("heading", name="Set up two-factor authentication").wait_for()
    screenshot(page, "40-mfa-required")
    waiting_payout.refresh_from_db()
    assert waiting_payout.status == "awaiting_approval"

    with page.expect_navigation():
        page.get_by_role("link", name="Set up your authenticator app").click()
    if "reauthenticate" in page.url:  # setting up a factor asks for the password once more
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Confirm").click()
    secret = page.locator("#authenticator_secret").input_value()
    screenshot(page, "41-totp-activate")
    page.get_by_label("Authenticator code").fill(totp_code(secret))
    with page.expect_navigation():
        page.get_by_role("button", name="Activate").click()
    screenshot(page, "42-totp-active")

    with page.expect_navigation():
        page.get_by_role("button", name="Sign out").click()
    # A code is taken once, and activating took this period's: the app's next code, which the
    # one-period tolerance (MFA_TOTP_TOLERANCE) accepts, instead of waiting up to 30 s for it.
    sign_in(page, live_server, "olga@alpaca.example", secret=secret, totp_at=time.time() + 30)
    assert "/accounts/2fa/" not in page.url  # the code was asked for, and taken

    page.goto(detail)
    with page.expect_navigation():
        page.get_by_role("button", name="Approve").click()
    screenshot(page, "43-payout-approved")

    waiting_payout.refresh_from_db()
    assert waiting_payout.approved_by == olga
    assert waiting_payout.status != "awaiting_approval"
