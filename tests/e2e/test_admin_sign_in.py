"""Rita (staff) opens the admin: she is sent to the product's sign-in, gives her password and her
authenticator code, and approves Fiona's payout with a reason that the admin's history keeps."""

import pytest
from django.contrib.admin.models import LogEntry
from django.urls import reverse

from payouts.models import Payout
from tests.conftest import PASSWORD, SignedInClient, fund, totp_code, totp_enable
from tests.payouts.conftest import IBANS

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def rita(django_user_model):
    return totp_enable(
        django_user_model.objects.create_superuser(email="rita@joyback.example", password=PASSWORD)
    )


@pytest.fixture
def waiting_payout(fiona, alpaca):
    fund(alpaca, 2_000_00, "EUR", reference="E2E-ADMIN")
    browser = SignedInClient()
    browser.force_login(fiona)
    details = {"name": "Mo Manual", "email": "mo@example.com", "iban": IBANS["settle"], "consent": "on"}
    browser.post(reverse("payouts:payout_manual", args=["alpaca"]), details | {"amount": "900.00"})
    return Payout.objects.get()


def test_staff_sign_in_to_the_admin_with_their_code_and_approve_with_a_reason(
    live_server, page, screenshot, rita, waiting_payout
):
    page.goto(f"{live_server.url}/admin/payouts/payout/")
    page.wait_for_url("**/accounts/login/**")  # not Django's own admin login
    page.get_by_label("Email").fill(rita.email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign In").click()
    page.get_by_label("Code").fill(totp_code())
    page.get_by_role("button", name="Sign In").click()
    page.wait_for_url(f"{live_server.url}/admin/payouts/payout/")
    assert page.get_by_text("€900.00").first.is_visible()

    page.locator(f"input[name=_selected_action][value='{waiting_payout.pk}']").check()
    page.locator("select[name=action]").select_option("approve")
    page.get_by_role("button", name="Go").click()
    page.get_by_text("Give a reason").wait_for()  # the answer to the POST, not the page before it
    waiting_payout.refresh_from_db()
    assert waiting_payout.status == "awaiting_approval"

    page.locator(f"input[name=_selected_action][value='{waiting_payout.pk}']").check()
    page.locator("select[name=action]").select_option("approve")
    page.get_by_placeholder("Why (recorded with your name)").fill("Confirmed with Fiona by phone")
    screenshot(page, "50-admin-approve-with-reason")
    page.get_by_role("button", name="Go").click()
    page.get_by_text("1 payout(s) approved").wait_for()
    screenshot(page, "51-admin-approved")

    waiting_payout.refresh_from_db()
    assert waiting_payout.approved_by == rita
    entry = LogEntry.objects.get(object_id=str(waiting_payout.pk))
    assert entry.user == rita and "Confirmed with Fiona by phone" in entry.get_change_message()


def test_staff_without_a_second_factor_are_sent_to_set_one_up_before_the_admin_opens(
    live_server, page, screenshot, django_user_model
):
    django_user_model.objects.create_superuser(email="nora@joyback.example", password=PASSWORD)

    page.goto(f"{live_server.url}/admin/payouts/payout/")
    page.wait_for_url("**/accounts/login/**")
    page.get_by_label("Email").fill("nora@joyback.example")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign In").click()
    page.wait_for_url(f"{live_server.url}{reverse('mfa_index')}")

    assert page.get_by_text("Set up two-factor authentication before you open the admin").is_visible()
    screenshot(page, "52-admin-needs-a-second-factor")
    page.goto(f"{live_server.url}/admin/")
    page.wait_for_url(f"{live_server.url}{reverse('mfa_index')}")
