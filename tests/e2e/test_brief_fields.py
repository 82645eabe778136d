"""Alice writes her share rule's brief as fields: she ticks what people must show, types the handle,
hashtags and deadline, and reads what creators will see in English, German, Spanish and Chinese
before she saves; at phone size too."""

import pytest

from campaigns.models import ActionRule
from campaigns.services.campaigns import campaign_create
from campaigns.services.funding import campaign_fund
from tests.conftest import fund
from tests.e2e.conftest import SCREENSHOTS, no_serious_violations, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_a_marketer_fills_the_brief_fields_and_previews_them_in_four_languages(
    live_server, open_page, screenshot, alice, alpaca, size
):
    fund(alpaca, 100_00, "EUR", reference="E2E-BRIEF")
    campaign = campaign_create(
        brand=alpaca, name="Brief", package="tiktok_only", currency="EUR", countries=["DE"], languages=["de"]
    )
    campaign_fund(campaign=campaign, amount=100_00)
    rule = ActionRule.objects.get(campaign=campaign, trigger="ugc_share")
    page = open_page(size)
    sign_in(page, live_server, "alice@alpaca.example")
    page.goto(f"{live_server.url}/brands/alpaca/campaigns/{campaign.pk}/?rule={rule.pk}#rule-editor")

    editor = page.locator("#rule-editor")
    editor.get_by_label("Show the product").check()
    editor.get_by_label("Show it within the first seconds").fill("3")
    editor.get_by_label("Tag this account").fill("@drinkalpaca")
    editor.get_by_label("Hashtags to add").fill("#AlpacaCoffee #coldbrew")
    editor.get_by_label("Post within (hours)").fill("48")
    editor.get_by_label("Switch on the paid-partnership label").check()
    preview = editor.locator("#brief-preview")
    preview.get_by_text("Post within 48 hours.").wait_for()
    preview.get_by_text("Poste innerhalb von 48 Stunden.").wait_for()
    preview.get_by_text("Publica en un plazo de 48 horas.").wait_for()
    preview.get_by_text("请在48小时内发布。").wait_for()
    no_serious_violations(page)
    screenshot(page, f"brief-01-fields-and-preview-{size}")
    editor.locator("#brief-preview").screenshot(path=str(SCREENSHOTS / f"brief-01-preview-only-{size}.png"))

    editor.get_by_role("button", name="Save rule").click()
    page.get_by_text("Rule saved.").wait_for()
    rule.refresh_from_db()
    assert rule.brief["tag_handle"] == "@drinkalpaca" and rule.brief["post_within_hours"] == 48

    page.goto(f"{live_server.url}/brands/alpaca/campaigns/{campaign.pk}/?rule={rule.pk}#rule-editor")
    assert editor.get_by_label("Tag this account").input_value() == "@drinkalpaca"
    editor.get_by_label("Tag this account").fill("@a b")
    preview.get_by_text("is not a handle").wait_for()
    screenshot(page, f"brief-02-refused-{size}")
