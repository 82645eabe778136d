"""Real Chromium through Playwright, against the live test server.

Screenshots land in artifacts/screenshots/ so that a person can look at every page the tests saw.
"""

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"

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
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium"),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 860}, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


@pytest.fixture
def screenshot():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(page, name):
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)

    return take


def sign_in(page, live_server, email, *, next_path="", secret=None):
    """Sign in as a person does: email and password, then the authenticator app's code when the
    account has a second factor (the personas' TOTP_SECRET unless given)."""
    from tests.conftest import PASSWORD, TOTP_SECRET, totp_code

    page.goto(f"{live_server.url}/accounts/login/" + (f"?next={next_path}" if next_path else ""))
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign In").click()
    page.wait_for_load_state()
    if "/accounts/2fa/authenticate/" in page.url:
        page.get_by_label("Code").fill(totp_code(secret or TOTP_SECRET))
        page.get_by_role("button", name="Sign In").click()
        page.wait_for_load_state()
