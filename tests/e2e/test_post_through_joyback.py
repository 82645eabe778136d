"""In a real browser: Cora posts her video through JoyBack on the sandbox TikTok. TikTok is asked for
video.publish only when she chooses this way; the video goes out with the "Paid partnership" label
on and the disclosure first; the step then says so. And when TikTok would only post privately, the
step says why nothing was posted."""

import pytest

from tests.verification.test_tiktok_posting import mp4_bytes
from verification.models import ActionClaim, SandboxTikTokPublish, TikTokPost
from verification.services.provider_events import provider_events_process

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

MP4 = mp4_bytes(40_000, seconds=12)


@pytest.fixture
def live(creators, settings, tmp_path):
    settings.STORAGES = {
        **settings.STORAGES,
        "video_uploads": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "uploads")},
        },
    }
    return creators


def connect_and_allow_posting(page, live_server, screenshot=None):
    page.goto(f"{live_server.url}/c/creators/")
    page.get_by_role("button", name="Connect TikTok").click()
    page.get_by_label("Sandbox TikTok user (display name)").fill("Cora Creator")
    page.get_by_role("button", name="Authorize").click()
    page.get_by_text("TikTok connected as Cora Creator").wait_for()
    page.get_by_role("button", name="Post it through JoyBack").wait_for()
    if screenshot:
        page.locator(".share-choice").scroll_into_view_if_needed()
        screenshot(page, "33-share-step-two-ways")
    page.get_by_role("button", name="Post it through JoyBack").click()
    consent = page.get_by_label("Post content to TikTok on your behalf (video.publish)")
    assert consent.is_checked()
    page.get_by_label("Sandbox TikTok user (display name)").fill("Cora Creator")
    if screenshot:
        screenshot(page, "34-tiktok-asks-to-post")
    page.get_by_role("button", name="Authorize").click()
    page.get_by_text("JoyBack may now post your video on TikTok").wait_for()


def choose_and_post(page):
    page.get_by_text("Posting to TikTok as").wait_for()
    page.get_by_label("Your video (MP4, MOV or WebM, up to 4.0 GB)").set_input_files(
        files=[{"name": "morning.mp4", "mimeType": "video/mp4", "buffer": MP4}]
    )
    page.get_by_label("Your caption (after the disclosure)").fill("Morning ritual with the new roast!")
    page.get_by_role("radio", name="Everyone", exact=True).check()


def test_a_creator_posts_through_joyback_with_the_label_on(live_server, open_page, screenshot, live):
    page = open_page("phone", timeout=15_000)
    connect_and_allow_posting(page, live_server, screenshot)
    choose_and_post(page)
    screenshot(page, "35-post-form-filled")

    page.get_by_role("button", name="Post it on TikTok").click()
    page.get_by_text("Your video is on its way to TikTok").wait_for()
    page.get_by_text("It may take a few minutes to appear on your TikTok profile.").wait_for()
    screenshot(page, "36-post-processing")

    provider_events_process()  # the standing worker's pass over TikTok's post.publish webhooks
    page.get_by_text("Posted through JoyBack with TikTok's “Paid partnership” label on.").wait_for()
    page.get_by_text("the reward is reserved for you").wait_for()
    screenshot(page, "37-posted-through-joyback")
    page.context.close()

    sent = SandboxTikTokPublish.objects.get()
    assert sent.post_info["brand_content_toggle"] is True
    assert (
        sent.post_info["title"]
        == "Ad · Paid partnership with Alpaca Coffee Morning ritual with the new roast!"
    )
    claim = ActionClaim.objects.get(rule__trigger="ugc_share")
    assert (claim.status, claim.evidence["label"]) == ("pending", "set_by_joyback")


def test_an_unaudited_app_tells_the_creator_why_nothing_was_posted(
    live_server, open_page, screenshot, live, settings
):
    settings.SANDBOX_TIKTOK_UNAUDITED = True
    page = open_page("phone", timeout=15_000)
    connect_and_allow_posting(page, live_server)
    choose_and_post(page)

    page.get_by_role("button", name="Post it on TikTok").click()
    page.get_by_text("A private video reaches nobody").wait_for()
    page.get_by_role("button", name="Post it on TikTok").wait_for()  # they may choose again later
    page.get_by_label("Link to your TikTok video").wait_for()  # or post it themselves
    screenshot(page, "38-post-private-only")
    page.context.close()

    assert TikTokPost.objects.get().failure == "private_only"
    assert not ActionClaim.objects.filter(rule__trigger="ugc_share").exists()
