"""Issue 33's "done when", in a real browser: a new brand is onboarded at the sandbox provider (its
own legal entity, account holder and balance account), Alice funds its own virtual IBAN, a person
is paid from the brand's own balance account, the platform's fee moves from that account to the
platform's (booked on the provider's word), and Alice sees the month's invoice on the finance page
and downloads it as PDF and CSV."""

import csv
import io
from pathlib import Path

import pytest
from django.test import override_settings
from django.utils import timezone

from campaigns.fees import fee_plans_forget
from campaigns.models import FeePlan
from campaigns.services.invoices import invoice_issue
from joyback.ledger.services import brand_balance_account
from payouts import fees
from payouts.models import FeeTransfer, Payout, ReconciliationException, SandboxBankPayment
from tests.e2e.conftest import sign_in
from tests.payouts.test_custody import (
    crossing_transactions,
    custody_brand,
    live_campaign,
    pay,
    provider_balance_of,
    webhooks,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_new_brand_pays_from_its_own_account_pays_the_fee_and_gets_its_invoice(
    live_server, page, screenshot, client, alice, make_user, django_capture_on_commit_callbacks
):
    with override_settings(SITE_URL=live_server.url):
        brand, account = custody_brand(alice, "alpaca", django_capture_on_commit_callbacks)
    fee_plans_forget()  # as a confirmed plan change does
    FeePlan.objects.create(
        brand=brand,
        currency="EUR",
        per_action=10,
        payout_bps=500,
        changed_by=make_user("sam@joyback.example", is_staff=True),
        approved_by=make_user("tara@joyback.example", is_staff=True),
        changed_at=timezone.now(),
    )

    # Alice funds the brand's own virtual IBAN from the funding page.
    sign_in(page, live_server, alice.email, next_path=f"/brands/{brand.slug}/funding/")
    assert page.get_by_test_id("onboarding-status").inner_text() == "Verified by the payment provider"
    assert page.get_by_test_id("virtual-iban").inner_text() == account.iban_grouped
    page.get_by_label("Amount").fill("100.00")
    page.get_by_role("button", name="Send to my virtual IBAN").click()
    page.wait_for_selector("tr.deposit[data-status=booked]")
    screenshot(page, "own-money-01-funded")
    assert provider_balance_of(account) == 100_00

    # A person earns a reward and is paid from the brand's own balance account.
    campaign = live_campaign(brand, 100_00, "summer-glow")
    payout = pay(client, campaign, django_capture_on_commit_callbacks, subject="pat")
    assert payout.status == "settled"
    sent = SandboxBankPayment.objects.get(end_to_end_id=payout.end_to_end_id)
    assert sent.balance_account_id == account.balance_account_id

    # The platform's fee leaves the brand's own account for the platform's, booked on the provider's word.
    assert fees.fee_transfers_send() == {"booked": 1}
    webhooks()
    fee_transfer = FeeTransfer.objects.get()
    assert fee_transfer.amount == 10 + payout.amount * 500 // 10_000
    ledger = brand_balance_account(brand_id=brand.pk, currency="EUR")
    ledger.refresh_from_db()
    assert provider_balance_of(account) == 100_00 - payout.amount - fee_transfer.amount == ledger.balance
    invoice = invoice_issue(brand=brand, currency="EUR", period_start=timezone.localdate())
    assert invoice.net == fee_transfer.amount

    page.goto(f"{live_server.url}/brands/{brand.slug}/payouts/")
    assert Payout.objects.get().status == "settled"
    screenshot(page, "own-money-02-payouts")

    page.goto(f"{live_server.url}/brands/{brand.slug}/finance/")
    row = page.locator("#invoices tbody tr").first.inner_text()
    assert invoice.number in row
    plan = page.locator("#invoices p").first.inner_text()
    assert "€0.10 per verified action and 5% of each reward" in plan
    accounts = page.locator("tr", has_text="Balance account at the provider EUR").first.inner_text()
    assert f"{ledger.balance / 100:.2f}" in accounts
    screenshot(page, "own-money-03-finance-invoice")
    with page.expect_download() as pdf:
        page.locator("#invoices a", has_text="PDF").click()
    assert pdf.value.suggested_filename == f"{invoice.number}.pdf"
    assert Path(pdf.value.path()).read_bytes()[:5] == b"%PDF-"
    with page.expect_download() as table:
        page.locator("#invoices a", has_text="CSV").click()
    lines = list(csv.reader(io.StringIO(Path(table.value.path()).read_text(encoding="utf-8"))))
    assert any(invoice.number in ",".join(line) for line in lines)

    assert not ReconciliationException.objects.exists()
    assert crossing_transactions() == []
