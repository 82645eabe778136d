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
from django.db import transaction
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.text import slugify
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from verification.models import SandboxTikTokGrant, SandboxTikTokUser, SandboxTikTokVideo
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
    if request.method == "GET":
        return render(
            request,
            "sandbox/tiktok_authorize.html",
            {"scope": params["scope"], "scopes": _scope_words(params["scope"])},
        )
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
        scope=params["scope"],
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
    videos = SandboxTikTokVideo.objects.filter(user=grant.user, video_id__in=ids, deleted=False)
    listed = [{field: _video_value(video, field) for field in fields} for video in videos]
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
        user = SandboxTikTokUser.objects.filter(open_id=request.POST.get("open_id", "")).first()
        if user is not None and action == "revoke":
            SandboxTikTokGrant.objects.filter(user=user).update(access_token=None, refresh_token=None)
            webhook_deliver(event="authorization.removed", user=user, content={"reason": 1})
        back = _studio_back(request.POST.get("next", ""))
        return redirect(
            reverse("verification:sandbox_tiktok_studio") + (f"?{urlencode({'next': back})}" if back else "")
        )
    users = SandboxTikTokUser.objects.order_by("display_name").prefetch_related("videos")
    return render(
        request,
        "sandbox/tiktok_studio.html",
        {"users": users, "back": _studio_back(request.GET.get("next", ""))},
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
