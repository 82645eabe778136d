"""The sandbox TikTok's Login Kit: the authorize page and the token endpoint, in TikTok's v2 wire
format. OAuth errors come back as HTTP 200 with an `error` body, as TikTok's do, so that the adapter
is proven not to trust status codes."""

import hashlib
import hmac
import secrets
import uuid
from datetime import timedelta
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.db import transaction
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from verification.models import SandboxTikTokGrant, SandboxTikTokUser
from verification.sandbox.tiktok.common import log_id_new, sandbox_only

CODE_TTL = timedelta(minutes=5)


ACCESS_TTL = 86400


REFRESH_TTL = 31536000


def _oauth_error(error: str, description: str) -> JsonResponse:
    log_id = log_id_new()
    response = JsonResponse({"error": error, "error_description": description, "log_id": log_id})
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
    sandbox_only(request)
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
    sandbox_only(request)
    if request.content_type != "application/x-www-form-urlencoded":
        return _oauth_error("invalid_request", "The request body must be form-encoded.")
    form = request.POST
    if form.get("client_key") != settings.TIKTOK_CLIENT_KEY or not secrets.compare_digest(
        form.get("client_secret", ""), settings.TIKTOK_CLIENT_SECRET
    ):
        return _oauth_error("invalid_client", "Client key or secret is invalid.")
    if form.get("grant_type") == "refresh_token":
        return _token_refresh(form.get("refresh_token", ""))
    if form.get("grant_type") == "client_credentials":
        # The client access token of the research APIs (Commercial Content API): no user, 2 hours.
        return JsonResponse(
            {"access_token": client_access_token(), "expires_in": 7200, "token_type": "Bearer"}
        )
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


def client_access_token() -> str:
    digest = hmac.new(settings.TIKTOK_CLIENT_SECRET.encode(), settings.TIKTOK_CLIENT_KEY.encode(), "sha256")
    return f"clt.{digest.hexdigest()}"


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
