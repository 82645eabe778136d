"""The sandbox TikTok as reach shares meet it: views that grow over the window, counts that trail
and sometimes drop in a recount, and Spark Ads authorisation codes answered as the Business API does."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from verification.models import SandboxTikTokVideo
from verification.providers import tiktok
from verification.sandbox.tiktok.business import ad_code_generate
from verification.sandbox.tiktok.display_api import reported_views, video_post
from verification.sandbox.tiktok.oauth import sandbox_user_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def video():
    return video_post(user=sandbox_user_for("Pat Creator"), caption="Ad · hello", view_count=100)


def aged(video, hours):
    SandboxTikTokVideo.objects.filter(pk=video.pk).update(create_time=timezone.now() - timedelta(hours=hours))
    video.refresh_from_db()


def test_views_grow_by_the_hour_and_are_reported_late(video):
    SandboxTikTokVideo.objects.filter(pk=video.pk).update(views_per_hour=1_000, report_lag_minutes=60)
    aged(video, 5)

    assert reported_views(video) == 100 + 4_000  # counted an hour ago


def test_every_nth_read_is_a_recount_a_twentieth_lower(video):
    SandboxTikTokVideo.objects.filter(pk=video.pk).update(view_count=2_000, dip_every=3)
    video.refresh_from_db()

    seen = []
    for reads in (1, 2, 3, 4):
        video.reads = reads
        seen.append(reported_views(video))

    assert seen == [2_000, 2_000, 1_900, 2_000]


def test_the_studio_sets_growth_and_generates_a_code(client, video):
    url = reverse("verification:sandbox_tiktok_studio")

    client.post(
        url, {"action": "growth", "video_id": video.video_id, "views_per_hour": "250", "dip_every": "4"}
    )
    client.post(url, {"action": "ad_code", "video_id": video.video_id, "days": "60"})

    video.refresh_from_db()
    assert (video.views_per_hour, video.dip_every) == (250, 4)
    code = video.ad_codes.get()
    assert code.days == 60 and code.code in client.get(url).content.decode()


def test_the_business_api_says_which_video_a_code_is_for_and_until_when(video):
    code = ad_code_generate(video=video, days=7)

    answer = tiktok.ad_code_info(auth_code=code.code)

    assert (answer.item_id, answer.status) == (video.video_id, "AUTHORIZED")
    assert answer.auth_end_time - answer.auth_start_time == 7 * 86400


def test_an_unknown_code_or_a_wrong_token_is_an_error_in_the_business_apis_envelope(video, settings):
    with pytest.raises(tiktok.TikTokError) as unknown:
        tiktok.ad_code_info(auth_code="#nothing-like-this-exists-1234")
    settings.TIKTOK_ADS_ACCESS_TOKEN = "wrong"
    with pytest.raises(tiktok.TikTokError) as token:
        tiktok.ad_code_info(auth_code=ad_code_generate(video=video, days=7).code)

    assert (unknown.value.code, token.value.code) == ("40002", "40105")


def test_an_expired_or_revoked_code_is_not_authorised(video):
    code = ad_code_generate(video=video, days=7)
    type(code).objects.filter(pk=code.pk).update(created_at=timezone.now() - timedelta(days=8))
    revoked = ad_code_generate(video=video, days=30)
    type(revoked).objects.filter(pk=revoked.pk).update(revoked=True)

    assert tiktok.ad_code_info(auth_code=code.code).status == "EXPIRED"
    assert tiktok.ad_code_info(auth_code=revoked.code).status == "UNAUTHORIZED"
