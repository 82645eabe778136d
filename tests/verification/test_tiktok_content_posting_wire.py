"""The Content Posting adapter speaks TikTok's documented wire format (providers.md 1.10, 3.4, 3.5 and
TikTok's media transfer guide), checked against recorded requests and the reference's responses."""

import io
import itertools
import json

import httpx
import pytest

from verification.providers import tiktok

MB = 1024 * 1024
LOG_ID = "202206221854370101130062072500FFA2"


class Recorder:
    """Stands in for TikTok: keeps every request and answers from a script."""

    def __init__(self, *answers):
        self.requests: list[httpx.Request] = []
        self.answers = list(answers)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.requests.append(request)
        status, body = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(body, dict):
            return httpx.Response(status, json=body)
        return httpx.Response(status, content=body)


@pytest.fixture
def tiktok_api(monkeypatch, settings):
    settings.TIKTOK_API_BASE = "https://open.tiktokapis.com"

    def install(*answers):
        recorder = Recorder(*answers)
        monkeypatch.setattr(
            tiktok, "http_client", lambda: httpx.Client(transport=httpx.MockTransport(recorder))
        )
        return recorder

    return install


def ok(data):
    return 200, {"data": data, "error": {"code": "ok", "message": "", "log_id": LOG_ID}}


def error(code, status):
    return status, {"data": {}, "error": {"code": code, "message": "refused", "log_id": LOG_ID}}


def test_creator_info_is_a_bearer_post_to_its_path(tiktok_api):
    api = tiktok_api(
        ok({"privacy_level_options": ["PUBLIC_TO_EVERYONE", "SELF_ONLY"], "comment_disabled": True})
    )

    creator = tiktok.creator_info_query(access_token="act.pat")

    request = api.requests[0]
    assert (request.method, str(request.url)) == (
        "POST",
        "https://open.tiktokapis.com/v2/post/publish/creator_info/query/",
    )
    assert request.headers["Authorization"] == "Bearer act.pat"
    assert request.headers["Content-Type"] == "application/json; charset=UTF-8"
    assert creator["privacy_level_options"] == ["PUBLIC_TO_EVERYONE", "SELF_ONLY"]


def test_video_init_sends_the_documented_direct_post_body(tiktok_api):
    api = tiktok_api(
        ok(
            {
                "publish_id": "v_pub_file~v2-1.123456789",
                "upload_url": "https://open-upload.tiktokapis.com/video/?upload_id=67890&upload_token=Xza123",
            }
        )
    )
    body = tiktok.direct_post_body(
        caption="Ad · Paid partnership with Alpaca Coffee #morning",
        privacy_level="PUBLIC_TO_EVERYONE",
        video_size=50000123,
        creator={"comment_disabled": True},
        # The person switched comments and duets on; the account has comments off.
        choices={"allow_comment": True, "allow_duet": True, "your_brand": True},
    )

    publish_id, upload_url = tiktok.video_init(access_token="act.pat", body=body)

    request = api.requests[0]
    assert str(request.url) == "https://open.tiktokapis.com/v2/post/publish/video/init/"
    assert request.headers["Content-Type"] == "application/json; charset=UTF-8"
    sent = json.loads(request.content)
    # The reference's example body (providers.md 3.5), key for key.
    assert sent == {
        "post_info": {
            "title": "Ad · Paid partnership with Alpaca Coffee #morning",
            "privacy_level": "PUBLIC_TO_EVERYONE",
            "disable_duet": False,  # switched on by the person
            "disable_comment": True,  # the creator's own setting wins
            "disable_stitch": True,  # off unless the person switches it on
            "video_cover_timestamp_ms": 1000,
            "brand_content_toggle": True,
            "brand_organic_toggle": True,  # "Your brand" ticked as well
            "is_aigc": False,
        },
        "source_info": {
            "source": "FILE_UPLOAD",
            "video_size": 50000123,
            "chunk_size": 10 * MB,
            "total_chunk_count": 4,
        },
    }
    assert (publish_id, upload_url) == (
        "v_pub_file~v2-1.123456789",
        "https://open-upload.tiktokapis.com/video/?upload_id=67890&upload_token=Xza123",
    )


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("spam_risk_too_many_posts", 403),
        ("spam_risk_user_banned_from_posting", 403),
        ("unaudited_client_can_only_post_to_private_accounts", 403),
        ("privacy_level_option_mismatch", 403),
        ("reached_active_user_cap", 403),
        ("rate_limit_exceeded", 429),
        ("scope_not_authorized", 401),
        ("access_token_invalid", 401),
        ("invalid_params", 400),
    ],
)
def test_video_init_errors_come_back_as_their_code(tiktok_api, code, status):
    tiktok_api(error(code, status))
    body = tiktok.direct_post_body(
        caption="Ad", privacy_level="PUBLIC_TO_EVERYONE", video_size=1000, creator={}
    )

    with pytest.raises(tiktok.TikTokError) as raised:
        tiktok.video_init(access_token="act.pat", body=body)

    assert raised.value.code == code


def test_an_error_answered_with_http_200_is_still_an_error(tiktok_api):
    tiktok_api(error("spam_risk_too_many_posts", 200))

    with pytest.raises(tiktok.TikTokError, match="spam_risk_too_many_posts"):
        tiktok.creator_info_query(access_token="act.pat")


@pytest.mark.parametrize(
    ("size", "plan"),
    [
        (1, (1, 1)),
        (5 * MB - 1, (5 * MB - 1, 1)),  # under 5 MB: one chunk, the whole video
        (5 * MB, (5 * MB, 1)),
        (10 * MB, (10 * MB, 1)),
        (25 * MB, (10 * MB, 2)),  # the last chunk takes the trailing 5 MB
        (50000123, (10 * MB, 4)),
        (4 * 1024 * MB, (10 * MB, 409)),
    ],
)
def test_chunks_follow_the_media_transfer_rules(size, plan):
    chunk_size, count = tiktok.chunk_plan(size)
    ranges = tiktok.chunk_ranges(size, chunk_size, count)

    assert (chunk_size, count) == plan
    assert 1 <= count <= 1000
    assert ranges[0][0] == 0 and ranges[-1][1] == size - 1
    assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(ranges))  # in order, no gaps
    if size >= 5 * MB:
        assert all(5 * MB <= last - first + 1 <= 64 * MB for first, last in ranges[:-1])
        assert ranges[-1][1] - ranges[-1][0] + 1 <= 128 * MB


def test_the_upload_puts_each_chunk_in_order_with_its_content_range(tiktok_api):
    api = tiktok_api((206, b""), (206, b""), (201, b""))
    size = 25 * MB
    data = bytes(range(256)) * (size // 256)
    source = tiktok.direct_post_body(
        caption="Ad", privacy_level="PUBLIC_TO_EVERYONE", video_size=size, creator={}
    )["source_info"]
    url = "https://open-upload.tiktokapis.com/video/?upload_id=67890&upload_token=Xza123"

    tiktok.video_upload(
        upload_url=url, file=io.BytesIO(data), video_size=size, content_type="video/mp4", source_info=source
    )

    assert [r.method for r in api.requests] == ["PUT", "PUT"]
    assert [r.headers["Content-Range"] for r in api.requests] == [
        f"bytes 0-{10 * MB - 1}/{size}",
        f"bytes {10 * MB}-{size - 1}/{size}",
    ]
    assert [r.headers["Content-Type"] for r in api.requests] == ["video/mp4", "video/mp4"]
    assert [int(r.headers["Content-Length"]) for r in api.requests] == [10 * MB, 15 * MB]
    assert b"".join(r.content for r in api.requests) == data
    assert str(api.requests[0].url) == url


def test_a_refused_chunk_stops_the_upload(tiktok_api):
    api = tiktok_api((403, b"<html>expired</html>"))
    source = {"chunk_size": 1000, "total_chunk_count": 1}

    with pytest.raises(tiktok.TikTokError) as raised:
        tiktok.video_upload(
            upload_url="https://open-upload.tiktokapis.com/video/?upload_id=1",
            file=io.BytesIO(b"x" * 1000),
            video_size=1000,
            content_type="video/mp4",
            source_info=source,
        )

    assert raised.value.code == "invalid_file_upload" and len(api.requests) == 1


def test_status_fetch_reads_the_misspelt_post_id_list(tiktok_api):
    api = tiktok_api(
        ok(
            {
                "status": "PUBLISH_COMPLETE",
                "publicaly_available_post_id": [7300000000000000042],
                "uploaded_bytes": 2048,
            }
        )
    )

    status = tiktok.publish_status_fetch(access_token="act.pat", publish_id="v_pub_file~v2-1.1")

    request = api.requests[0]
    assert str(request.url) == "https://open.tiktokapis.com/v2/post/publish/status/fetch/"
    assert json.loads(request.content) == {"publish_id": "v_pub_file~v2-1.1"}
    assert status == tiktok.PublishStatus("PUBLISH_COMPLETE", "", "7300000000000000042", 2048)


def test_status_fetch_reports_a_failure_and_its_reason(tiktok_api):
    tiktok_api(ok({"status": "FAILED", "fail_reason": "duration_check_failed"}))

    status = tiktok.publish_status_fetch(access_token="act.pat", publish_id="v_pub_file~v2-1.1")

    assert (status.status, status.fail_reason, status.post_id) == ("FAILED", "duration_check_failed", "")


@pytest.mark.parametrize(
    ("event", "content", "expected"),
    [
        (
            "post.publish.failed",
            {"publish_id": "p1", "reason": "spam_risk_too_many_posts", "publish_type": "DIRECT_PUBLISH"},
            ("p1", tiktok.PublishStatus("FAILED", "spam_risk_too_many_posts")),
        ),
        (
            "post.publish.complete",
            {"publish_id": "p1", "publish_type": "DIRECT_PUBLISH"},
            ("p1", tiktok.PublishStatus("PUBLISH_COMPLETE")),
        ),
        (
            "post.publish.publicly_available",
            {"publish_id": "p1", "post_id": "7300000000000000042", "publish_type": "DIRECT_PUBLISH"},
            ("p1", tiktok.PublishStatus("PUBLISH_COMPLETE", post_id="7300000000000000042")),
        ),
        (
            "post.publish.no_longer_publicaly_available",
            {"publish_id": "p1", "post_id": "7300000000000000042", "publish_type": "DIRECT_PUBLISH"},
            ("p1", tiktok.PublishStatus("NO_LONGER_PUBLIC", post_id="7300000000000000042")),
        ),
        (
            "post.publish.no_longer_publicly_available",
            {"publish_id": "p1", "post_id": "7300000000000000042", "publish_type": "DIRECT_PUBLISH"},
            ("p1", tiktok.PublishStatus("NO_LONGER_PUBLIC", post_id="7300000000000000042")),
        ),
        ("video.publish.completed", {"share_id": "video.1.x"}, None),  # the legacy Video Kit event
        ("post.publish.complete", {"publish_type": "DIRECT_PUBLISH"}, None),  # no publish_id
    ],
)
def test_publish_webhooks_are_read_from_their_json_string_content(event, content, expected):
    payload = {
        "client_key": "sbx-joyback",
        "event": event,
        "create_time": 1615338610,
        "user_openid": "723f24d7-e717-40f8-a2b6-cb8464cd23b4",
        "content": json.dumps(content),
    }

    assert tiktok.publish_event(payload) == expected


def test_the_consent_url_asks_for_video_publish_comma_separated(settings):
    url = tiktok.authorize_url(
        state="s", redirect_uri="https://joyback.example/v/tiktok/callback/", publish=True
    )

    assert "scope=user.info.basic%2Cuser.info.stats%2Cvideo.list%2Cvideo.publish" in url
    assert "video.publish" not in tiktok.authorize_url(state="s", redirect_uri="https://x.example/cb/")
