"""Pat, a new visitor, claims the rewards of a live campaign in a real browser, on a phone-sized screen."""

import pytest

from campaigns.services.campaigns import campaign_create, campaign_transition
from campaigns.services.funding import campaign_fund
from tests.conftest import fund
from tests.e2e.conftest import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def live_campaign(alpaca):
    fund(alpaca, 500_00, "EUR", reference="E2E-FUND")
    campaign = campaign_create(
        brand=alpaca,
        name="Summer Glow",
        slug="summer-glow",
        package="all_in_one",
        currency="EUR",
        countries=["DE"],
        languages=["en", "de"],
        headline="Get paid for loving our summer range",
    )
    campaign_fund(campaign=campaign, amount=100_00)
    return campaign_transition(campaign=campaign, to="live")


# The status page polls its payout fragment every 10 s; a payout shown "Paid" may take one poll.
POLL_MS = 15_000


def claim_both_rewards(page, live_server, screenshot=None):
    """Pat connects TikTok and opts in on WhatsApp through the sandboxes: two approved rewards."""
    page.goto(f"{live_server.url}/c/summer-glow/")
    page.get_by_role("button", name="Connect TikTok").wait_for()
    if screenshot:
        screenshot(page, "10-landing")

    page.get_by_role("button", name="Connect TikTok").click()
    page.get_by_label("Sandbox TikTok user (display name)").fill("Pat Creator")
    if screenshot:
        screenshot(page, "11-sandbox-tiktok")
    page.get_by_role("button", name="Authorize").click()
    page.get_by_text("TikTok connected as Pat Creator").wait_for()

    page.get_by_role("button", name="Opt in on WhatsApp").click()
    page.get_by_role("link", name="Open WhatsApp").click()
    page.get_by_label("Your WhatsApp number").fill("+49 151 23456789")
    if screenshot:
        screenshot(page, "12-sandbox-whatsapp")
    page.get_by_role("button", name="Send").click()
    page.locator(".step.state-approved").nth(1).wait_for()
    if screenshot:
        screenshot(page, "13-steps-done")


def both_rewards(campaign) -> str:
    """The TikTok login and WhatsApp opt-in rewards together, as the page shows euros."""
    total = sum(
        campaign.rules.filter(trigger__in=["tiktok_login", "whatsapp_optin"]).values_list(
            "reward_amount", flat=True
        )
    )
    return f"€{total // 100}.{total % 100:02d}"


def payout_badge(page):
    return page.locator("#status-payout .badge")


def test_a_new_user_claims_a_reward_and_is_paid(live_server, phone, screenshot, live_campaign):
    page = phone
    claim_both_rewards(page, live_server, screenshot)

    page.get_by_label("Full name, as your bank knows it").fill("Pat Example")
    page.get_by_label("Email").fill("pat@example.com")
    page.get_by_label("IBAN").fill("DE89 3704 0044 0532 0130 01")
    page.get_by_text("check digits do not match").wait_for()
    page.get_by_label("IBAN").fill("DE89 3704 0044 0532 0130 00")
    page.get_by_text("Commerzbank").wait_for()
    page.get_by_label("I agree").check()
    screenshot(page, "14-payee-details")
    page.get_by_role("button", name="Send me my money").click()

    page.wait_for_url("**/status/**")
    page.get_by_text("Connect your TikTok account").wait_for()
    payout_badge(page).filter(has_text="Paid").wait_for(timeout=POLL_MS)
    screenshot(page, "15-status-paid")
    status = page.locator("#status-payout")
    assert status.get_by_text("DE•• •••• 3000").is_visible()
    assert status.locator("td").get_by_text(both_rewards(live_campaign)).is_visible()  # in one transfer
    assert status.locator(".paid-total").get_by_text(both_rewards(live_campaign)).is_visible()
    assert status.get_by_text("Your bank confirmed the account holder's name.").is_visible()
    assert not status.get_by_text("Confirmed, waiting to be sent").is_visible()  # nothing left owed


def test_a_close_match_is_confirmed_on_the_status_page_and_paid(
    live_server, phone, screenshot, live_campaign
):
    page = phone
    claim_both_rewards(page, live_server)

    page.get_by_label("Full name, as your bank knows it").fill("Pat Example")
    page.get_by_label("Email").fill("pat@example.com")
    page.get_by_label("IBAN").fill("DE19 3704 0044 0532 0194 01")
    page.get_by_text("Commerzbank").wait_for()
    page.get_by_label("I agree").check()
    page.get_by_role("button", name="Send me my money").click()

    page.wait_for_url("**/status/**")
    page.get_by_text("Connect your TikTok account").wait_for()
    question = page.locator("#vop-question")
    question.get_by_text("Your bank knows this account under a slightly different name").wait_for()
    assert question.get_by_role("button", name="Yes, pay to Pat EXAMPLE JR").is_visible()
    assert payout_badge(page).filter(has_text="Needs your answer").is_visible()  # nothing has left
    screenshot(page, "17-status-close-match")

    page.get_by_role("button", name="Yes, pay to Pat EXAMPLE JR").click()
    payout_badge(page).filter(has_text="Paid").wait_for(timeout=POLL_MS)
    assert not page.locator("#vop-question").count()
    status = page.locator("#status-payout")
    assert status.get_by_text("We pay to the name your bank knows, as you chose.").is_visible()
    assert status.get_by_text("Pat EXAMPLE JR · DE•• •••• 9401").is_visible()
    assert not status.get_by_text("Your bank confirmed the account holder's name.").count()
    assert page.locator("#status-payout td").get_by_text(both_rewards(live_campaign)).is_visible()
    screenshot(page, "18-status-close-match-paid")

    from payouts.models import Payout, SandboxBankPayment

    payout = Payout.objects.get()
    assert payout.status == "settled"
    # The bank was paid under the name it knows, as Pat chose.
    assert (
        SandboxBankPayment.objects.get(end_to_end_id=payout.end_to_end_id).creditor_name == "Pat EXAMPLE JR"
    )


def test_a_brand_member_creates_funds_and_launches_a_campaign(live_server, page, screenshot, alice, alpaca):
    fund(alpaca, 1000_00, "EUR", reference="E2E-LAUNCH")
    sign_in(page, live_server, "alice@alpaca.example")
    page.get_by_role("link", name="Campaigns", exact=True).click()
    page.get_by_role("link", name="Start from WhatsApp-with-reward").click()

    page.get_by_label("Campaign name").fill("Autumn Club")
    assert page.get_by_label("Package").input_value() == "whatsapp_reward"
    page.get_by_label("Germany").check()
    page.get_by_label("What people get, in one line").fill("Join the club, get 2 euros")
    screenshot(page, "20-new-campaign")
    page.get_by_role("button", name="Create draft").click()
    page.get_by_role("heading", name="Autumn Club").wait_for()

    page.get_by_role("button", name="Go live").click()
    assert page.get_by_text("Fund the campaign's budget before going live").is_visible()

    page.get_by_label("Amount").fill("250")
    page.get_by_role("button", name="Fund", exact=True).click()
    page.get_by_text("Budget funded.").wait_for()
    page.get_by_role("button", name="Go live").click()
    page.get_by_text("The campaign is now live.").wait_for()
    assert page.locator("#live").get_by_text("€250.00").first.is_visible()
    screenshot(page, "21-campaign-live")

    page.get_by_role("link", name="/c/autumn-club/").click()
    page.get_by_role("button", name="Opt in on WhatsApp").wait_for()
    screenshot(page, "22-new-landing")


def test_a_visitor_switches_the_language(live_server, phone, screenshot, live_campaign):
    page = phone
    page.goto(f"{live_server.url}/c/summer-glow/")
    page.get_by_role("button", name="Connect TikTok").wait_for()

    page.get_by_label("Language").select_option("de")

    page.get_by_role("heading", name="So sicherst du dir dein Geld").wait_for()
    assert page.locator("html").get_attribute("lang") == "de"
    screenshot(page, "16-landing-de")
