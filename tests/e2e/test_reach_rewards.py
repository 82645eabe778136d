"""In a real browser: Alice sets a tiered reach rule on her campaign; Cora's reward grows with her
sandbox video's views, read after read; Alice sees the video in her content library."""

import pytest

from tests.e2e.conftest import sign_in
from verification.models import ActionClaim, SandboxTikTokUser, SandboxTikTokVideo
from verification.sandbox.tiktok.display_api import video_post, video_share_url

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_brand_sets_tiers_and_a_creators_reward_grows_with_the_views(
    live_server, page, open_page, screenshot, alice, creators
):
    sign_in(page, live_server, "alice@alpaca.example")
    page.goto(f"{live_server.url}/brands/{creators.brand.slug}/campaigns/{creators.pk}/")
    page.get_by_text("Add or change a rule").click()
    page.get_by_label("Action").select_option("ugc_share")
    page.get_by_label("Reward", exact=True).fill("8.00")
    page.get_by_label("Verification").select_option("engagement")
    page.get_by_label("Window (hours)").fill("72")
    page.get_by_label("Pay by views: tiers").fill("1000 = 1.00\n10000 = 5.00")
    page.get_by_label("Most all videos together earn by views").fill("50.00")
    page.get_by_role("button", name="Save rule").click()
    page.get_by_text("Rule saved.").wait_for()
    page.locator(".reach-rule").first.wait_for()
    screenshot(page, "80-reach-rule-set")
    assert creators.rules.get(trigger="ugc_share").reach_tiers == [[1000, 100], [10000, 500]]

    cora = open_page("phone")
    cora.goto(f"{live_server.url}/c/creators/")
    cora.get_by_role("button", name="Connect TikTok").click()
    cora.get_by_label("Sandbox TikTok user (display name)").fill("Cora Creator")
    cora.get_by_role("button", name="Authorize").click()
    cora.get_by_text("TikTok connected as Cora Creator").wait_for()
    cora.get_by_text("Paid by the views your video reaches").wait_for()
    video = video_post(
        user=SandboxTikTokUser.objects.get(display_name="Cora Creator"),
        caption="Ad · Paid partnership with Alpaca Coffee. Morning ritual!",
        view_count=40,
    )
    cora.get_by_label("Link to your TikTok video").fill(video_share_url(video))
    cora.get_by_role("button", name="Submit video").click()
    cora.get_by_text("Earned so far:").wait_for()
    assert cora.locator(".reach-paid").inner_text() == "€0.00"
    screenshot(cora, "81-reach-share-in")

    # The video grows on the sandbox TikTok; each read tops the reward up.
    SandboxTikTokVideo.objects.filter(pk=video.pk).update(view_count=1_500)
    cora.get_by_role("button", name="Read the views now (sandbox)").click()
    cora.locator(".reach-paid", has_text="€1.00").wait_for()
    screenshot(cora, "82-reach-first-tier")

    SandboxTikTokVideo.objects.filter(pk=video.pk).update(view_count=12_000)
    cora.get_by_role("button", name="Read the views now (sandbox)").click()
    cora.locator(".reach-paid", has_text="€5.00").wait_for()
    assert cora.locator(".reach-readings li").count() == 2
    screenshot(cora, "83-reach-second-tier")
    cora.context.close()

    claim = ActionClaim.objects.get(rule__trigger="ugc_share")
    assert (claim.status, claim.reach_paid) == ("pending", 5_00)

    page.goto(f"{live_server.url}/brands/{creators.brand.slug}/content/")
    page.get_by_text("Cora Creator").first.wait_for()
    rows = page.locator("#library-rows").inner_text()
    assert "12,000" in rows and "TikTok shows the label on the video" in rows and "platform_on" not in rows
    screenshot(page, "84-content-library")
    page.get_by_role("link", name=f"#{claim.pk} · Cora Creator").click()
    page.get_by_text("Metrics over time").wait_for()
    screenshot(page, "85-content-item")
