"""Pat on a phone and at a desk, in German, Spanish and Chinese: every error is seen where the form is,
nothing typed is lost while the page updates itself, and the demo's video step can be finished.

Each page is checked with axe-core: no serious or critical accessibility violation.
"""

import re

import pytest

from campaigns.services.campaigns import campaign_create, campaign_transition
from campaigns.services.funding import campaign_fund
from tests.conftest import fund
from tests.e2e.conftest import no_serious_violations

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# What each language says when the bank form is sent empty, and the step names it uses.
SAID = {
    "de": {"check": "Bitte prüfe, was unten markiert ist", "send": "Mein Geld auszahlen", "iban": "IBAN"},
    "es": {"check": "Revisa lo que está marcado abajo", "send": None, "iban": "IBAN"},
    "zh-hans": {"check": "请检查下方标出的内容", "send": None, "iban": "IBAN"},
}


def live(brand, *, slug, package, headline):
    fund(brand, 100_00, "EUR", reference=f"E2E-{slug}")
    campaign = campaign_create(
        brand=brand,
        name=slug.replace("-", " ").title(),
        slug=slug,
        package=package,
        currency="EUR",
        countries=["DE"],
        languages=["en", "de", "es", "zh-hans"],
        headline=headline,
    )
    campaign_fund(campaign=campaign, amount=100_00)
    return campaign_transition(campaign=campaign, to="live")


@pytest.fixture
def summer(alpaca):
    return live(alpaca, slug="summer-glow", package="all_in_one", headline="Paid for loving our summer range")


def connect_tiktok(page, live_server, name="Pat Creator"):
    page.goto(f"{live_server.url}/c/summer-glow/")
    page.locator("#steps form[action*='/tiktok/'] button").click()
    page.locator("#display_name").fill(name)
    page.get_by_role("button", name="Authorize").click()
    page.locator("#step-tiktok_login.state-approved").wait_for()


@pytest.mark.parametrize(("language", "size"), [("de", "phone"), ("es", "desktop"), ("zh-hans", "phone")])
def test_an_empty_bank_form_says_what_is_missing_in_the_readers_language(
    live_server, open_page, screenshot, summer, language, size
):
    page = open_page(size, language)
    connect_tiktok(page, live_server)
    form = page.locator("#payee form")
    form.locator("input[name=name]").fill("Pat Example")

    form.locator("button[type=submit]").click()

    alert = page.locator("#payee [role=alert]")
    alert.wait_for()
    assert SAID[language]["check"] in alert.inner_text()
    # Every problem at once, next to its field, and what was typed is still there.
    assert page.locator("#payee .field-error").count() >= 3
    assert form.locator("input[name=name]").input_value() == "Pat Example"
    assert page.locator("#contact-error").is_visible()  # under the email and WhatsApp fields
    assert page.locator("#id_name").get_attribute("aria-invalid") is None  # filled in: no error
    assert page.locator("#id_iban").get_attribute("aria-invalid") == "true"
    screenshot(page, f"30-bank-form-errors-{language}-{size}")
    no_serious_violations(page)


def test_without_javascript_the_bank_form_still_shows_its_errors(live_server, open_page, screenshot, summer):
    page = open_page("phone", "de", java_script_enabled=False)
    page.goto(f"{live_server.url}/c/summer-glow/")
    page.get_by_role("link", name="Bankdaten angeben").click()

    page.get_by_role("button", name="Mein Geld auszahlen").click()

    page.locator("[role=alert]").first.wait_for()
    assert "Bitte prüfe, was unten markiert ist" in page.content()
    assert "Gib deinen Namen so ein, wie er bei deiner Bank hinterlegt ist." in page.content()
    screenshot(page, "31-bank-form-errors-no-javascript")
    # axe-core runs as a script, so it looks at the same answer in a page that runs scripts.
    checker = open_page("phone", "de")
    checker.goto(f"{live_server.url}/healthz/")
    checker.set_content(page.content())
    no_serious_violations(checker)


def test_while_waiting_for_whatsapp_a_typed_video_link_stays(live_server, open_page, screenshot, summer):
    page = open_page("desktop", "en")
    connect_tiktok(page, live_server)
    page.get_by_role("button", name="Opt in on WhatsApp").click()
    page.get_by_text("Waiting for your message").wait_for()
    link = "https://www.tiktok.com/@patcreator/video/7300000000000000042"
    page.locator("#video-url-ugc_share").fill(link)
    page.locator("#payee input[name=name]").fill("Pat Example")

    page.wait_for_timeout(7_000)  # two polls of the WhatsApp step
    assert page.locator("#video-url-ugc_share").input_value() == link

    # The message arrives (from the phone, in another tab): the steps and the bank form refresh, and
    # still nothing typed is lost.
    phone = page.context.new_page()
    phone.goto(live_server.url + page.get_by_role("link", name="Open WhatsApp").get_attribute("href"))
    phone.locator("#number").fill("+49 151 23456789")
    phone.get_by_role("button", name="Send").click()
    page.locator("#step-whatsapp_optin.state-approved").wait_for(timeout=15_000)
    page.wait_for_timeout(1_000)
    assert page.locator("#video-url-ugc_share").input_value() == link
    assert page.locator("#payee input[name=name]").input_value() == "Pat Example"
    screenshot(page, "32-whatsapp-done-link-kept")
    no_serious_violations(page)


def test_a_bad_video_link_is_explained_in_the_step_in_german(live_server, open_page, screenshot, summer):
    page = open_page("phone", "de")
    connect_tiktok(page, live_server)

    page.locator("#video-url-ugc_share").fill("https://example.com/not-tiktok")
    page.locator("#share-form-ugc_share button[type=submit]").click()

    error = page.locator("#step-ugc_share .field-error")
    error.wait_for()
    assert page.locator("#video-url-ugc_share").input_value() == "https://example.com/not-tiktok"
    assert page.locator("#video-url-ugc_share").get_attribute("aria-invalid") == "true"
    assert "TikTok" in error.inner_text() and "Paste" not in error.inner_text()  # said in German
    screenshot(page, "33-video-link-error-de")
    no_serious_violations(page)


def test_the_demo_video_step_can_be_finished_in_the_sandbox(live_server, open_page, screenshot, summer):
    page = open_page("desktop", "en")
    connect_tiktok(page, live_server)

    page.get_by_role("link", name="sandbox TikTok studio").click()
    page.locator("#display_name").select_option("Pat Creator")
    page.locator("#caption").fill("Ad · Paid partnership with Alpaca Coffee #summer")
    page.locator("#view_count").fill("900")
    page.locator("#like_count").fill("80")
    page.get_by_role("button", name="Post video").click()
    screenshot(page, "34-sandbox-studio")
    video_link = page.locator(".video-url").first.inner_text()
    page.get_by_role("link", name="Back to the campaign").click()

    page.locator("#video-url-ugc_share").fill(video_link)
    page.locator("#share-form-ugc_share input[name=label_attested]").check()
    page.locator("#share-form-ugc_share button[type=submit]").click()
    page.get_by_role("button", name="Close the window now (sandbox)").wait_for()
    screenshot(page, "35-video-waiting")
    page.get_by_role("button", name="Close the window now (sandbox)").click()

    page.locator("#step-ugc_share.state-approved").wait_for()
    assert re.search(r"your reward is confirmed", page.locator("#step-ugc_share").inner_text())
    screenshot(page, "36-video-rewarded")
    no_serious_violations(page)


@pytest.mark.parametrize(("package", "language"), [("cashback", "es"), ("whatsapp_reward", "zh-hans")])
def test_a_page_shows_only_its_packages_steps(live_server, open_page, screenshot, alpaca, package, language):
    campaign = live(alpaca, slug=f"only-{package}".replace("_", "-"), package=package, headline="Only this")
    page = open_page("phone", language)

    page.goto(f"{live_server.url}/c/{campaign.slug}/")
    page.locator("#steps .step").first.wait_for()
    page.locator("#payee form").wait_for()

    assert not page.locator("aside.disclosure").count()
    assert "TikTok" not in page.locator("main").inner_text()
    screenshot(page, f"37-only-{package}-{language}")
    no_serious_violations(page)
