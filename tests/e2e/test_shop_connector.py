"""Alice connects Alpaca's Shopify shop in the dashboard; a buyer's order in the sandbox shop
becomes cashback, held through the return window, and the buyer claims it from the link in the
order mail and watches it reach "Paid"."""

from datetime import timedelta

import pytest
from django.utils import timezone

from campaigns.services.campaigns import campaign_create, campaign_transition
from campaigns.services.funding import campaign_fund
from tests.conftest import fund
from tests.e2e.conftest import sign_in
from verification.cashback import purchase_confirm
from verification.models import Purchase

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

POLL_MS = 15_000  # the status page polls its payout fragment every 10 s


@pytest.fixture
def cashback(alpaca):
    fund(alpaca, 500_00, "EUR", reference="E2E-FUND")
    campaign = campaign_create(
        brand=alpaca,
        name="Cashback Week",
        slug="cashback-week",
        package="cashback",
        currency="EUR",
        countries=["DE"],
        languages=["en"],
    )
    campaign.rules.filter(trigger="purchase").update(cashback_basis_points=500, return_window_days=14)
    campaign_fund(campaign=campaign, amount=100_00)
    return campaign_transition(campaign=campaign, to="live")


def test_a_connected_sandbox_shops_order_earns_cashback_that_is_paid(
    live_server, page, phone, screenshot, alice, cashback
):
    sign_in(page, live_server, "alice@alpaca.example", next_path="/brands/alpaca/shops/")
    page.wait_for_url(f"{live_server.url}/brands/alpaca/shops/")

    page.get_by_label("Shop", exact=True).select_option("shopify")
    page.get_by_label("Shop domain").fill("alpaca-coffee.myshopify.com")
    page.get_by_label("Webhook secret").fill("shpss_e2e_sandbox_secret")
    page.get_by_label("Cashback campaign").select_option(label="Cashback Week")
    screenshot(page, "shops-01-connect")
    page.get_by_role("button", name="Connect", exact=True).click()
    # The shop's own admin: installing the app there is the proof the shop is Alpaca's.
    page.get_by_text("Install JoyBack on alpaca-coffee.myshopify.com").wait_for()
    page.get_by_role("button", name="Install app").click()
    page.get_by_text("Connected. Now add the webhooks in your shop").wait_for()
    assert "hmac_sha256" in page.get_by_test_id("claim-link-template").inner_text()
    screenshot(page, "shops-02-connected")

    page.get_by_role("link", name="Open the sandbox shop").click()
    page.get_by_label("Your email").fill("pat@example.com")
    page.get_by_label("Order total (EUR)").fill("40.00")
    page.get_by_role("button", name="Pay").click()
    mail = page.get_by_test_id("order-mail").first
    mail.get_by_text("purchase_recorded").wait_for()
    screenshot(page, "shops-03-sandbox-order")
    claim_link = mail.get_by_test_id("claim-link").get_attribute("href")

    page.go_back()
    page.go_back()
    page.reload()
    orders = page.get_by_test_id("shop-orders")
    orders.get_by_text("In the return window").wait_for()
    assert orders.get_by_text("pat@example.com").is_visible()

    # Fourteen days later, nothing returned: the window closes (the worker's scheduled task).
    purchase = Purchase.objects.get()
    purchase_confirm(purchase_id=purchase.pk, now=timezone.now() + timedelta(days=15))
    page.reload()
    orders.get_by_text("Approved").wait_for()
    screenshot(page, "shops-04-orders")

    phone.goto(f"{live_server.url}{claim_link}")
    phone.get_by_label("Full name, as your bank knows it").fill("Pat Example")
    phone.get_by_label("Email").fill("pat@example.com")
    phone.get_by_label("IBAN").fill("DE89 3704 0044 0532 0130 00")
    phone.get_by_text("Commerzbank").wait_for()
    phone.get_by_label("I agree").check()
    screenshot(phone, "shops-05-claim-payee")
    phone.get_by_role("button", name="Send me my money").click()
    phone.wait_for_url("**/status/**")
    phone.locator("#status-payout .badge").filter(has_text="Paid").wait_for(timeout=POLL_MS)
    assert phone.locator("#status-payout td").get_by_text("€2.00").is_visible()  # 5 % of 40.00
    screenshot(phone, "shops-06-paid")
