"""Alice, owner of Alpaca Coffee, builds her team herself: she invites Mia by email from the Team
page, Mia signs up through the link and joins; a money role waits for a second factor and, once
given, for the cooling period before its holder approves payouts. At phone size the brand's links
fold behind a menu button."""

import re

import pytest
from django.core import mail

from campaigns.models import Membership
from tests.e2e.conftest import no_serious_violations, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def invitation_link(live_server) -> str:
    path = re.search(r"https?://[^/\s]+(/invitations/[^/\s]+/)", mail.outbox[-1].body).group(1)
    return live_server.url + path


def test_an_owner_invites_a_colleague_who_signs_up_through_the_link_and_joins(
    live_server, open_page, screenshot, alice, alpaca, settings
):
    settings.FOUR_EYES_COOLING_DAYS = 7
    page = open_page()
    sign_in(page, live_server, "alice@alpaca.example")
    page.get_by_role("link", name="Team").click()
    assert page.get_by_role("heading", name="Team").is_visible()
    no_serious_violations(page)

    page.get_by_label("Email address").fill("mia@alpaca.example")
    page.get_by_label("Role", exact=True).select_option("marketer")
    page.get_by_role("button", name="Send invitation").click()
    assert page.get_by_text("Invitation sent to mia@alpaca.example").is_visible()
    assert page.get_by_test_id("invitations").get_by_text("mia@alpaca.example").is_visible()
    screenshot(page, "team-01-invitation-sent")

    mia = open_page("phone")
    mia.goto(invitation_link(live_server))
    assert mia.get_by_role("heading", name="Join Alpaca Coffee on JoyBack").is_visible()
    no_serious_violations(mia)
    screenshot(mia, "team-02-invitation-phone")
    mia.get_by_role("link", name="Create your account").click()
    mia.locator("#id_email").fill("mia@alpaca.example")
    mia.locator("#id_password1").fill("a long and fine passphrase 42")
    mia.locator("#id_password2").fill("a long and fine passphrase 42")
    mia.get_by_role("button", name="Sign Up").click()
    mia.get_by_role("button", name="Accept the invitation").click()
    mia.wait_for_url(f"{live_server.url}/brands/alpaca/")
    assert mia.get_by_text("Welcome to Alpaca Coffee. You joined as Marketer.").is_visible()
    screenshot(mia, "team-03-joined")

    # A money role for someone without a second factor is refused in words; nothing changes.
    page.reload()
    row = page.get_by_test_id("member-mia@alpaca.example")
    row.get_by_label("Role of mia@alpaca.example").select_option("finance")
    row.get_by_role("button", name="Change role").click()
    assert page.get_by_text("has no second factor yet").is_visible()
    assert Membership.objects.get(user__email="mia@alpaca.example").role == "marketer"
    no_serious_violations(page)
    screenshot(page, "team-04-money-role-refused")


def test_an_invited_finance_member_with_a_second_factor_joins_but_approves_only_later(
    live_server, open_page, screenshot, alice, alpaca, make_user, settings, django_capture_on_commit_callbacks
):
    from campaigns.services.team import invitation_create
    from tests.conftest import totp_enable

    settings.FOUR_EYES_COOLING_DAYS = 7
    totp_enable(make_user("fin@alpaca.example", first_name="Fin"))
    invitation_create(brand=alpaca, email="fin@alpaca.example", role="finance", invited_by=alice)

    page = open_page(language="de")
    sign_in(
        page,
        live_server,
        "fin@alpaca.example",
        next_path=invitation_link(live_server)[len(live_server.url) :],
    )
    page.get_by_role("button", name="Einladung annehmen").click()
    page.wait_for_url(f"{live_server.url}/brands/alpaca/")
    page.get_by_role("link", name="Team").click()
    assert page.get_by_test_id("approves-from").is_visible()
    no_serious_violations(page)
    screenshot(page, "team-05-finance-waits-de")


@pytest.mark.parametrize("language", ["en", "de", "es", "zh-hans"])
def test_at_phone_size_the_brand_links_fold_behind_a_menu_button(
    live_server, open_page, screenshot, alice, alpaca, language
):
    page = open_page("phone", language)
    sign_in(page, live_server, "alice@alpaca.example")
    page.wait_for_url(f"{live_server.url}/brands/alpaca/")
    toggle = page.locator("[data-menu-toggle]")
    nav = page.locator("#site-nav")
    assert toggle.is_visible() and toggle.get_attribute("aria-expanded") == "false"
    assert not nav.is_visible()
    # The first screen is the page, not the links.
    assert page.locator("main h1").first.bounding_box()["y"] < 200
    screenshot(page, f"menu-01-closed-{language}")

    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true" and nav.is_visible()
    no_serious_violations(page)
    screenshot(page, f"menu-02-open-{language}")
    page.keyboard.press("Escape")
    assert toggle.get_attribute("aria-expanded") == "false" and not nav.is_visible()
    assert page.evaluate("document.activeElement.hasAttribute('data-menu-toggle')")


def test_on_a_desktop_every_link_stays_in_view_without_a_menu_button(live_server, page, alice, alpaca):
    sign_in(page, live_server, "alice@alpaca.example")
    page.wait_for_url(f"{live_server.url}/brands/alpaca/")
    assert not page.locator("[data-menu-toggle]").is_visible()
    assert page.locator("#site-nav").get_by_role("link", name="Team").is_visible()
