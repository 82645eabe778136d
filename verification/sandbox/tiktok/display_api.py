"""The sandbox TikTok's Display API (/v2/user/info/, /v2/video/query/) and its videos: how one is
posted, its share URL, and the views TikTok would report for it."""

import json
import secrets
from datetime import timedelta

from django.db.models import F
from django.http import HttpResponse, JsonResponse
from django.utils import timezone
from django.utils.text import slugify
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from verification.models import SandboxTikTokUser, SandboxTikTokVideo
from verification.sandbox.tiktok.common import (
    bearer_grant,
    data_error,
    invalid_token,
    log_id_new,
    sandbox_only,
)

FIELDS_BY_SCOPE = {
    "user.info.basic": {"open_id", "union_id", "avatar_url", "display_name"},
    "user.info.stats": {"follower_count", "following_count", "likes_count", "video_count"},
}


VIDEO_FIELDS = {
    "id",
    "create_time",
    "share_url",
    "video_description",
    "duration",
    "title",
    "cover_image_url",
    "embed_link",
    "view_count",
    "like_count",
    "comment_count",
    "share_count",
}


def user_info(request):
    sandbox_only(request)
    grant = bearer_grant(request)
    if grant is None:
        return invalid_token()
    fields = [field for field in request.GET.get("fields", "").split(",") if field]
    if not fields:
        return data_error("invalid_params", "fields is required", 400)
    allowed = set().union(*(FIELDS_BY_SCOPE.get(scope, set()) for scope in grant.scope.split(",")))
    if not set(fields) <= allowed:
        return data_error("scope_permission_missed", "Some fields need scopes the token lacks.", 400)
    user = grant.user
    values = {
        "open_id": user.open_id,
        "union_id": user.union_id,
        "avatar_url": f"https://p16-sign.sandbox.localhost/{user.open_id}.jpeg",
        "display_name": user.display_name,
        "follower_count": user.follower_count,
        "following_count": 80,
        "likes_count": user.follower_count * 9,
        "video_count": user.video_count,
    }
    log_id = log_id_new()
    response = JsonResponse(
        {
            "data": {"user": {field: values[field] for field in fields}},
            "error": {"code": "ok", "message": "", "log_id": log_id},
        }
    )
    response["x-tt-logid"] = log_id
    return response


@csrf_exempt
@require_POST
def video_query(request):
    """POST /v2/video/query/: the caller's own, live videos among the ids asked for."""
    sandbox_only(request)
    grant = bearer_grant(request)
    if grant is None:
        return invalid_token()
    if "video.list" not in grant.scope.split(","):
        return data_error("scope_not_authorized", "The user did not authorize the scope required.", 401)
    fields = [field for field in request.GET.get("fields", "").split(",") if field]
    if not fields or not set(fields) <= VIDEO_FIELDS:
        return data_error("invalid_params", "fields is required and must name video fields", 400)
    try:
        ids = json.loads(request.body)["filters"]["video_ids"]
    except (ValueError, KeyError, TypeError):
        return data_error("invalid_params", 'body must be {"filters": {"video_ids": [...]}}', 400)
    if not isinstance(ids, list) or len(ids) > 20 or not all(isinstance(i, str) for i in ids):
        return data_error("invalid_params", "video_ids must be at most 20 strings", 400)
    videos = list(SandboxTikTokVideo.objects.filter(user=grant.user, video_id__in=ids, deleted=False))
    SandboxTikTokVideo.objects.filter(pk__in=[video.pk for video in videos]).update(reads=F("reads") + 1)
    listed = []
    for video in videos:
        video.reads += 1
        video.view_count = reported_views(video)
        listed.append({field: _video_value(video, field) for field in fields})
    log_id = log_id_new()
    response = JsonResponse(
        {
            "data": {"videos": listed, "cursor": 0, "has_more": False},
            "error": {"code": "ok", "message": "", "log_id": log_id},
        }
    )
    response["x-tt-logid"] = log_id
    return response


def _video_value(video: SandboxTikTokVideo, field: str):
    return {
        "id": video.video_id,
        "create_time": int(video.create_time.timestamp()),
        "share_url": video_share_url(video),
        "video_description": video.caption,
        "title": video.caption[:150],
        "duration": 21,
        "cover_image_url": f"https://p16-sign.sandbox.localhost/{video.video_id}.jpeg",
        "embed_link": f"https://www.tiktok.com/player/v1/{video.video_id}",
        "view_count": video.view_count,
        "like_count": video.like_count,
        "comment_count": video.comment_count,
        "share_count": video.share_count,
    }[field]


def reported_views(video: SandboxTikTokVideo, *, now=None) -> int:
    """The views TikTok would report now: the set count plus its growth, as counted
    report_lag_minutes ago, and on every dip_every-th read a recount a twentieth lower."""
    now = now or timezone.now()
    counted_at = now - timedelta(minutes=video.report_lag_minutes)
    hours = max((counted_at - video.create_time).total_seconds(), 0) / 3600
    views = video.view_count + int(video.views_per_hour * hours)
    if video.dip_every and video.reads and video.reads % video.dip_every == 0:
        views -= views // 20
    return views


def video_share_url(video: SandboxTikTokVideo) -> str:
    # The same handle the studio page shows: the display name, slugified, without dashes.
    handle = slugify(video.user.display_name).replace("-", "") or "user"
    return f"https://www.tiktok.com/@{handle}/video/{video.video_id}"


def video_post(*, user: SandboxTikTokUser, caption: str, **counts) -> SandboxTikTokVideo:
    return SandboxTikTokVideo.objects.create(
        user=user,
        video_id=str(7_300_000_000_000_000_000 + secrets.randbelow(10**17)),
        caption=caption,
        **counts,
    )


@csrf_exempt
@require_POST
def video_list(request):
    """POST /v2/video/list/: the caller's own public videos, newest first (max_count at most 20)."""
    sandbox_only(request)
    grant = bearer_grant(request)
    if grant is None:
        return invalid_token()
    if "video.list" not in grant.scope.split(","):
        return data_error("scope_not_authorized", "The user did not authorize the scope required.", 401)
    fields = [field for field in request.GET.get("fields", "").split(",") if field]
    if not fields or not set(fields) <= VIDEO_FIELDS:
        return data_error("invalid_params", "fields is required and must name video fields", 400)
    try:
        max_count = int(json.loads(request.body or b"{}").get("max_count", 10))
    except (ValueError, TypeError, AttributeError):
        return data_error("invalid_params", 'body must be {"max_count": 1..20}', 400)
    if not 1 <= max_count <= 20:
        return data_error("invalid_params", "max_count must be between 1 and 20", 400)
    videos = list(
        SandboxTikTokVideo.objects.filter(user=grant.user, deleted=False)
        .select_related("user")
        .order_by("-create_time", "-pk")[:max_count]
    )
    listed = []
    for video in videos:
        video.view_count = reported_views(video)
        listed.append({field: _video_value(video, field) for field in fields})
    log_id = log_id_new()
    response = JsonResponse(
        {
            "data": {"videos": listed, "cursor": 0, "has_more": False},
            "error": {"code": "ok", "message": "", "log_id": log_id},
        }
    )
    response["x-tt-logid"] = log_id
    return response


# Short links: what the app's Share -> Copy link gives. The sandbox's code is the video id in base 62
# behind "ZM", as real ones start; vm.tiktok.com answers with a redirect to the canonical address.
_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def short_code(video_id: str) -> str:
    number, code = int(video_id), ""
    while number:
        number, digit = divmod(number, 62)
        code = _DIGITS[digit] + code
    return "ZM" + (code or "0")


def video_short_url(video: SandboxTikTokVideo) -> str:
    return f"https://vm.tiktok.com/{short_code(video.video_id)}/"


def short_link(request, host, code):
    """GET https://vm.tiktok.com/<code>/: a redirect to the video, or to TikTok's home page for a
    code that names no video (as TikTok does)."""
    sandbox_only(request)
    video_id = 0
    for char in code.removeprefix("ZM"):
        if char not in _DIGITS:
            video_id = -1
            break
        video_id = video_id * 62 + _DIGITS.index(char)
    video = (
        SandboxTikTokVideo.objects.filter(video_id=str(video_id), deleted=False)
        .select_related("user")
        .first()
        if code.startswith("ZM") and video_id > 0
        else None
    )
    response = HttpResponse(status=301)
    response["Location"] = video_share_url(video) + "?_r=1&_t=sandbox" if video else "https://www.tiktok.com/"
    return response
