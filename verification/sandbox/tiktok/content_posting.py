"""The sandbox TikTok's Content Posting API (Direct Post): creator_info, video/init, the upload URL,
status/fetch and the post.publish.* webhooks. The disclosure toggles are kept with the publish and
shown by no read endpoint, as on TikTok."""

import hashlib
import json
import secrets
import time
from datetime import timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.http import HttpResponse, JsonResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape
from django.utils.text import slugify
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from verification.models import SandboxTikTokGrant, SandboxTikTokPublish, SandboxTikTokUser
from verification.sandbox.tiktok.common import (
    bearer_grant,
    data_error,
    invalid_token,
    log_id_new,
    sandbox_only,
    webhook_deliver,
)
from verification.sandbox.tiktok.display_api import video_post

PRIVACY_OPTIONS = ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"]
TITLE_MAX_UTF16 = 2200

# creator_info's answers, by the variant a creator is in (SANDBOX_TIKTOK_CREATOR, or a word in
# their display name): what a real account can look like.
CREATOR_SETTINGS = {
    "": {
        "comment_disabled": False,
        "duet_disabled": False,
        "stitch_disabled": True,
        "max_video_post_duration_sec": 600,
    },
    "limited": {
        "comment_disabled": True,
        "duet_disabled": True,
        "stitch_disabled": True,
        "max_video_post_duration_sec": 15,
    },
}
CANNOT_POST = {
    "banned": (
        "spam_risk_user_banned_from_posting",
        "The user is banned from making new posts.",
    ),
    "capped": (
        "reached_active_user_cap",
        "The daily quota for active publishing users from your client is reached.",
    ),
}


UPLOAD_TTL = timedelta(hours=1)


VIDEO_MAX_BYTES = 4 * 1024**3


INIT_PER_MINUTE, STATUS_PER_MINUTE = 6, 30


def _ok(data: dict, status: int = 200) -> JsonResponse:
    log_id = log_id_new()
    response = JsonResponse(
        {"data": data, "error": {"code": "ok", "message": "", "log_id": log_id}}, status=status
    )
    response["x-tt-logid"] = log_id
    return response


def _publishing_grant(request) -> tuple[SandboxTikTokGrant | None, JsonResponse | None]:
    grant = bearer_grant(request)
    if grant is None:
        return None, invalid_token()
    if "video.publish" not in grant.scope.split(","):
        return None, data_error("scope_not_authorized", "The user did not authorize the scope required.", 401)
    return grant, None


def _over_limit(grant: SandboxTikTokGrant, endpoint: str, per_minute: int) -> bool:
    """A one-minute sliding window per access token and endpoint, as TikTok counts Content Posting."""
    key = f"sandbox-tiktok:{endpoint}:{hashlib.sha256(grant.access_token.encode()).hexdigest()[:24]}"
    now = time.time()
    recent = [t for t in cache.get(key, []) if now - t < 60]
    if len(recent) >= per_minute:
        return True
    cache.set(key, [*recent, now], 120)
    return False


def _rate_limited() -> JsonResponse:
    return data_error("rate_limit_exceeded", "Too many requests. Please try again later.", 429)


def creator_variant(user: SandboxTikTokUser) -> str:
    """ "limited", "banned", "capped" or "" for this creator (the setting wins over the name)."""
    if settings.SANDBOX_TIKTOK_CREATOR:
        return settings.SANDBOX_TIKTOK_CREATOR
    words = user.display_name.lower()
    return next((variant for variant in ("limited", "banned", "capped") if variant in words), "")


def _posted_today(user: SandboxTikTokUser) -> int:
    return SandboxTikTokPublish.objects.filter(
        grant__user=user, created_at__gte=timezone.now() - timedelta(days=1)
    ).count()


@csrf_exempt
@require_POST
def creator_info(request):
    """POST /v2/post/publish/creator_info/query/: who is posting and what their account allows,
    or why they cannot post now."""
    sandbox_only(request)
    grant, refused = _publishing_grant(request)
    if refused:
        return refused
    user = grant.user
    variant = creator_variant(user)
    if variant in CANNOT_POST:
        return data_error(*CANNOT_POST[variant], 403)
    if _posted_today(user) >= settings.SANDBOX_TIKTOK_POSTS_PER_DAY:
        return data_error(
            "spam_risk_too_many_posts", "The user has reached the daily post cap for this app.", 403
        )
    avatar = reverse("verification:sandbox_tiktok_avatar", args=[user.open_id])
    return _ok(
        {
            "creator_avatar_url": f"http://sandbox.localhost{avatar}",  # as upload_url: the sandbox's host
            "creator_username": slugify(user.display_name).replace("-", "") or "user",
            "creator_nickname": user.display_name,
            "privacy_level_options": PRIVACY_OPTIONS,
            **CREATOR_SETTINGS.get(variant, CREATOR_SETTINGS[""]),
        }
    )


AVATAR = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64">
<rect width="64" height="64" rx="32" fill="hsl({hue},60%,45%)"/>
<text x="32" y="41" font-family="sans-serif" font-size="26" fill="#fff" text-anchor="middle">{letter}</text>
</svg>"""


@require_http_methods(["GET"])
def avatar(request, open_id):
    """The sandbox creator's profile picture: their initial on a colour of their own."""
    sandbox_only()
    user = SandboxTikTokUser.objects.filter(open_id=open_id).first()
    letter = (user.display_name[:1] if user else "?").upper()
    hue = int(hashlib.sha256(open_id.encode()).hexdigest()[:4], 16) % 360
    svg = AVATAR.format(hue=hue, letter=escape(letter))
    return HttpResponse(svg, content_type="image/svg+xml")


def _source_problem(source: dict) -> str:
    """What breaks TikTok's media transfer rules, or ""."""
    if source.get("source") != "FILE_UPLOAD":
        return "the sandbox takes source FILE_UPLOAD"
    size, chunk, count = (source.get(k) for k in ("video_size", "chunk_size", "total_chunk_count"))
    if not all(isinstance(v, int) and v > 0 for v in (size, chunk, count)):
        return "video_size, chunk_size and total_chunk_count must be positive integers"
    if size > VIDEO_MAX_BYTES:
        return "video_size is over 4 GB"
    if size < 5 * 1024 * 1024:
        return "" if chunk == size and count == 1 else "a video under 5 MB is uploaded whole"
    if not 5 * 1024 * 1024 <= chunk <= 64 * 1024 * 1024:
        return "chunk_size must be between 5 MB and 64 MB"
    if count != size // chunk or not 1 <= count <= 1000:
        return "total_chunk_count must be video_size / chunk_size rounded down (1 to 1000)"
    if size - chunk * (count - 1) > 128 * 1024 * 1024:
        return "the final chunk is over 128 MB"
    return ""


@csrf_exempt
@require_POST
def video_init(request):
    """POST /v2/post/publish/video/init/: checks the post_info, then hands out an upload URL."""
    sandbox_only(request)
    grant, refused = _publishing_grant(request)
    if refused:
        return refused
    if _over_limit(grant, "video_init", INIT_PER_MINUTE):
        return _rate_limited()
    try:
        body = json.loads(request.body)
        post_info, source = body["post_info"], body["source_info"]
        privacy = post_info["privacy_level"]
    except (ValueError, KeyError, TypeError):
        return data_error("invalid_params", "post_info.privacy_level and source_info are required", 400)
    if privacy not in PRIVACY_OPTIONS:
        return data_error("privacy_level_option_mismatch", "privacy_level is not among the options", 403)
    title = str(post_info.get("title", ""))
    if len(title.encode("utf-16-le")) // 2 > TITLE_MAX_UTF16:
        return data_error("invalid_params", "title is longer than 2200 UTF-16 code units", 400)
    if problem := _source_problem(source):
        return data_error("invalid_params", problem, 400)
    if settings.SANDBOX_TIKTOK_UNAUDITED and privacy != "SELF_ONLY":
        return data_error(
            "unaudited_client_can_only_post_to_private_accounts",
            "Unaudited clients can only post to private accounts.",
            403,
        )
    if post_info.get("brand_content_toggle") and privacy == "SELF_ONLY":
        # TikTok's rule for posting screens: branded content cannot be private.
        return data_error("invalid_params", "branded content cannot be posted with SELF_ONLY", 400)
    if _posted_today(grant.user) >= settings.SANDBOX_TIKTOK_POSTS_PER_DAY:
        return data_error(
            "spam_risk_too_many_posts", "The user has reached the daily post cap for this app.", 403
        )
    publish = SandboxTikTokPublish.objects.create(
        grant=grant,
        publish_id=f"v_pub_file~v2-1.{secrets.randbelow(10**18)}",
        upload_token=secrets.token_urlsafe(24),
        upload_expires_at=timezone.now() + UPLOAD_TTL,
        post_info=post_info,
        video_size=source["video_size"],
        chunk_size=source["chunk_size"],
        total_chunk_count=source["total_chunk_count"],
    )
    query = urlencode({"upload_id": publish.pk, "upload_token": publish.upload_token})
    upload_url = f"http://sandbox.localhost{reverse('verification:sandbox_tiktok_upload')}?{query}"
    return _ok({"publish_id": publish.publish_id, "upload_url": upload_url})


def _expected_range(publish: SandboxTikTokPublish) -> tuple[int, int]:
    first = publish.uploaded_bytes
    index = first // publish.chunk_size
    last = (
        publish.video_size - 1 if index >= publish.total_chunk_count - 1 else first + publish.chunk_size - 1
    )
    return first, last


@csrf_exempt
@require_http_methods(["PUT"])
def upload(request):
    """The upload URL: chunks PUT in order with Content-Range; 206 until the last, then 201."""
    sandbox_only(request)
    publish = SandboxTikTokPublish.objects.filter(
        pk=request.GET.get("upload_id") if str(request.GET.get("upload_id", "")).isdigit() else 0,
        upload_token=request.GET.get("upload_token", ""),
    ).first()
    if publish is None or publish.upload_expires_at < timezone.now():
        return data_error("invalid_params", "upload_url is unknown or expired", 404)
    if publish.status != "PROCESSING_UPLOAD" or publish.uploaded_bytes >= publish.video_size:
        return data_error("invalid_params", "this upload is complete", 400)
    expected = "bytes {}-{}/{}".format(*_expected_range(publish), publish.video_size)
    chunk = request.body
    if request.headers.get("Content-Range", "") != expected:
        return data_error("invalid_params", f"expected Content-Range: {expected}", 416)
    first, last = _expected_range(publish)
    if len(chunk) != last - first + 1:
        return data_error("invalid_params", "the body is not as long as its Content-Range", 400)
    if first == 0:
        # Enough of a file-format check for a sandbox: an MP4/MOV starts with an "ftyp" box.
        publish.looks_like_video = chunk[4:8] == b"ftyp"
    publish.uploaded_bytes = last + 1
    publish.save(update_fields=["uploaded_bytes", "looks_like_video"])
    if publish.uploaded_bytes < publish.video_size:
        return HttpResponse(status=206)
    transaction.on_commit(lambda: publish_finish(publish))
    return HttpResponse(status=201)


def publish_finish(publish: SandboxTikTokPublish) -> None:
    """TikTok's processing and moderation, at once: FAILED for a file that is not a video, else
    PUBLISH_COMPLETE, and public (a video with a post_id) unless the post is private."""
    user = publish.grant.user
    publish_type = {"publish_type": "DIRECT_PUBLISH"}
    if not publish.looks_like_video:
        SandboxTikTokPublish.objects.filter(pk=publish.pk).update(
            status="FAILED", fail_reason="file_format_check_failed"
        )
        content = {"publish_id": publish.publish_id, "reason": "file_format_check_failed", **publish_type}
        webhook_deliver(event="post.publish.failed", user=user, content=content)
        return
    SandboxTikTokPublish.objects.filter(pk=publish.pk).update(status="PUBLISH_COMPLETE")
    webhook_deliver(
        event="post.publish.complete", user=user, content={"publish_id": publish.publish_id, **publish_type}
    )
    # Moderation: at once, unless a tester holds it to pass it from the studio (TikTok: about a
    # minute, sometimes hours). A private post never becomes public.
    if not settings.SANDBOX_TIKTOK_HOLD_MODERATION:
        publish_moderated(publish)


def publish_moderated(publish: SandboxTikTokPublish) -> None:
    """Past moderation: a public post is a video with its post_id, announced by publicly_available."""
    if publish.post_info.get("privacy_level") != "PUBLIC_TO_EVERYONE" or publish.video_id:
        return
    user = publish.grant.user
    video = video_post(user=user, caption=str(publish.post_info.get("title", ""))[:2200])
    SandboxTikTokPublish.objects.filter(pk=publish.pk).update(video=video)
    content = {"publish_id": publish.publish_id, "post_id": video.video_id, "publish_type": "DIRECT_PUBLISH"}
    webhook_deliver(event="post.publish.publicly_available", user=user, content=content)


@csrf_exempt
@require_POST
def status_fetch(request):
    sandbox_only(request)
    grant = bearer_grant(request)
    if grant is None:
        return invalid_token()
    if _over_limit(grant, "status_fetch", STATUS_PER_MINUTE):
        return _rate_limited()
    try:
        publish_id = str(json.loads(request.body)["publish_id"])
    except (ValueError, KeyError, TypeError):
        return data_error("invalid_params", "publish_id is required", 400)
    publish = (
        SandboxTikTokPublish.objects.filter(publish_id=publish_id).select_related("grant", "video").first()
    )
    if publish is None:
        return data_error("invalid_publish_id", "publish_id does not exist", 400)
    if publish.grant.user_id != grant.user_id:
        return data_error(
            "token_not_authorized_for_specified_publish_id", "The token cannot see this publish_id.", 400
        )
    data = {"status": publish.status, "uploaded_bytes": publish.uploaded_bytes}
    if publish.fail_reason:
        data["fail_reason"] = publish.fail_reason
    if publish.video is not None and not publish.video.deleted:
        data["publicaly_available_post_id"] = [int(publish.video.video_id)]
    return _ok(data)
