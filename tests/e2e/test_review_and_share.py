"""In a real browser: Pat submits a disclosed TikTok video; Alice decides a held claim in the review queue."""

import pytest
from django.test import override_settings

from tests.e2e.conftest import sign_in
from verification.models import ActionClaim, SandboxTikTokUser
from verification.sandbox.tiktok.display_api import video_post, video_share_url
from verification.services.participants import identity_attach, participant_create
from verification.services.rewards import ClaimContext, action_reward

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_creator_submits_a_disclosed_video(live_server, phone, screenshot, creators):
    page = phone
    page.goto(f"{live_server.url}/c/creators/")
    page.get_by_role("button", name="Connect TikTok").click()
    page.get_by_label("Sandbox TikTok user (display name)").fill("Cora Creator")
    page.get_by_role("button", name="Authorize").click()
    page.get_by_text("TikTok connected as Cora Creator").wait_for()

    video = video_post(
        user=SandboxTikTokUser.objects.get(display_name="Cora Creator"),
        caption="Ad · Paid partnership with Alpaca Coffee. Morning ritual!",
        view_count=40,
    )
    page.get_by_label("Link to your TikTok video").fill(video_share_url(video))
    page.get_by_role("button", name="Submit video").click()
    page.get_by_text("We check your video when its window closes").wait_for()
    page.get_by_text("the reward is reserved for you").wait_for()  # the steps fragment loads after the page
    screenshot(page, "30-share-submitted")
    assert ActionClaim.objects.get(rule__trigger="ugc_share").status == "pending"


def test_a_member_approves_a_held_claim(live_server, page, screenshot, alice, creators):
    identity = identity_attach(
        participant=participant_create(brand=creators.brand), provider="tiktok", subject="oid-x"
    )
    with override_settings(FRAUD_CLAIMS_PER_ADDRESS_PER_HOUR=0):
        held = action_reward(
            rule=creators.rules.get(trigger="tiktok_login"),
            identity=identity,
            context=ClaimContext(client_ip="192.0.2.44"),
        )
    sign_in(page, live_server, "alice@alpaca.example")
    page.get_by_role("link", name="Review", exact=True).click()
    page.get_by_text("Many claims from one internet address").wait_for()  # the signal in words
    screenshot(page, "31-review-queue")

    page.get_by_label("Reason").fill("Known office network")
    page.get_by_role("button", name="Approve").click()
    page.get_by_text("Decision recorded.").wait_for()
    assert page.get_by_text("Known office network").is_visible()
    screenshot(page, "32-review-decided")
    held.refresh_from_db()
    assert held.status == "approved"
