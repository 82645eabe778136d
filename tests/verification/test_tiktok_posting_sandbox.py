"""The sandbox TikTok's Content Posting endpoints and post.publish webhooks, as TikTok's reference has
them, and the webhook side of a post: signed, fresh, stored once, processed once."""

import json
import time

import pytest
from django.urls import reverse

from tests.verification.test_tiktok_posting import connect, mp4, post_video
from tests.verification.test_tiktok_webhooks import post as webhook_post
from tests.verification.test_tiktok_webhooks import signed
from verification.models import ActionClaim, Identity, ProviderEvent, SandboxTikTokPublish, TikTokPost
from verification.providers import tiktok
from verification.services.provider_events import provider_events_process

pytestmark = pytest.mark.django_db

MB = 1024 * 1024


@pytest.fixture
def pat_token(client, summer):
    connect(client, summer)
    return Identity.objects.get().tiktok_token.access_token


def api(client, path, token, body=None):
    return client.post(
        f"/sandbox/tiktok/v2/post/publish/{path}/",
        json.dumps(body or {}),
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )


def init_body(size=2048, privacy="PUBLIC_TO_EVERYONE", **source):
    body = tiktok.direct_post_body(
        caption="Ad · Paid partnership", privacy_level=privacy, video_size=size, creator={}
    )
    body["source_info"].update(source)
    return body


def code(response):
    return response.json()["error"]["code"]


def test_posting_needs_the_video_publish_scope(client, summer):
    connect(client, summer, publish=False)
    token = Identity.objects.get().tiktok_token.access_token

    response = api(client, "creator_info/query", token)

    assert (response.status_code, code(response)) == (401, "scope_not_authorized")


def test_creator_info_lists_the_privacy_options(client, pat_token):
    response = api(client, "creator_info/query", pat_token)

    assert response.status_code == 200 and code(response) == "ok"
    assert response.json()["data"]["privacy_level_options"] == [
        "PUBLIC_TO_EVERYONE",
        "MUTUAL_FOLLOW_FRIENDS",
        "FOLLOWER_OF_CREATOR",
        "SELF_ONLY",
    ]
    assert response["x-tt-logid"] == response.json()["error"]["log_id"]


@pytest.mark.parametrize(
    ("body", "status", "expected"),
    [
        (init_body(privacy="FRIENDS"), 403, "privacy_level_option_mismatch"),
        (init_body(privacy="SELF_ONLY"), 400, "invalid_params"),  # branded content cannot be private
        (init_body(size=20 * MB, chunk_size=2 * MB, total_chunk_count=10), 400, "invalid_params"),
        (init_body(size=25 * MB, chunk_size=10 * MB, total_chunk_count=3), 400, "invalid_params"),
        (init_body(size=3 * MB, chunk_size=1 * MB, total_chunk_count=3), 400, "invalid_params"),
        ({"post_info": {}}, 400, "invalid_params"),
    ],
)
def test_video_init_refuses_what_tiktok_refuses(client, pat_token, body, status, expected):
    response = api(client, "video/init", pat_token, body)

    assert (response.status_code, code(response)) == (status, expected)
    assert not SandboxTikTokPublish.objects.exists()


def test_an_unaudited_app_may_post_only_privately(client, pat_token, settings):
    settings.SANDBOX_TIKTOK_UNAUDITED = True

    response = api(client, "video/init", pat_token, init_body())

    assert (response.status_code, code(response)) == (
        403,
        "unaudited_client_can_only_post_to_private_accounts",
    )


def test_video_init_allows_six_a_minute_per_token(client, pat_token):
    answers = [api(client, "video/init", pat_token, init_body()) for _ in range(7)]

    assert [a.status_code for a in answers] == [200] * 6 + [429]
    assert code(answers[-1]) == "rate_limit_exceeded"


def test_status_fetch_allows_thirty_a_minute_per_token(client, pat_token):
    publish_id = api(client, "video/init", pat_token, init_body()).json()["data"]["publish_id"]

    answers = [api(client, "status/fetch", pat_token, {"publish_id": publish_id}) for _ in range(31)]

    assert [a.status_code for a in answers].count(200) == 30
    assert code(answers[-1]) == "rate_limit_exceeded"


def test_status_fetch_of_someone_elses_or_an_unknown_publish_is_refused(client, summer, pat_token):
    publish_id = api(client, "video/init", pat_token, init_body()).json()["data"]["publish_id"]
    other = type(client)()
    connect(other, summer, display_name="Quinn Other")
    quinn = Identity.objects.get(display_name="Quinn Other").tiktok_token.access_token

    theirs = api(client, "status/fetch", quinn, {"publish_id": publish_id})
    unknown = api(client, "status/fetch", pat_token, {"publish_id": "v_pub_file~v2-1.0"})

    assert (theirs.status_code, code(theirs)) == (400, "token_not_authorized_for_specified_publish_id")
    assert (unknown.status_code, code(unknown)) == (400, "invalid_publish_id")


def _upload(client, url, chunk, content_range):
    return client.generic(
        "PUT", url, chunk, content_type="video/mp4", headers={"Content-Range": content_range}
    )


def test_the_upload_url_takes_chunks_in_order_and_expires(client, pat_token):
    data = api(client, "video/init", pat_token, init_body()).json()["data"]
    url = data["upload_url"].removeprefix("http://sandbox.localhost")
    video = mp4().read()

    wrong_range = _upload(client, url, video, "bytes 1-2048/2048")
    SandboxTikTokPublish.objects.update(upload_expires_at="2000-01-01T00:00:00Z")
    expired = _upload(client, url, video, "bytes 0-2047/2048")

    assert wrong_range.status_code == 416
    assert expired.status_code == 404
    assert SandboxTikTokPublish.objects.get().uploaded_bytes == 0


# Webhooks of a post: signed, fresh, stored once, processed once.


def publish_event_body(publish_id, event="post.publish.publicly_available", post_id="7300000000000000042"):
    return json.dumps(
        {
            "client_key": "sbx-joyback",
            "event": event,
            "create_time": int(time.time()),
            "user_openid": Identity.objects.get().subject,
            "content": json.dumps(
                {"publish_id": publish_id, "post_id": post_id, "publish_type": "DIRECT_PUBLISH"}
            ),
        }
    ).encode()


@pytest.fixture
def processing_post(client, summer, monkeypatch, django_capture_on_commit_callbacks):
    """Pat's video is uploaded; TikTok's own webhooks are held back, the test sends them."""
    from verification.sandbox.tiktok import content_posting as sandbox

    monkeypatch.setattr(sandbox, "webhook_deliver", lambda **kwargs: 200)
    connect(client, summer)
    with django_capture_on_commit_callbacks(execute=True):
        post_video(client, summer, mp4())
    return TikTokPost.objects.get()


@pytest.mark.parametrize("spelling", ["post.publish.publicly_available"])
def test_a_signed_publish_webhook_makes_the_claim_once_even_when_replayed(
    client, processing_post, spelling, django_capture_on_commit_callbacks
):
    body = publish_event_body(processing_post.publish_id, event=spelling)

    first = webhook_post(client, body, signed(body))
    replay = webhook_post(client, body, signed(body))
    with django_capture_on_commit_callbacks(execute=True):
        provider_events_process()

    assert first.status_code == replay.status_code == 200
    assert ProviderEvent.objects.filter(payload__event=spelling).count() == 1
    claim = ActionClaim.objects.get(rule__trigger="ugc_share")
    assert claim.evidence["video"]["video_id"] == "7300000000000000042"
    assert claim.evidence["label"] == "set_by_joyback"


@pytest.mark.parametrize("tamper", ["post_id", "wrong_secret", "stale"])
def test_a_forged_or_stale_publish_webhook_changes_nothing(client, processing_post, tamper):
    body = publish_event_body(processing_post.publish_id)
    header = signed(body)
    if tamper == "post_id":
        body = body.replace(b"7300000000000000042", b"7300000000000000099")
    elif tamper == "wrong_secret":
        header = signed(body, secret="guess")
    else:
        header = signed(body, at=int(time.time()) - 3600)

    response = webhook_post(client, body, header)
    provider_events_process()

    assert response.status_code in (400, 401)
    assert not ProviderEvent.objects.exists()
    assert TikTokPost.objects.get().status == "processing"
    assert not ActionClaim.objects.filter(rule__trigger="ugc_share").exists()


def test_a_failed_webhook_for_a_post_tells_the_person(client, summer, processing_post):
    body = publish_event_body(processing_post.publish_id, event="post.publish.failed")
    body = body.replace(b'\\"post_id\\"', b'\\"reason\\": \\"spam_risk_text\\", \\"x\\"')

    webhook_post(client, body, signed(body))
    provider_events_process()

    processing_post.refresh_from_db()
    assert (processing_post.status, processing_post.failure) == ("failed", "spam_risk_text")
    steps = client.get(reverse("verification:steps", args=[summer.slug])).content.decode()
    assert "TikTok refused the caption" in steps


def test_a_post_held_in_moderation_waits_then_is_passed_from_the_studio(
    client, summer, settings, django_capture_on_commit_callbacks
):
    settings.SANDBOX_TIKTOK_HOLD_MODERATION = True
    connect(client, summer)
    with django_capture_on_commit_callbacks(execute=True):
        post_video(client, summer, mp4())
    provider_events_process()
    post = TikTokPost.objects.get()
    assert post.status == "published"
    steps = client.get(reverse("verification:steps", args=[summer.slug])).content.decode()
    assert "TikTok is reviewing it before it goes public" in steps
    studio = client.get(reverse("verification:sandbox_tiktok_studio")).content.decode()
    assert post.publish_id in studio

    client.post(
        reverse("verification:sandbox_tiktok_studio"), {"action": "moderate", "publish_id": post.publish_id}
    )
    with django_capture_on_commit_callbacks(execute=True):
        provider_events_process()

    post.refresh_from_db()
    assert post.status == "public"
    assert ActionClaim.objects.get(rule__trigger="ugc_share").evidence["video"]["video_id"] == post.post_id


def test_deleting_a_posted_video_in_the_studio_sends_no_longer_publicaly_available(
    client, summer, django_capture_on_commit_callbacks
):
    connect(client, summer)
    with django_capture_on_commit_callbacks(execute=True):
        post_video(client, summer, mp4())
    with django_capture_on_commit_callbacks(execute=True):
        provider_events_process()
    post = TikTokPost.objects.get()

    client.post(reverse("verification:sandbox_tiktok_studio"), {"action": "delete", "video_id": post.post_id})
    provider_events_process()

    event = ProviderEvent.objects.get(payload__event="post.publish.no_longer_publicaly_available")
    assert event.outcome == "no_longer_public"
