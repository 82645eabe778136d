"""Pat opts in on a landing page and appears in Alpaca Coffee's audience; Alice sends Pat a WhatsApp
template; Pat replies STOP on the phone; the next send skips Pat, and Pat's reward stays."""

import pytest

from campaigns.models import Brand
from campaigns.services.campaigns import campaign_create, campaign_transition
from campaigns.services.funding import campaign_fund
from payouts.audience.broadcasts import broadcasts_send_due, templates_sync
from tests.conftest import fund
from tests.e2e.conftest import sign_in
from verification.models import ActionClaim
from verification.services.provider_events import provider_events_process

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def club(alpaca):
    fund(alpaca, 100_00, "EUR", reference="E2E-CLUB")
    campaign = campaign_create(
        brand=alpaca, name="Coffee Club", slug="coffee-club", package="whatsapp_reward", currency="EUR",
        countries=["DE"], languages=["en"], headline="Join our WhatsApp club",
    )  # fmt: skip
    campaign_fund(campaign=campaign, amount=50_00)
    return campaign_transition(campaign=campaign, to="live")


def test_opt_in_audience_template_stop_and_the_reward_stays(live_server, open_page, screenshot, club, alice):
    pat = open_page("phone")
    pat.goto(f"{live_server.url}/c/coffee-club/")
    pat.get_by_role("button", name="Opt in on WhatsApp").click()
    pat.locator("#whatsapp-consent").wait_for()
    assert "Alpaca Coffee" in pat.locator("#whatsapp-consent").inner_text()
    screenshot(pat, "audience-10-consent-wording")
    pat.get_by_role("link", name="Open WhatsApp").click()
    pat.get_by_label("Your WhatsApp number").fill("+49 151 23456789")
    pat.get_by_role("button", name="Send").click()
    pat.locator(".step.state-approved").first.wait_for()

    brand = open_page("desktop")
    sign_in(brand, live_server, "alice@alpaca.example", next_path="/brands/alpaca/audience/")
    brand.get_by_text("+4915123456789").wait_for()
    screenshot(brand, "audience-20-audience-page")

    # Alpaca sends from its own WhatsApp Business Account: asked to connect it first, it does so
    # through (the sandbox's) Meta Embedded Signup.
    brand.goto(f"{live_server.url}/brands/alpaca/audience/sends/")
    brand.get_by_test_id("whatsapp-not-connected").wait_for()
    screenshot(brand, "audience-25-connect-whatsapp")
    brand.get_by_role("link", name="Connect your WhatsApp Business Account").click()
    brand.get_by_role("link", name="Sign up with Meta").click()
    brand.get_by_role("button", name="Finish").click()
    screenshot(brand, "audience-26-finish-connecting")
    brand.get_by_role("button", name="Finish connecting").click()
    brand.get_by_text("Connected: your sends go from").wait_for()
    # The owner's phone shows the account it sends from.
    phone = open_page("phone")
    phone.context.add_cookies(brand.context.cookies())
    phone.goto(f"{live_server.url}/brands/alpaca/audience/whatsapp/")
    phone.get_by_test_id("whatsapp-account").get_by_text("Alpaca Coffee").wait_for()
    screenshot(phone, "audience-27-whatsapp-account-phone")
    templates_sync(brand=Brand.objects.get(slug="alpaca"))
    brand.goto(f"{live_server.url}/brands/alpaca/audience/sends/")
    brand.get_by_label("The template's values, one per line").fill("Alpaca Coffee\nnew beans are in")
    brand.get_by_role("button", name="See cost and who is skipped").click()
    brand.get_by_test_id("broadcast-plan").wait_for()
    screenshot(brand, "audience-30-send-plan")
    brand.get_by_role("button", name="Schedule the send").click()
    brand.get_by_test_id("broadcast-results").wait_for()
    broadcasts_send_due()
    provider_events_process()

    pat.goto(f"{live_server.url}/sandbox/whatsapp/inbox/?number=%2B4915123456789")
    pat.get_by_text("News from Alpaca Coffee: new beans are in").wait_for()
    screenshot(pat, "audience-40-template-on-the-phone")
    pat.get_by_label("Reply").fill("STOP")
    pat.get_by_role("button", name="Send").click()
    provider_events_process()

    brand.reload()
    assert brand.get_by_test_id("delivered").inner_text() == "1"
    assert brand.get_by_test_id("read").inner_text() == "1"
    assert brand.get_by_test_id("opted-out").inner_text() == "1"
    screenshot(brand, "audience-50-send-results")

    brand.goto(f"{live_server.url}/brands/alpaca/audience/sends/?template=joyback_news&parameters=A%0AB")
    plan = brand.get_by_test_id("broadcast-plan")
    plan.wait_for()
    assert (
        "0 people will be sent" in plan.inner_text() and "stopped the brand's messages" in plan.inner_text()
    )

    claim = ActionClaim.objects.get()
    assert (claim.status, claim.amount) == ("approved", claim.rule.reward_amount)


def test_email_news_double_opt_in_shows_in_the_audience_and_syncs_to_mailchimp(
    live_server, open_page, screenshot, club, alice, mailoutbox
):
    from campaigns.services.consent import consent_wording_save  # deferred: this journey's own setup
    from payouts.audience.crm import crm_connect, crm_sync  # deferred: as above
    from payouts.links import status_page_path  # deferred: as above
    from payouts.models import SandboxCrmProfile  # deferred: as above
    from verification.models import Participant  # deferred: as above

    words = "I agree that Alpaca Coffee sends me news and offers by email."
    consent_wording_save(campaign=club, channel="email", language="en", text=words, user=alice)
    pat = open_page("phone")
    pat.goto(f"{live_server.url}/c/coffee-club/")
    pat.get_by_role("button", name="Opt in on WhatsApp").click()
    pat.get_by_role("link", name="Open WhatsApp").click()
    pat.get_by_label("Your WhatsApp number").fill("+49 151 23456789")
    pat.get_by_role("button", name="Send").click()
    pat.locator(".step.state-approved").first.wait_for()

    token = Participant.objects.get().token
    pat.goto(live_server.url + status_page_path(slug=club.slug, token=token))
    offer = pat.locator("#email-news")
    assert words in offer.inner_text() and not pat.get_by_test_id("email-consent").is_checked()
    pat.get_by_label("Your email address").fill("pat@example.com")
    pat.get_by_test_id("email-consent").check()
    screenshot(pat, "audience-60-email-offer")
    pat.get_by_role("button", name="Send me the confirmation link").click()
    pat.get_by_text("We sent a confirmation link to pat@example.com").wait_for()

    link = next(word for word in mailoutbox[-1].body.split() if "/email/confirm/" in word)
    pat.goto(link)
    screenshot(pat, "audience-70-email-confirm")
    pat.get_by_test_id("email-confirm").click()
    pat.get_by_text("Confirmed: Alpaca Coffee sends its news to pat@example.com").wait_for()

    key = "0123456789abcdef0123456789abcdef-us21"
    connection = crm_connect(
        brand=club.brand, user=alice, kind="mailchimp", api_key=key, list_id="a1b2c3d4e5"
    )
    assert crm_sync(connection_id=connection.pk) == "synced"
    assert SandboxCrmProfile.objects.get(email="pat@example.com").consent == "subscribed"

    brand = open_page("desktop")
    sign_in(brand, live_server, "alice@alpaca.example", next_path="/brands/alpaca/audience/")
    brand.get_by_text("pat@example.com").wait_for()
    brand.goto(f"{live_server.url}/brands/alpaca/audience/crm/")
    brand.get_by_test_id("crm-mailchimp").get_by_text("Synced").wait_for()
    screenshot(brand, "audience-80-crm-mailchimp")
