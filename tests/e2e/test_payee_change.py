"""Pat changes the bank details on file from another phone: the status link shows the status, and
the change goes through only with the code mailed to Pat's address on file."""

import re

import pytest
from django.core import mail

from payouts.models import PayeeAccount, PayeeChange
from tests.e2e.conftest import no_serious_violations
from tests.e2e.test_claim_flow import claim_both_rewards, live_campaign  # noqa: F401  (the fixture)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def mailed_code() -> str:
    (message,) = [m for m in mail.outbox if "code" in m.subject.lower()][-1:]
    assert message.to == ["pat@example.com"]
    return re.search(r"\b(\d{6})\b", message.body).group(1)


def test_pat_changes_the_iban_with_the_mailed_code_on_another_phone(
    live_server,
    open_page,
    screenshot,
    live_campaign,  # noqa: F811
):
    first = open_page("phone")
    claim_both_rewards(first, live_server)
    first.get_by_label("Full name, as your bank knows it").fill("Pat Example")
    first.get_by_label("Email").fill("pat@example.com")
    first.get_by_label("IBAN").fill("DE89 3704 0044 0532 0130 00")
    first.get_by_label("I agree").check()
    first.get_by_role("button", name="Send me my money").click()  # the first entry: no code
    first.wait_for_url("**/status/**")
    status_link = first.url

    other = open_page("phone")  # a new browser holding only the link
    other.goto(status_link)
    other.get_by_role("link", name="Change my bank details").click()
    other.get_by_label("Full name, as your bank knows it").fill("Pat Example")
    other.get_by_label("Email").fill("pat@example.com")
    other.get_by_label("IBAN").fill("DE75 5121 0800 1245 1261 99")
    other.get_by_role("button", name="Send me a code").click()
    other.get_by_text("We sent a code to p•••@example.com").wait_for()
    code = mailed_code()

    other.get_by_label("Code", exact=True).fill(f"{(int(code) + 1) % 10**6:06d}")
    other.get_by_label("I agree").check()
    other.get_by_role("button", name="Change my bank details").click()
    other.get_by_text("That code is wrong or expired; we sent a new one to p•••@example.com.").wait_for()
    # Taken to the error: focus moves once the swapped form has settled, a moment after its text shows.
    other.wait_for_function("document.activeElement && document.activeElement.id === 'id_code'")
    screenshot(other, "40-payee-change-wrong-code")
    no_serious_violations(other)
    assert PayeeAccount.objects.get(replaced_at__isnull=True).account_masked.endswith("3000")

    assert other.get_by_label("I agree").is_checked()  # what Pat gave stays
    other.get_by_label("Code", exact=True).fill(mailed_code())
    screenshot(other, "41-payee-change-code")
    other.get_by_role("button", name="Change my bank details").click()
    other.wait_for_url("**/status/**")
    other.locator("#status-payout").get_by_text("DE•• •••• 6199").wait_for()
    screenshot(other, "42-payee-changed")

    assert PayeeChange.objects.get().proof == "email code"
    assert [m for m in mail.outbox if m.to == ["pat@example.com"] and "were changed" in m.subject]
