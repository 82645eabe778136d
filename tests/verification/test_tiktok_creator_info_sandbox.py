"""The sandbox TikTok's creator_info and video/init, on the wire as TikTok's reference has them: the
creator's realistic settings (and a limited variant, reachable by a word in the display name or by
a setting), the can_post refusals, and init refusing what TikTok refuses, in TikTok's envelope."""

import re

import pytest

from tests.verification.test_tiktok_posting import connect
from tests.verification.test_tiktok_posting_sandbox import api, init_body
from verification.models import Identity, SandboxTikTokPublish

pytestmark = pytest.mark.django_db


def token_for(client, campaign, name="Pat Creator") -> str:
    connect(client, campaign, display_name=name)
    return Identity.objects.get().tiktok_token.access_token


def refused(response, status: int, code: str) -> None:
    """TikTok's error envelope: data {}, error {code, message, log_id}, the log id in x-tt-logid."""
    body = response.json()
    assert response.status_code == status
    assert body["data"] == {} and body["error"]["code"] == code and body["error"]["message"]
    assert re.fullmatch(r"[0-9A-F]{20,40}", body["error"]["log_id"])
    assert response["x-tt-logid"] == body["error"]["log_id"]


def test_creator_info_answers_with_every_documented_field(client, summer):
    data = api(client, "creator_info/query", token_for(client, summer)).json()["data"]

    assert set(data) == {
        "creator_avatar_url",
        "creator_username",
        "creator_nickname",
        "privacy_level_options",
        "comment_disabled",
        "duet_disabled",
        "stitch_disabled",
        "max_video_post_duration_sec",
    }
    assert (data["creator_nickname"], data["creator_username"]) == ("Pat Creator", "patcreator")
    assert data["creator_avatar_url"].startswith("http://sandbox.localhost/sandbox/tiktok/avatar/")
    assert (data["comment_disabled"], data["duet_disabled"], data["stitch_disabled"]) == (False, False, True)
    assert data["max_video_post_duration_sec"] == 600


def test_a_limited_creator_has_comments_off_and_short_videos(client, summer):
    data = api(client, "creator_info/query", token_for(client, summer, "Lena limited")).json()["data"]

    assert (data["comment_disabled"], data["duet_disabled"], data["max_video_post_duration_sec"]) == (
        True,
        True,
        15,
    )


def test_the_setting_makes_every_creator_limited(client, summer, settings):
    settings.SANDBOX_TIKTOK_CREATOR = "limited"

    data = api(client, "creator_info/query", token_for(client, summer)).json()["data"]

    assert (data["comment_disabled"], data["max_video_post_duration_sec"]) == (True, 15)


@pytest.mark.parametrize(
    ("name", "code"),
    [("Bea banned", "spam_risk_user_banned_from_posting"), ("Cai capped", "reached_active_user_cap")],
)
def test_a_creator_who_cannot_post_is_refused_with_tiktoks_code(client, summer, name, code):
    refused(api(client, "creator_info/query", token_for(client, summer, name)), 403, code)


def test_a_creator_past_the_daily_cap_is_refused_at_creator_info(client, summer, settings):
    settings.SANDBOX_TIKTOK_POSTS_PER_DAY = 0

    refused(api(client, "creator_info/query", token_for(client, summer)), 403, "spam_risk_too_many_posts")


@pytest.mark.parametrize(
    ("privacy", "status", "code"),
    [
        ("EVERYONE", 403, "privacy_level_option_mismatch"),
        ("SELF_ONLY", 400, "invalid_params"),  # branded content cannot be private
    ],
)
def test_video_init_refuses_a_privacy_tiktok_refuses_in_its_envelope(client, summer, privacy, status, code):
    refused(api(client, "video/init", token_for(client, summer), init_body(privacy=privacy)), status, code)
    assert not SandboxTikTokPublish.objects.exists()


def test_video_init_counts_the_title_in_utf16_code_units(client, summer):
    token = token_for(client, summer)
    over, at_limit = init_body(), init_body()
    over["post_info"]["title"] = "🙂" * 1101  # 1,101 characters, 2,202 UTF-16 units
    at_limit["post_info"]["title"] = "🙂" * 1100  # 2,200 units

    refused(api(client, "video/init", token, over), 400, "invalid_params")
    assert api(client, "video/init", token, at_limit).status_code == 200


def test_the_sandbox_avatar_is_a_picture_of_the_creators_initial(client, summer):
    url = api(client, "creator_info/query", token_for(client, summer)).json()["data"]["creator_avatar_url"]

    response = client.get(url.removeprefix("http://sandbox.localhost"))

    assert response["Content-Type"] == "image/svg+xml" and b">P</text>" in response.content
