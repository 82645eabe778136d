"""In a real browser, in German: Pat's caption names another sponsor; the page says what is wrong,
what to write instead and the rule, in German; Pat fixes the caption and checks again."""

import pytest

from campaigns.services.campaigns import campaign_create, campaign_transition
from campaigns.services.funding import campaign_fund
from compliance.models import RemediationCase
from tests.conftest import fund
from verification.models import SandboxTikTokUser, SandboxTikTokVideo
from verification.sandbox.tiktok.display_api import video_post, video_share_url

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

WORDING = "Werbung · Bezahlte Partnerschaft mit Alpaca Coffee"


@pytest.fixture
def kaffee(alpaca):
    fund(alpaca, 500_00, "EUR", reference="E2E-FIX")
    campaign = campaign_create(
        brand=alpaca,
        name="Kaffee",
        slug="kaffee",
        package="tiktok_only",
        currency="EUR",
        countries=["DE"],
        languages=["de"],
    )
    campaign_fund(campaign=campaign, amount=100_00)
    return campaign_transition(campaign=campaign, to="live")


def test_a_creator_fixes_a_caption_from_the_reason_shown(live_server, open_page, screenshot, kaffee):
    page = open_page("phone", "de")
    page.goto(f"{live_server.url}/c/kaffee/")
    page.get_by_role("button", name="TikTok verbinden").click()
    page.get_by_label("Sandbox TikTok user (display name)").fill("Pat Creator")
    page.get_by_role("button", name="Authorize").click()
    pat = SandboxTikTokUser.objects.get(display_name="Pat Creator")
    video = video_post(
        user=pat, caption="Werbung · Bezahlte Partnerschaft mit Tchibo. Mein Morgen!", view_count=40
    )
    page.get_by_label("Link zu deinem TikTok-Video").fill(video_share_url(video))
    page.get_by_role("button", name="Video einreichen").click()

    page.get_by_text("Deine Kennzeichnung nennt „Tchibo“ als Sponsor").wait_for()
    page.get_by_text(f"Schreib „{WORDING}“ und nenne damit Alpaca Coffee.").wait_for()
    page.get_by_text("Regel: Deutschland und Österreich").wait_for()
    screenshot(page, "33-caption-reason-de")

    SandboxTikTokVideo.objects.filter(pk=video.pk).update(caption=f"{WORDING}. Mein Morgen!")
    page.get_by_role("button", name="Erledigt: bitte erneut prüfen").click()
    page.get_by_text("Danke, deine Werbekennzeichnung ist jetzt korrigiert.").wait_for()
    screenshot(page, "34-caption-fixed-de")
    assert RemediationCase.objects.get().status == "fixed"
