"""A person shares their code; a buyer follows their link to the sandbox shop and orders with it;
the poster sees the order pending on their status page, confirmed once the return window closes
(time moved on in the test), and paid to their bank account; the buyer's refund takes it back. The
poster buying with their own code goes to the brand's review queue."""

from datetime import timedelta

import pytest
from django.utils import timezone

from campaigns.services.campaigns import campaign_create, campaign_transition
from campaigns.services.funding import campaign_fund
from campaigns.services.rules import rule_save
from payouts.payees.services import payee_account_save, payee_onboard
from payouts.rails import iban_check
from tests.conftest import fund
from tests.e2e.conftest import sign_in
from verification.cashback import purchase_confirm
from verification.connectors import shop_connect
from verification.models import ActionClaim, Purchase
from verification.services.participants import identity_attach, participant_create
from verification.services.rewards import action_reward

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

POLL_MS = 15_000  # the status page polls its fragments every 10 s


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


@pytest.fixture
def poster(alpaca, creators, cashback):
    """Poe, who connected TikTok on the creators' campaign and gave their bank details; the
    campaign pays 10 % of each order Poe's code brings, the sandbox Shopify shop is connected."""
    rule_save(campaign=creators, trigger="referral", reward_amount=8_00, cashback_basis_points=1000)
    shop_connect(
        brand=alpaca,
        kind="shopify",
        domain="alpaca-coffee.myshopify.com",
        webhook_secret="shpss_e2e_sandbox_secret",
        campaign=cashback,
        proof="sandbox_demo",
    )
    person = participant_create(brand=alpaca)
    identity = identity_attach(
        participant=person, provider="tiktok", subject="open-id-poe", display_name="Poe"
    )
    action_reward(rule=creators.rules.get(trigger="tiktok_login"), identity=identity)
    payee = payee_account_save(
        participant=person,
        name="Poe Example",
        email="poe@example.com",
        phone="",
        bank_account=iban_check("DE89370400440532013000"),
        currency="EUR",
        consent_version="e2e",
        onboard=False,
    )
    payee_onboard(payee_id=payee.pk)
    return person


def test_a_code_brings_an_order_that_is_held_confirmed_paid_and_clawed_back(
    live_server, page, phone, screenshot, alice, creators, poster
):
    status = f"{live_server.url}/c/creators/status/{poster.token}/"
    phone.goto(status)
    code = phone.locator(".referral-code").inner_text()
    link = phone.locator("a.referral-link").get_attribute("href")
    assert len(code) == 6 and f"/r/{code}/" in link
    screenshot(phone, "referral-01-poster-code")

    # A buyer follows the link from the video to the shop and orders.
    page.goto(link)
    page.get_by_test_id("landing-ref").wait_for()
    page.get_by_label("Your email").fill("kim@example.com")
    page.get_by_label("Order total (EUR)").fill("40.00")
    page.get_by_role("button", name="Pay").click()
    page.get_by_test_id("order-mail").first.get_by_text("purchase_recorded").wait_for()
    screenshot(page, "referral-02-shop-order")

    phone.reload()
    sale = phone.locator(".referred-order").first
    sale.get_by_text("Confirmed once the shop's return window closes").wait_for()
    assert "€4.00" in sale.inner_text() and "kim@" not in phone.content()
    screenshot(phone, "referral-03-pending")

    # Fourteen days later, nothing returned: the window closes (the worker's scheduled task).
    purchase_confirm(purchase_id=Purchase.objects.get().pk, now=timezone.now() + timedelta(days=15))
    phone.reload()
    phone.locator(".referred-order .badge", has_text="Confirmed").first.wait_for()
    phone.locator("#status-payout .paid-total").filter(has_text="€5.00").wait_for(timeout=POLL_MS)  # 1 + 4
    screenshot(phone, "referral-04-paid")

    # The buyer sends everything back: what was paid is taken back from the poster.
    page.get_by_role("button", name="Refund this order").first.click()
    page.get_by_test_id("order-mail").first.wait_for()
    phone.reload()
    phone.locator(".referred-order .badge", has_text="Taken back").first.wait_for()
    assert ActionClaim.objects.get(referred_purchase__isnull=False).status == "clawed_back"
    screenshot(phone, "referral-05-clawed-back")


def test_the_marketer_sees_sales_by_poster_and_the_cost_per_sale(
    live_server, page, phone, screenshot, alice, creators, poster
):
    phone.goto(f"{live_server.url}/c/creators/status/{poster.token}/")
    phone.goto(phone.locator("a.referral-link").get_attribute("href"))
    phone.get_by_label("Your email").fill("kim@example.com")
    phone.get_by_role("button", name="Pay").click()
    phone.get_by_test_id("order-mail").first.get_by_text("purchase_recorded").wait_for()

    sign_in(page, live_server, "alice@alpaca.example", next_path="/brands/alpaca/")
    table = page.locator("#referral-sales")
    table.get_by_text("Poe").wait_for()
    assert page.get_by_test_id("referred-sales").inner_text() == "1"
    row = table.locator("tbody tr").first.inner_text()
    assert "€40.00" in row and "€4.00" in row and "kim@" not in page.content()
    screenshot(page, "referral-07-overview")


def test_the_poster_buying_with_their_own_code_goes_to_review(
    live_server, page, phone, screenshot, alice, creators, poster
):
    phone.goto(f"{live_server.url}/c/creators/status/{poster.token}/")
    link = phone.locator("a.referral-link").get_attribute("href")
    phone.goto(link)
    phone.get_by_label("Your email").fill("poe@example.com")  # the email Poe is paid under
    phone.get_by_role("button", name="Pay").click()
    phone.get_by_test_id("order-mail").first.get_by_text("purchase_recorded").wait_for()

    sign_in(page, live_server, "alice@alpaca.example", next_path="/brands/alpaca/review/")
    page.wait_for_url(f"{live_server.url}/brands/alpaca/review/")
    page.get_by_text("A referred order with the poster's own email address").first.wait_for()
    screenshot(page, "referral-06-review")
