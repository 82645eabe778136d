"""Alice sets up a campaign the way the setup is meant to be walked: she picks a template that says
what people do and what it pays, sees her headline on a preview while she types, opens the draft's
page before it is public, edits a rule whose editor shows only that action's fields, and copies the
campaign into her test data to try it with play money."""

import pytest

from campaigns.models import Campaign
from tests.e2e.conftest import no_serious_violations, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_a_marketer_sets_up_a_campaign_from_a_template_previews_it_and_copies_it_to_test_data(
    live_server, open_page, screenshot, alice, alpaca, size
):
    page = open_page(size)
    sign_in(page, live_server, "alice@alpaca.example")
    page.goto(f"{live_server.url}/brands/alpaca/campaigns/")
    assert page.get_by_text("People log in with TikTok and post a disclosed video").is_visible()
    no_serious_violations(page)
    screenshot(page, f"setup-01-templates-{size}")

    page.get_by_role("link", name="Start from TikTok-only").click()
    assert page.get_by_text("Step 2 of 2").is_visible()
    assert page.get_by_label("Package").input_value() == "tiktok_only"
    page.get_by_label("Campaign name").fill("Autumn Creators")
    page.get_by_label("Germany").check()
    page.get_by_label("What people get, in one line").fill("Film your autumn coffee, get paid")
    assert page.locator('[data-preview-of="headline"]').inner_text() == "Film your autumn coffee, get paid"
    no_serious_violations(page)
    screenshot(page, f"setup-02-details-and-preview-{size}")
    page.get_by_role("button", name="Create draft").click()
    page.get_by_role("heading", name="Autumn Creators").wait_for()
    campaign = Campaign.objects.get(name="Autumn Creators")

    # The draft's page, as people will see it; the public still gets a 404.
    page.get_by_test_id("preview-link").click()
    assert page.get_by_test_id("draft-preview").is_visible()
    assert page.get_by_role("heading", name="Film your autumn coffee, get paid").is_visible()
    no_serious_violations(page)
    screenshot(page, f"setup-03-draft-preview-{size}")
    stranger = open_page(size)
    assert stranger.goto(f"{live_server.url}/c/{campaign.slug}/").status == 404
    page.get_by_role("link", name="Back to the campaign").click()

    # Each action shows its own fields; a row's Edit opens that rule.
    page.get_by_role("link", name="Edit the rule UGC share").click()
    editor = page.locator("#rule-editor")
    assert editor.get_by_label("Action").input_value() == "ugc_share"
    assert editor.get_by_label("Reward", exact=True).input_value() == "5.00"
    assert editor.get_by_label("Pay by views: tiers").is_visible()
    assert not editor.get_by_label("Cashback (percent of the purchase)").is_visible()
    editor.get_by_label("Action").select_option("tiktok_login")
    assert not editor.get_by_label("Pay by views: tiers").is_visible()
    assert not editor.get_by_label("Window (hours)").is_visible()
    editor.get_by_label("Action").select_option("purchase")
    assert editor.get_by_label("Cashback (percent of the purchase)").is_visible()
    editor.get_by_label("Action").select_option("ugc_share")
    editor.get_by_label("Reward", exact=True).fill("6.50")
    no_serious_violations(page)
    screenshot(page, f"setup-04-rule-editor-{size}")
    editor.get_by_role("button", name="Save rule").click()
    page.get_by_text("Rule saved.").wait_for()
    assert campaign.rules.get(trigger="ugc_share").reward_amount == 6_50

    page.get_by_test_id("copy-to-test").click()
    page.get_by_test_id("test-banner").wait_for()
    copy = Campaign.objects.exclude(pk=campaign.pk).get()
    assert page.url.endswith(f"/brands/alpaca--test/campaigns/{copy.pk}/")
    assert copy.rules.get(trigger="ugc_share").reward_amount == 6_50
    screenshot(page, f"setup-05-copied-to-test-{size}")
