"""The sandbox TikTok: authorize page, token endpoint and user info, in TikTok's v2 wire format.

Only reachable while settings.SANDBOX is on. OAuth errors come back as HTTP 200 with an `error`
body, as TikTok's do, so that the adapter is proven not to trust status codes.
"""

import hashlib
import json
import secrets
import time
import uuid
from datetime import timedelta
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import F
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.text import slugify
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from verification.models import (
    SandboxTikTokAdCode,
    SandboxTikTokGrant,
    SandboxTikTokPublish,
    SandboxTikTokUser,
    SandboxTikTokVideo,
)
from verification.providers.loopback import http_client
from verification.providers.tiktok import webhook_signature

CODE_TTL = timedelta(minutes=5)
ACCESS_TTL = 86400
REFRESH_TTL = 31536000


def _sandbox_only():
    if not settings.SANDBOX:
        raise Http404("The sandbox is off")


def _log_id() -> str:
    return timezone.now().strftime("%Y%m%d%H%M%S") + secrets.token_hex(8).upper()


def _oauth_error(error: str, description: str) -> JsonResponse:
    log_id = _log_id()
    response = JsonResponse({"error": error, "error_description": description, "log_id": log_id})
    response["x-tt-logid"] = log_id
    return response


def _data_error(code: str, message: str, status: int) -> JsonResponse:
    log_id = _log_id()
    response = JsonResponse(
        {"data": {}, "error": {"code": code, "message": message, "log_id": log_id}}, status=status
    )
    response["x-tt-logid"] = log_id
    return response


def _redirect_uri_ok(uri: str) -> bool:
    # TikTok wants exact registered https URIs; the sandbox accepts our own callback path on any host
    # so that it works on localhost and in tests, and still refuses queries and fragments.
    parts = urlsplit(uri)
    return (
        parts.scheme in ("http", "https")
        and not parts.query
        and not parts.fragment
        and parts.path.endswith("/v/tiktok/callback/")
    )


def sandbox_user_for(display_name: str) -> SandboxTikTokUser:
    digest = hashlib.sha256(display_name.casefold().encode()).hexdigest()
    user, _ = SandboxTikTokUser.objects.get_or_create(
        display_name=display_name,
        defaults={"open_id": str(uuid.UUID(digest[:32])), "union_id": str(uuid.UUID(digest[32:]))},
    )
    return user


# What TikTok's consent screen says each scope allows (its own wording, in English as on tiktok.com).
SCOPE_WORDS = {
    "user.info.basic": "Read your profile info (avatar, display name)",
    "user.info.stats": "Read your profile's numbers (followers, likes, videos)",
    "user.info.profile": "Read your profile details (bio, profile link, verified status)",
    "video.list": "Read your public videos (captions, views, likes, comments)",
}


def _scope_words(scope: str) -> list[tuple[str, str]]:
    return [(name, SCOPE_WORDS.get(name, name)) for name in scope.split(",") if name]


@require_http_methods(["GET", "POST"])
def authorize(request):
    _sandbox_only()
    params = request.GET
    problems = []
    if params.get("client_key") != settings.TIKTOK_CLIENT_KEY:
        problems.append("client_key is not a registered app")
    if params.get("response_type") != "code":
        problems.append("response_type must be code")
    if not params.get("scope"):
        problems.append("scope is required")
    if not _redirect_uri_ok(params.get("redirect_uri", "")):
        problems.append("redirect_uri is not registered")
    if problems:
        return render(request, "sandbox/tiktok_authorize.html", {"problems": problems}, status=400)
    redirect_uri, state = params["redirect_uri"], params.get("state", "")
    asks_publish = "video.publish" in params["scope"].split(",")
    if request.method == "GET":
        context = {
            "scope": params["scope"],
            "scopes": _scope_words(params["scope"]),
            "asks_publish": asks_publish,
        }
        return render(request, "sandbox/tiktok_authorize.html", context)
    if request.POST.get("decision") != "approve":
        query = {"error": "access_denied", "error_description": "The user denied the request", "state": state}
        return redirect(f"{redirect_uri}?{urlencode(query)}")
    display_name = request.POST.get("display_name", "").strip()[:60]
    if not display_name:
        context = {
            "scope": params["scope"],
            "problems": ["Choose a TikTok display name for this sandbox user."],
        }
        return render(request, "sandbox/tiktok_authorize.html", context, status=400)
    user = sandbox_user_for(display_name)
    if request.POST.get("empty_account"):
        # A tester's stand-in for a freshly made account: no followers, no videos.
        SandboxTikTokUser.objects.filter(pk=user.pk).update(follower_count=0, video_count=0)
    grant = SandboxTikTokGrant.objects.create(
        user=user,
        # Real codes carry * and ! too; the callback must pass them on exactly as decoded.
        code=f"{secrets.token_urlsafe(24)}*0!{secrets.randbelow(10_000)}",
        redirect_uri=redirect_uri,
        # TikTok lets the person untick a scope; the callback's `scopes` says what they granted.
        scope=",".join(
            scope
            for scope in params["scope"].split(",")
            if scope != "video.publish" or request.POST.get("allow_publish")
        ),
        code_expires_at=timezone.now() + CODE_TTL,
    )
    return redirect(
        f"{redirect_uri}?{urlencode({'code': grant.code, 'scopes': grant.scope, 'state': state})}"
    )


@csrf_exempt
@require_POST
def token(request):
    _sandbox_only()
    if request.content_type != "application/x-www-form-urlencoded":
        return _oauth_error("invalid_request", "The request body must be form-encoded.")
    form = request.POST
    if form.get("client_key") != settings.TIKTOK_CLIENT_KEY or not secrets.compare_digest(
        form.get("client_secret", ""), settings.TIKTOK_CLIENT_SECRET
    ):
        return _oauth_error("invalid_client", "Client key or secret is invalid.")
    if form.get("grant_type") == "refresh_token":
        return _token_refresh(form.get("refresh_token", ""))
    if form.get("grant_type") != "authorization_code":
        return _oauth_error(
            "unsupported_grant_type", "The sandbox offers authorization_code and refresh_token."
        )
    with transaction.atomic():
        grant = SandboxTikTokGrant.objects.select_for_update().filter(code=form.get("code", "")).first()
        if grant is None or grant.code_used_at or grant.code_expires_at < timezone.now():
            return _oauth_error("invalid_grant", "Authorization code is expired or invalid.")
        if grant.redirect_uri != form.get("redirect_uri"):
            return _oauth_error(
                "invalid_request", "Redirect_uri is not matched with the uri when requesting code."
            )
        grant.code_used_at = timezone.now()
        grant.access_token = f"act.{secrets.token_urlsafe(32)}"
        grant.refresh_token = f"rft.{secrets.token_urlsafe(32)}"
        grant.access_expires_at = timezone.now() + timedelta(seconds=ACCESS_TTL)
        grant.save()
    return _token_response(grant)


def _token_refresh(refresh_token: str) -> JsonResponse:
    with transaction.atomic():
        grant = SandboxTikTokGrant.objects.select_for_update().filter(refresh_token=refresh_token).first()
        if not refresh_token or grant is None:
            return _oauth_error("invalid_grant", "Refresh token is invalid or expired.")
        # TikTok may rotate the refresh token: the sandbox always does, so callers must store it.
        grant.access_token = f"act.{secrets.token_urlsafe(32)}"
        grant.refresh_token = f"rft.{secrets.token_urlsafe(32)}"
        grant.access_expires_at = timezone.now() + timedelta(seconds=ACCESS_TTL)
        grant.save()
    return _token_response(grant)


def _token_response(grant: SandboxTikTokGrant) -> JsonResponse:
    return JsonResponse(
        {
            "access_token": grant.access_token,
            "expires_in": ACCESS_TTL,
            "open_id": grant.user.open_id,
            "refresh_expires_in": REFRESH_TTL,
            "refresh_token": grant.refresh_token,
            "scope": grant.scope,
            "token_type": "Bearer",
        }
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


def _bearer_grant(request) -> SandboxTikTokGrant | None:
    access_token = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
    grant = SandboxTikTokGrant.objects.filter(access_token=access_token).select_related("user").first()
    if not access_token or grant is None or grant.access_expires_at < timezone.now():
        return None
    return grant


def _invalid_token() -> JsonResponse:
    return _data_error(
        "access_token_invalid", "The access token is invalid or not found in the request.", 401
    )


def user_info(request):
    _sandbox_only()
    grant = _bearer_grant(request)
    if grant is None:
        return _invalid_token()
    fields = [field for field in request.GET.get("fields", "").split(",") if field]
    if not fields:
        return _data_error("invalid_params", "fields is required", 400)
    allowed = set().union(*(FIELDS_BY_SCOPE.get(scope, set()) for scope in grant.scope.split(",")))
    if not set(fields) <= allowed:
        return _data_error("scope_permission_missed", "Some fields need scopes the token lacks.", 400)
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
    log_id = _log_id()
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
    _sandbox_only()
    grant = _bearer_grant(request)
    if grant is None:
        return _invalid_token()
    if "video.list" not in grant.scope.split(","):
        return _data_error("scope_not_authorized", "The user did not authorize the scope required.", 401)
    fields = [field for field in request.GET.get("fields", "").split(",") if field]
    if not fields or not set(fields) <= VIDEO_FIELDS:
        return _data_error("invalid_params", "fields is required and must name video fields", 400)
    try:
        ids = json.loads(request.body)["filters"]["video_ids"]
    except (ValueError, KeyError, TypeError):
        return _data_error("invalid_params", 'body must be {"filters": {"video_ids": [...]}}', 400)
    if not isinstance(ids, list) or len(ids) > 20 or not all(isinstance(i, str) for i in ids):
        return _data_error("invalid_params", "video_ids must be at most 20 strings", 400)
    videos = list(SandboxTikTokVideo.objects.filter(user=grant.user, video_id__in=ids, deleted=False))
    SandboxTikTokVideo.objects.filter(pk__in=[video.pk for video in videos]).update(reads=F("reads") + 1)
    listed = []
    for video in videos:
        video.reads += 1
        video.view_count = reported_views(video)
        listed.append({field: _video_value(video, field) for field in fields})
    log_id = _log_id()
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


def webhook_deliver(
    *, event: str, user: SandboxTikTokUser, content: dict, timestamp: int | None = None
) -> int:
    """POST a TikTok webhook to our endpoint, signed as TikTok signs: Tiktok-Signature t=..,s=.."""
    timestamp = timestamp or int(time.time())
    body = json.dumps(
        {
            "client_key": settings.TIKTOK_CLIENT_KEY,
            "event": event,
            "create_time": timestamp,
            "user_openid": user.open_id,
            "content": json.dumps(content),
        }
    ).encode()
    signature = webhook_signature(body=body, timestamp=timestamp, secret=settings.TIKTOK_CLIENT_SECRET)
    with http_client() as client:
        response = client.post(
            reverse("verification:tiktok_webhook"),
            content=body,
            headers={"Content-Type": "application/json", "Tiktok-Signature": signature},
        )
    return response.status_code


@require_http_methods(["GET", "POST"])
def studio(request):
    """The tester's side of TikTok: post videos, set their counts, delete them, revoke access."""
    _sandbox_only()
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "post":
            name = request.POST.get("display_name", "").strip()[:60]
            user = SandboxTikTokUser.objects.filter(display_name=name).first()
            if user is not None:
                video_post(user=user, caption=request.POST.get("caption", "")[:2200], **_counts(request.POST))
        video = SandboxTikTokVideo.objects.filter(video_id=request.POST.get("video_id", "")).first()
        if video is not None and action == "update":
            SandboxTikTokVideo.objects.filter(pk=video.pk).update(**_counts(request.POST))
        elif video is not None and action == "delete":
            SandboxTikTokVideo.objects.filter(pk=video.pk).update(deleted=True)
            publish = SandboxTikTokPublish.objects.filter(video=video).first()
            if publish is not None:
                # The docs' own spelling of the event.
                content = {
                    "publish_id": publish.publish_id,
                    "post_id": video.video_id,
                    "publish_type": "DIRECT_PUBLISH",
                }
                webhook_deliver(
                    event="post.publish.no_longer_publicaly_available", user=video.user, content=content
                )
        publish = SandboxTikTokPublish.objects.filter(publish_id=request.POST.get("publish_id", "")).first()
        if publish is not None and action == "moderate" and publish.status == "PUBLISH_COMPLETE":
            publish_moderated(publish)
        elif video is not None and action == "growth":
            SandboxTikTokVideo.objects.filter(pk=video.pk).update(**_growth(request.POST))
        elif video is not None and action == "ad_code":
            ad_code_generate(video=video, days=int(request.POST.get("days", "30") or 30))
        user = SandboxTikTokUser.objects.filter(open_id=request.POST.get("open_id", "")).first()
        if user is not None and action == "revoke":
            SandboxTikTokGrant.objects.filter(user=user).update(access_token=None, refresh_token=None)
            webhook_deliver(event="authorization.removed", user=user, content={"reason": 1})
        back = _studio_back(request.POST.get("next", ""))
        return redirect(
            reverse("verification:sandbox_tiktok_studio") + (f"?{urlencode({'next': back})}" if back else "")
        )
    users = SandboxTikTokUser.objects.order_by("display_name").prefetch_related("videos__ad_codes")
    in_moderation = SandboxTikTokPublish.objects.filter(
        status="PUBLISH_COMPLETE", video__isnull=True, post_info__privacy_level="PUBLIC_TO_EVERYONE"
    ).select_related("grant__user")
    context = {
        "users": users,
        "in_moderation": in_moderation,
        "back": _studio_back(request.GET.get("next", "")),
        "ad_code_days": AD_CODE_DAYS,
    }
    return render(request, "sandbox/tiktok_studio.html", context)


def _growth(form) -> dict:
    values = {}
    for field in ("views_per_hour", "report_lag_minutes", "dip_every"):
        try:
            values[field] = max(0, int(form.get(field, "0") or 0))
        except ValueError:
            values[field] = 0
    return values


AD_CODE_DAYS = (7, 30, 60, 365)
SANDBOX_ADS_TOKEN = "sbx-ads-token"  # noqa: S105  (the sandbox Business API's own, public by design)


def ad_code_generate(*, video: SandboxTikTokVideo, days: int) -> SandboxTikTokAdCode:
    """The creator's "Ad settings -> Generate code" in TikTok: a code for this video and period."""
    return SandboxTikTokAdCode.objects.create(
        video=video, code="#" + secrets.token_urlsafe(40), days=days if days in AD_CODE_DAYS else 30
    )


def _business_error(code: int, message: str) -> JsonResponse:
    # The Business API answers HTTP 200 with its own code; 0 is success.
    return JsonResponse({"code": code, "message": message, "request_id": _log_id(), "data": {}})


def ad_code_info(request):
    """GET /open_api/v1.3/tt_video/info/: what a Spark Ads authorisation code is for, and until when."""
    _sandbox_only()
    if request.headers.get("Access-Token", "") != SANDBOX_ADS_TOKEN:
        return _business_error(40105, "Access token is incorrect or has been revoked.")
    if not request.GET.get("advertiser_id"):
        return _business_error(40002, "advertiser_id: Missing data for required field.")
    ad_code = (
        SandboxTikTokAdCode.objects.filter(code=request.GET.get("auth_code", ""))
        .select_related("video__user")
        .first()
    )
    if ad_code is None:
        return _business_error(40002, "The authorization code is invalid.")
    start = int(ad_code.created_at.timestamp())
    end = start + ad_code.days * 86400
    video = ad_code.video
    if ad_code.revoked or video.deleted:
        status = "UNAUTHORIZED"
    elif end <= time.time():
        status = "EXPIRED"
    else:
        status = "AUTHORIZED"
    return JsonResponse(
        {
            "code": 0,
            "message": "OK",
            "request_id": _log_id(),
            "data": {
                "item_info": {
                    "item_id": video.video_id,
                    "text": video.caption[:150],
                    "status": "ITEM_STATUS_PUBLIC",
                },
                "user_info": {"identity_id": video.user.open_id, "display_name": video.user.display_name},
                "auth_info": {
                    "ad_auth_status": status,
                    "invite_start_time": start,
                    "auth_start_time": start,
                    "auth_end_time": end,
                },
            },
        }
    )


def oembed(request):
    """GET https://www.tiktok.com/oembed?url=...: a public video's embed card, as TikTok serves it."""
    _sandbox_only()
    url = request.GET.get("url", "")
    video_id = (
        "".join(ch for ch in url.rsplit("/video/", 1)[-1].split("?")[0] if ch.isdigit())
        if "/video/" in url
        else ""
    )
    video = SandboxTikTokVideo.objects.filter(video_id=video_id, deleted=False).select_related("user").first()
    if video is None:
        return JsonResponse({"code": 400, "message": "Something went wrong"}, status=400)
    handle = slugify(video.user.display_name).replace("-", "") or "user"
    share_url = video_share_url(video)
    html = (
        f'<blockquote class="tiktok-embed" cite="{share_url}" data-video-id="{video.video_id}" '
        f'style="max-width: 605px;min-width: 325px;" > <section> <a target="_blank" title="@{handle}" '
        f'href="https://www.tiktok.com/@{handle}?refer=embed">@{handle}</a> </section> </blockquote> '
        '<script async src="https://www.tiktok.com/embed.js"></script>'
    )
    return JsonResponse(
        {
            "version": "1.0",
            "type": "video",
            "title": video.caption[:150],
            "author_url": f"https://www.tiktok.com/@{handle}",
            "author_name": video.user.display_name,
            "width": "100%",
            "height": "100%",
            "html": html,
            "thumbnail_width": 576,
            "thumbnail_height": 1024,
            "thumbnail_url": f"https://p16-sign.sandbox.localhost/{video.video_id}~tplv-noop.image",
            "provider_url": "https://www.tiktok.com",
            "provider_name": "TikTok",
            "author_unique_id": handle,
            "embed_product_id": video.video_id,
            "embed_type": "video",
        }
    )


def _studio_back(path: str) -> str:
    """Where the campaign page that sent the tester here is: a path on this site, nothing else."""
    return path if path.startswith("/") and not path.startswith("//") and "\\" not in path else ""


def _counts(form) -> dict:
    counts = {}
    for field in ("view_count", "like_count", "comment_count", "share_count"):
        try:
            counts[field] = max(0, int(form.get(field, "0") or 0))
        except ValueError:
            counts[field] = 0
    return counts


# Content Posting (Direct Post): creator_info, video/init, the upload URL, status/fetch and the
# post.publish.* webhooks. The disclosure toggles are kept with the publish and shown by no read
# endpoint, as on TikTok.

PRIVACY_OPTIONS = ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "SELF_ONLY"]
UPLOAD_TTL = timedelta(hours=1)
VIDEO_MAX_BYTES = 4 * 1024**3
INIT_PER_MINUTE, STATUS_PER_MINUTE = 6, 30


def _ok(data: dict, status: int = 200) -> JsonResponse:
    log_id = _log_id()
    response = JsonResponse(
        {"data": data, "error": {"code": "ok", "message": "", "log_id": log_id}}, status=status
    )
    response["x-tt-logid"] = log_id
    return response


def _publishing_grant(request) -> tuple[SandboxTikTokGrant | None, JsonResponse | None]:
    grant = _bearer_grant(request)
    if grant is None:
        return None, _invalid_token()
    if "video.publish" not in grant.scope.split(","):
        return None, _data_error(
            "scope_not_authorized", "The user did not authorize the scope required.", 401
        )
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
    return _data_error("rate_limit_exceeded", "Too many requests. Please try again later.", 429)


@csrf_exempt
@require_POST
def creator_info(request):
    _sandbox_only()
    grant, refused = _publishing_grant(request)
    if refused:
        return refused
    user = grant.user
    return _ok(
        {
            "creator_avatar_url": f"https://p16-sign.sandbox.localhost/{user.open_id}.jpeg",
            "creator_username": slugify(user.display_name).replace("-", "") or "user",
            "creator_nickname": user.display_name,
            "privacy_level_options": PRIVACY_OPTIONS,
            "comment_disabled": False,
            "duet_disabled": False,
            "stitch_disabled": True,
            "max_video_post_duration_sec": 600,
        }
    )


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
    _sandbox_only()
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
        return _data_error("invalid_params", "post_info.privacy_level and source_info are required", 400)
    if privacy not in PRIVACY_OPTIONS:
        return _data_error("privacy_level_option_mismatch", "privacy_level is not among the options", 403)
    if len(str(post_info.get("title", ""))) > 2200:
        return _data_error("invalid_params", "title is longer than 2200 characters", 400)
    if problem := _source_problem(source):
        return _data_error("invalid_params", problem, 400)
    if settings.SANDBOX_TIKTOK_UNAUDITED and privacy != "SELF_ONLY":
        return _data_error(
            "unaudited_client_can_only_post_to_private_accounts",
            "Unaudited clients can only post to private accounts.",
            403,
        )
    if post_info.get("brand_content_toggle") and privacy == "SELF_ONLY":
        # TikTok's rule for posting screens: branded content cannot be private.
        return _data_error("invalid_params", "branded content cannot be posted with SELF_ONLY", 400)
    posted_today = SandboxTikTokPublish.objects.filter(
        grant__user=grant.user, created_at__gte=timezone.now() - timedelta(days=1)
    ).count()
    if posted_today >= settings.SANDBOX_TIKTOK_POSTS_PER_DAY:
        return _data_error(
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
    _sandbox_only()
    publish = SandboxTikTokPublish.objects.filter(
        pk=request.GET.get("upload_id") if str(request.GET.get("upload_id", "")).isdigit() else 0,
        upload_token=request.GET.get("upload_token", ""),
    ).first()
    if publish is None or publish.upload_expires_at < timezone.now():
        return _data_error("invalid_params", "upload_url is unknown or expired", 404)
    if publish.status != "PROCESSING_UPLOAD" or publish.uploaded_bytes >= publish.video_size:
        return _data_error("invalid_params", "this upload is complete", 400)
    expected = "bytes {}-{}/{}".format(*_expected_range(publish), publish.video_size)
    chunk = request.body
    if request.headers.get("Content-Range", "") != expected:
        return _data_error("invalid_params", f"expected Content-Range: {expected}", 416)
    first, last = _expected_range(publish)
    if len(chunk) != last - first + 1:
        return _data_error("invalid_params", "the body is not as long as its Content-Range", 400)
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
    _sandbox_only()
    grant = _bearer_grant(request)
    if grant is None:
        return _invalid_token()
    if _over_limit(grant, "status_fetch", STATUS_PER_MINUTE):
        return _rate_limited()
    try:
        publish_id = str(json.loads(request.body)["publish_id"])
    except (ValueError, KeyError, TypeError):
        return _data_error("invalid_params", "publish_id is required", 400)
    publish = (
        SandboxTikTokPublish.objects.filter(publish_id=publish_id).select_related("grant", "video").first()
    )
    if publish is None:
        return _data_error("invalid_publish_id", "publish_id does not exist", 400)
    if publish.grant.user_id != grant.user_id:
        return _data_error(
            "token_not_authorized_for_specified_publish_id", "The token cannot see this publish_id.", 400
        )
    data = {"status": publish.status, "uploaded_bytes": publish.uploaded_bytes}
    if publish.fail_reason:
        data["fail_reason"] = publish.fail_reason
    if publish.video is not None and not publish.video.deleted:
        data["publicaly_available_post_id"] = [int(publish.video.video_id)]
    return _ok(data)
