"""In a real browser at phone size: Lena, whose TikTok account has comments off and takes videos of
up to 15 seconds, goes through the posting screen. She sees her account, the caption as it will go
out, the disclosure that stays on; pressing Post without a privacy puts her on the privacy choice;
a video too long is refused before anything is uploaded; then her video goes out. The screen is
photographed at phone and desktop size."""

import tempfile
from pathlib import Path

import pytest

from tests.e2e.conftest import no_serious_violations
from tests.e2e.test_post_through_joyback import connect_and_allow_posting
from tests.verification.test_tiktok_posting import mp4_bytes
from verification.models import SandboxTikTokPublish, TikTokPost

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SHOTS = Path(tempfile.gettempdir()) / "directpost"


@pytest.fixture
def live(creators, settings, tmp_path):
    settings.STORAGES = {
        **settings.STORAGES,
        "video_uploads": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "uploads")},
        },
    }
    settings.SANDBOX_TIKTOK_CREATOR = "limited"
    SHOTS.mkdir(parents=True, exist_ok=True)
    return creators


def shot(page, name):
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def choose(page, seconds):
    page.get_by_label("Your video (MP4, MOV or WebM, up to 4.0 GB)").set_input_files(
        files=[{"name": "morning.mp4", "mimeType": "video/mp4", "buffer": mp4_bytes(40_000, seconds)}]
    )


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_the_posting_screen_step_by_step(live_server, open_page, live, size):
    page = open_page(size, timeout=15_000)
    connect_and_allow_posting(page, live_server)
    form = page.locator("form.post-form")
    form.get_by_text("Posting to TikTok as").wait_for()
    form.get_by_text("Cora Creator").wait_for()
    assert form.get_by_role("switch", name="Allow comment").is_disabled()
    assert not form.get_by_role("switch", name="Duet").is_checked()
    assert form.get_by_role("switch", name="Disclose video content").is_checked()
    assert form.get_by_role("switch", name="Disclose video content").is_disabled()
    assert form.get_by_role("radio", name="Only me", exact=False).is_disabled()
    assert not form.get_by_role("radio", name="Everyone", exact=True).is_checked()
    form.get_by_text("Your TikTok account can post videos of up to 15 seconds.").wait_for()

    page.get_by_label("Your caption (after the disclosure)").fill("Morning ritual 🙂")
    form.get_by_text("Ad · Paid partnership with Alpaca Coffee Morning ritual 🙂").wait_for()
    form.get_by_text("58 of 2200 characters").wait_for()
    form.scroll_into_view_if_needed()
    no_serious_violations(page)
    shot(page, f"{size}-1-posting-screen")
    form.screenshot(path=str(SHOTS / f"{size}-1-form-only.png"))

    choose(page, 12)
    page.get_by_role("button", name="Post it on TikTok").click()
    page.get_by_text("Choose who can see your video.").wait_for()
    assert page.evaluate("document.activeElement.name") == "privacy_level"
    assert page.get_by_label("Your caption (after the disclosure)").input_value() == "Morning ritual 🙂"
    shot(page, f"{size}-2-privacy-not-chosen")

    choose(page, 20)
    page.get_by_role("radio", name="Everyone", exact=True).check()
    page.get_by_role("button", name="Post it on TikTok").click()
    page.get_by_text(
        "This video is 20 seconds long; your TikTok account can post videos of up to 15"
    ).wait_for()
    assert page.evaluate("document.activeElement.name") == "video"
    shot(page, f"{size}-3-video-too-long")
    assert not TikTokPost.objects.exists()

    choose(page, 12)
    page.get_by_role("radio", name="Everyone", exact=True).check()
    page.get_by_role("button", name="Post it on TikTok").click()
    page.get_by_text("Your video is on its way to TikTok").wait_for()
    page.get_by_text("It may take a few minutes to appear on your TikTok profile.").wait_for()
    shot(page, f"{size}-4-posted")
    page.get_by_text("Posted through JoyBack with TikTok's “Paid partnership” label on.").wait_for()
    shot(page, f"{size}-5-public")

    sent = SandboxTikTokPublish.objects.get().post_info
    assert (sent["privacy_level"], sent["disable_comment"], sent["brand_content_toggle"]) == (
        "PUBLIC_TO_EVERYONE",
        True,
        True,
    )


def test_an_account_tiktok_will_not_let_post_is_told_why_and_offered_the_link(
    live_server, open_page, live, settings
):
    settings.SANDBOX_TIKTOK_CREATOR = "banned"
    page = open_page("phone", timeout=15_000)
    connect_and_allow_posting(page, live_server)

    page.get_by_text("TikTok does not let this account post through apps at the moment").wait_for()
    assert page.get_by_role("button", name="Post it on TikTok").count() == 0
    page.get_by_role("link", name="Paste a link to a video posted in the app").click()
    assert page.evaluate("location.hash") == "#video-url-ugc_share"
    page.get_by_label("Link to your TikTok video").wait_for()
    shot(page, "phone-6-cannot-post-now")
    assert not TikTokPost.objects.exists()
