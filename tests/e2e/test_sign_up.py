"""A new brand finds the way in from the home page: "Try it free" and the pricing are on it, sign-up
leads to a brand with test data whose play-money top ups need no second factor; where a second
factor is needed, its setup ends with a way back to the page, the typed amount filled in again."""

import pytest

from campaigns.models import Brand
from tests.conftest import verified
from tests.e2e.conftest import no_serious_violations

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_a_visitor_tries_it_free_and_tops_up_play_money_without_a_second_factor(
    live_server, open_page, screenshot, size
):
    page = open_page(size)
    page.goto(live_server.url)
    assert page.get_by_role("heading", name="Pricing").is_visible()
    no_serious_violations(page)
    screenshot(page, f"signup-01-home-{size}")
    page.get_by_role("link", name="Try it free").first.click()
    page.locator("#id_email").fill(f"nina-{size}@newbrand.example")
    page.locator("#id_password1").fill("a long and fine passphrase 42")
    page.locator("#id_password2").fill("a long and fine passphrase 42")
    page.get_by_role("button", name="Sign Up").click()

    page.get_by_label("Brand name").fill(f"Nina Noodles {size}")
    page.get_by_role("button", name="Create brand").click()
    brand = Brand.objects.get(name=f"Nina Noodles {size}")
    page.wait_for_url(f"{live_server.url}/brands/{brand.slug}/")
    if size == "phone":
        page.locator("[data-menu-toggle]").click()
    page.get_by_test_id("mode-switch").click()
    page.get_by_test_id("test-banner").wait_for()
    page.goto(f"{live_server.url}/brands/{brand.slug}--test/finance/")
    page.get_by_label("Amount").first.fill("250")
    page.get_by_role("button", name="Top up").click()
    assert page.get_by_text("deposit booked").first.is_visible()
    screenshot(page, f"signup-02-play-money-topped-up-{size}")


def test_the_second_factor_setup_leads_back_with_the_typed_amount(
    live_server, page, screenshot, make_user, settings
):
    from campaigns.services.brands import brand_create
    from tests.conftest import PASSWORD, totp_code
    from tests.e2e.conftest import sign_in

    owner = make_user("olga@otter.example", first_name="Olga")
    brand = verified(brand_create(name="Otter Oats", slug="otter", owner=owner, currency="EUR"))
    sign_in(page, live_server, "olga@otter.example", next_path=f"/brands/{brand.slug}/finance/")
    page.get_by_label("Amount").first.fill("250")
    page.get_by_role("button", name="Top up").click()
    assert page.get_by_text("Moving money needs a second factor").is_visible()
    no_serious_violations(page)
    screenshot(page, "signup-03-second-factor-needed")

    with page.expect_navigation():
        page.get_by_role("link", name="Set up your authenticator app").click()
    if "reauthenticate" in page.url:  # setting up a factor asks for the password once more
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Confirm").click()
    secret = page.locator("#authenticator_secret").input_value()
    page.get_by_label("Authenticator code").fill(totp_code(secret))
    page.get_by_role("button", name="Activate").click()
    screenshot(page, "signup-04-recovery-codes")
    page.get_by_test_id("mfa-continue").click()
    page.wait_for_url(f"{live_server.url}/brands/otter/finance/?amount=250")
    assert page.get_by_label("Amount").first.input_value() == "250"
    screenshot(page, "signup-05-back-with-the-amount")
