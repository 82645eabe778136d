"""Real Chromium through Playwright, against the live test server.

Screenshots land in artifacts/screenshots/ so that a person can look at every page the tests saw.
"""

import os
import shutil
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import sync_playwright

from campaigns.services.campaigns import campaign_create, campaign_transition
from campaigns.services.funding import campaign_fund
from tests.conftest import PASSWORD, TOTP_SECRET, fund, totp_code

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
SIZES = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 860}}
BROWSER_LOCALE = {"en": "en-US", "de": "de-DE", "es": "es-ES", "zh-hans": "zh-CN"}

# Playwright's sync API keeps an event loop in the test's thread; the ORM calls the tests make
# between page actions are still plain synchronous calls.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def pytest_collection_modifyitems(config, items):
    if Path(CHROMIUM).exists() or shutil.which("chromium"):
        return
    for item in items:
        if "e2e" in item.keywords:
            item.add_marker(
                pytest.mark.skip(reason=f"Chromium not found at {CHROMIUM} (apt-get install chromium)")
            )


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium"),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield browser
        browser.close()


@pytest.fixture
def open_page(browser):
    """Opens a page as a person's own browser would be, at a size and in the language the browser
    asks for (`options` go to the browser context: java_script_enabled, accept_downloads); every
    context it opened is closed after the test."""
    contexts = []

    def opened(size="desktop", language="en", *, timeout=10_000, **options):
        context = browser.new_context(
            viewport=SIZES[size], locale=BROWSER_LOCALE[language], is_mobile=size == "phone", **options
        )
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(timeout)
        return page

    yield opened
    for context in contexts:
        context.close()


@pytest.fixture
def page(open_page):
    return open_page()


@pytest.fixture
def phone(open_page):
    return open_page("phone")


@pytest.fixture
def screenshot():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(page, name):
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)

    return take


def sign_in(page, live_server, email, *, next_path="", secret=None, totp_at=None):
    """Sign in as a person does, on the sign-in page (then at `next_path`, or the brand's pages)."""
    page.goto(f"{live_server.url}/accounts/login/" + (f"?next={next_path}" if next_path else ""))
    sign_in_here(page, email, secret=secret, totp_at=totp_at)


def sign_in_here(page, email, *, secret=None, totp_at=None):
    """The sign-in form the page shows, whatever language it speaks: email and password, then the
    authenticator app's code when the account has a second factor (the personas' TOTP_SECRET unless
    given; the code of the Unix time `totp_at` when given, else of now)."""
    page.locator("input[name=login]").fill(email)
    page.locator("input[name=password]").fill(PASSWORD)
    # Waiting for the answer to this form, not for the load state: on a busy machine the load state
    # is still the sign-in page's when it is asked, and the second factor's page came after.
    with page.expect_navigation():
        page.locator("input[name=password]").press("Enter")
    if "/accounts/2fa/authenticate/" in page.url:
        page.locator("input[name=code]").fill(totp_code(secret or TOTP_SECRET, at=totp_at))
        with page.expect_navigation():
            page.locator("input[name=code]").press("Enter")


def no_serious_violations(page) -> None:
    """axe-core's check of the page as it is: no serious or critical accessibility violation."""
    results = Axe().run(page)
    bad = [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in results.response["violations"]
        if v["impact"] in ("serious", "critical")
    ]
    assert bad == [], "\n".join(bad)


@pytest.fixture
def creators(alpaca):
    """Alpaca's live TikTok campaign for creators, funded with 100.00 of 500.00 EUR deposited."""
    fund(alpaca, 500_00, "EUR", reference="E2E-CREATORS")
    campaign = campaign_create(
        brand=alpaca,
        name="Creators",
        slug="creators",
        package="tiktok_only",
        currency="EUR",
        countries=["DE"],
        languages=["en"],
    )
    campaign_fund(campaign=campaign, amount=100_00)
    return campaign_transition(campaign=campaign, to="live")
