"""Alice, the owner, sees JoyBack's fee before she launches (the dry run counts it in what the
budget pays) and her brand's invoice on the finance page, in a real browser."""

from datetime import timedelta

import pytest
from django.utils import timezone

from campaigns.fees import fee_plans_forget
from campaigns.models import FeeCharge, FeePlan
from campaigns.services.invoices import invoices_issue
from tests.e2e.conftest import sign_in
from verification.services.participants import identity_attach, participant_create
from verification.services.rewards import action_reward

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_owner_sees_the_fees_in_the_dry_run_and_the_invoice(
    live_server, page, screenshot, alice, summer, make_user
):
    sam, tara = (
        make_user("sam@joyback.example", is_staff=True),
        make_user("tara@joyback.example", is_staff=True),
    )
    fee_plans_forget()  # as a confirmed plan change does
    FeePlan.objects.create(
        brand=summer.brand,
        currency="EUR",
        per_action=10,
        payout_bps=500,
        changed_by=sam,
        approved_by=tara,
        changed_at=timezone.now(),
    )
    person = participant_create(brand=summer.brand)
    identity = identity_attach(participant=person, provider="tiktok", subject="pat", display_name="Pat")
    action_reward(rule=summer.rules.get(trigger="tiktok_login"), identity=identity)
    FeeCharge.objects.update(created_at=timezone.now().replace(day=1) - timedelta(days=2))
    (invoice,) = invoices_issue()

    sign_in(page, live_server, alice.email, next_path=f"/brands/{summer.brand.slug}/campaigns/{summer.pk}/")
    page.locator("#dry-run input[name=budget]").fill("100")
    page.locator("#dry-run button").click()
    page.wait_for_selector("#dry-run [data-total-needed]")
    fees = page.locator("#dry-run-fees").inner_text()
    assert "€0.10 per verified action and 5% of each reward" in fees
    assert page.locator("#dry-run th", has_text="JoyBack fees").is_visible()
    screenshot(page, "fees-01-dry-run")

    page.goto(f"{live_server.url}/brands/{summer.brand.slug}/finance/")
    row = page.locator("#invoices tbody tr").first.inner_text()
    assert invoice.number in row and "€0.18" in row  # 0.15 and 19% VAT
    with page.expect_download() as download:
        page.locator("#invoices a", has_text="PDF").click()
    assert download.value.suggested_filename == f"{invoice.number}.pdf"
    screenshot(page, "fees-02-finance-invoices")
