"""Alice's brand is not verified yet: in a real browser she switches the dashboard to test data,
adds play money, makes a test key, and switches back to live data, which test mode left alone."""

import re

import pytest

from campaigns.services.brands import brand_create
from joyback.api.models import ApiKey
from tests.e2e.conftest import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_dashboard_switches_between_live_and_test_data(live_server, page, screenshot, alice):
    # Not verified: no account of its own at the provider yet, so no live money either.
    brand_create(name="Alpaca Coffee", slug="alpaca", owner=alice, currency="EUR")
    sign_in(page, live_server, "alice@alpaca.example")
    page.wait_for_url(f"{live_server.url}/brands/alpaca/")
    banner = page.get_by_test_id("test-banner")
    assert not banner.count()

    # Live keys wait for the verification; the page says so and what to do meanwhile.
    page.get_by_role("link", name="Developers", exact=True).click()
    assert page.get_by_test_id("live-key-refusal").is_visible()
    page.get_by_role("button", name="Create key").click()
    assert page.get_by_text("Live keys are issued once JoyBack has verified the brand").first.is_visible()
    assert not ApiKey.objects.exists()
    screenshot(page, "test-mode-01-live-key-refused")

    page.get_by_test_id("mode-switch").click()
    page.wait_for_url(f"{live_server.url}/brands/alpaca--test/")
    assert banner.is_visible() and "test data" in banner.inner_text().lower()
    assert page.get_by_role("switch").get_attribute("aria-checked") == "true"

    # Money is finance's page, in the test data's mode too.
    page.goto(f"{live_server.url}/brands/alpaca--test/finance/")
    assert banner.is_visible()
    page.get_by_role("heading", name="Add test funds").scroll_into_view_if_needed()
    page.get_by_placeholder("1000.00").fill("250")
    page.get_by_role("button", name="Top up").click()
    page.wait_for_url(f"{live_server.url}/brands/alpaca--test/finance/")
    page.goto(f"{live_server.url}/brands/alpaca--test/")
    assert page.locator("#balances").get_by_text("€250.00").first.is_visible()
    screenshot(page, "test-mode-02-test-dashboard")

    # Every brand page keeps the mode, with the banner.
    page.get_by_role("link", name="Campaigns", exact=True).click()
    assert re.search(r"/brands/alpaca--test/campaigns/$", page.url) and banner.is_visible()
    page.get_by_role("link", name="Developers", exact=True).click()
    assert page.get_by_role("heading", name="Test API keys").is_visible()
    page.get_by_role("button", name="Create key").click()
    secret = page.get_by_test_id("new-secret").inner_text()
    assert secret.startswith("jb_test_")
    screenshot(page, "test-mode-03-test-key")

    # The choice persists: the way in without an address comes back to test data.
    page.goto(f"{live_server.url}/brands/")
    page.wait_for_url(f"{live_server.url}/brands/alpaca--test/")
    assert banner.is_visible()

    page.get_by_test_id("mode-switch").click()
    page.wait_for_url(f"{live_server.url}/brands/alpaca/")
    assert not banner.count()
    assert not page.locator("#balances").get_by_text("€250.00").count()
    page.get_by_role("link", name="Developers", exact=True).click()
    assert page.get_by_role("heading", name="Live API keys").is_visible()
    assert not page.get_by_text(secret.rsplit("_", 1)[0]).count()
    screenshot(page, "test-mode-04-back-to-live")
    assert ApiKey.objects.get().livemode is False
