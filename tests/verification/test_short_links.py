"""The link TikTok's app copies is a short one (Share -> Copy link: https://vm.tiktok.com/ZM…/);
TikTok redirects it to the video's /@user/video/<id> address, and the share is taken as if that
had been pasted. The person may also pick one of their own recent videos (video.list)."""

import pytest
from django.urls import reverse

from tests.verification.test_engagement import DISCLOSED, share, steps_html
from tests.verification.test_tiktok_login import authorize
from verification.models import ActionClaim, Identity, SandboxTikTokUser
from verification.providers import tiktok
from verification.sandbox.tiktok.display_api import video_post, video_share_url, video_short_url
from verification.services.shares import tiktok_recent_videos

pytestmark = pytest.mark.django_db


@pytest.fixture
def connected(client, summer):
    """Pat's browser has connected TikTok and Pat has posted a disclosed video."""
    client.get(authorize(client, summer.slug, display_name="Pat Creator"))
    pat = SandboxTikTokUser.objects.get(display_name="Pat Creator")
    return video_post(user=pat, caption=DISCLOSED, view_count=10)


@pytest.mark.parametrize("host", ["vm", "vt"])
def test_a_short_link_is_taken_as_the_video_it_leads_to(client, summer, connected, host):
    short = video_short_url(connected).replace("//vm.", f"//{host}.")

    response = share(client, summer, short)

    claim = ActionClaim.objects.get(rule__trigger="ugc_share")
    assert "We check your video when its window closes" in response.content.decode()
    assert claim.evidence["video"]["video_id"] == connected.video_id
    assert (claim.evidence["submitted_url"], claim.evidence["resolved_url"].split("?")[0]) == (
        short,
        video_share_url(connected),
    )


def test_a_short_link_to_no_video_says_how_to_get_a_good_one(client, summer, connected):
    share(client, summer, "https://vm.tiktok.com/ZMzzzzzzzz/")

    assert not ActionClaim.objects.filter(rule__trigger="ugc_share").exists()
    assert "This TikTok link leads to no video" in steps_html(client, summer)


def test_the_short_link_parser_takes_only_tiktoks_short_hosts():
    assert tiktok.short_link_parts("https://vm.tiktok.com/ZMabc123/") == ("vm.tiktok.com", "ZMabc123")
    assert tiktok.short_link_parts(" vt.tiktok.com/ZSabc123?x=1 ") == ("vt.tiktok.com", "ZSabc123")
    for other in ("https://vm.tiktok.com.evil.example/ZMabc123/", "https://evil.example/vm.tiktok.com/x1234"):
        assert tiktok.short_link_parts(other) is None


def test_the_person_picks_one_of_their_recent_videos_instead_of_pasting(client, summer, connected):
    pat = SandboxTikTokUser.objects.get(display_name="Pat Creator")
    older = video_post(user=pat, caption="An older one", view_count=3)

    recent = tiktok_recent_videos(identity=Identity.objects.get(provider="tiktok"))
    steps = steps_html(client, summer)
    response = client.post(
        reverse("verification:share_submit", args=[summer.slug]),
        {"video_url": "", "video_pick": video_share_url(connected)},
        follow=True,
    )

    assert {video.video_id for video in recent} == {connected.video_id, older.video_id}
    assert video_share_url(connected) in steps and 'name="video_pick"' in steps
    assert "We check your video when its window closes" in response.content.decode()
    assert (
        ActionClaim.objects.get(rule__trigger="ugc_share").evidence["video"]["video_id"] == connected.video_id
    )
