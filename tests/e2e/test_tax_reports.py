"""Rita makes the year's DAC7 report in the admin of a real browser, reviews it against the ledger
and marks it filed; Tom, a second staff member, confirms the filing there."""

import pytest
from django.core.management import call_command
from django.utils import timezone

from payouts.models import TaxReport
from tests.e2e.conftest import sign_in_here
from tests.payouts.conftest import staff_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def admin_login(open_page, live_server, email, size="desktop"):
    page = open_page(size)
    page.goto(f"{live_server.url}/admin/payouts/taxreport/")
    page.wait_for_url("**/accounts/login/**")
    sign_in_here(page, email)
    page.wait_for_url(f"{live_server.url}/admin/payouts/taxreport/")
    return page


def test_a_year_is_made_reviewed_and_filed_by_two_people(
    open_page, live_server, screenshot, make_user, settings
):
    settings.TAX_OPERATOR_TIN = "DE123456789"
    settings.INVOICE_ISSUER_ADDRESS = "Torstraße 1, 10119 Berlin"
    for name in ("demo_seed", "demo_funding", "demo_tax"):
        call_command(name)  # the demo made the drafts; Rita makes the DAC7 one again
    staff_user(make_user, "rita@joyback.example", "file_taxreport", "view_taxreport")
    staff_user(make_user, "tom@joyback.example", "file_taxreport", "view_taxreport")

    rita = admin_login(open_page, live_server, "rita@joyback.example")
    rita.get_by_role("link", name="Make a year's tax report").click()
    rita.locator("input[name=year]").fill(str(timezone.now().year))
    rita.locator("select[name=jurisdiction]").select_option("dac7")
    rita.get_by_role("button", name="Save").click()
    rita.wait_for_selector("#tax-rows")
    assert rita.get_by_text("The report was made from the ledger and its file checked.").is_visible()
    assert rita.get_by_text("Jonas Becker").is_visible() and rita.get_by_text("Lucía Fernández").is_visible()
    screenshot(rita, "tax-report-01-made-from-the-ledger")
    rita.locator("input[name=reference]").fill("BZSt-DAC7-2027-000123")
    rita.get_by_role("button", name="Mark filed").click()
    rita.wait_for_selector("text=a second staff member must confirm it")
    screenshot(rita, "tax-report-02-marked-filed")

    tom = admin_login(open_page, live_server, "tom@joyback.example", size="phone")
    tom.get_by_role("link", name=f"EU (DAC7) {timezone.now().year} report").first.click()
    tom.get_by_role("button", name="Confirm the filing").click()
    tom.wait_for_selector("text=The filing is confirmed.")
    screenshot(tom, "tax-report-03-confirmed-phone")
    report = TaxReport.objects.get(jurisdiction="dac7")
    assert (report.status, report.filed_by.email, report.filing_confirmed_by.email) == (
        "filed",
        "rita@joyback.example",
        "tom@joyback.example",
    )
