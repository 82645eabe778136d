"""The sandbox TikTok: authorize page, token endpoint and user info, in TikTok's v2 wire format.

Only reachable while settings.SANDBOX is on. OAuth errors come back as HTTP 200 with an `error`
body, as TikTok's do, so that the adapter is proven not to trust status codes.
"""

import hashlib
import secrets
import uuid
from datetime import timedelta
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.db import transaction
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from verification.models import SandboxTikTokGrant, SandboxTikTokUser

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
        return render(request, "sandbox/tiktok_authorize.html", {"scope": params["scope"]})
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
    grant = SandboxTikTokGrant.objects.create(
        user=sandbox_user_for(display_name),
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
    if form.get("grant_type") != "authorization_code":
        return _oauth_error("unsupported_grant_type", "Only authorization_code is offered by the sandbox.")
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


FIELDS_BY_SCOPE = {"user.info.basic": {"open_id", "union_id", "avatar_url", "display_name"}}


def user_info(request):
    _sandbox_only()
    bearer = request.headers.get("Authorization", "")
    access_token = bearer.removeprefix("Bearer ").strip()
    grant = SandboxTikTokGrant.objects.filter(access_token=access_token).select_related("user").first()
    if not access_token or grant is None or grant.access_expires_at < timezone.now():
        return _data_error(
            "access_token_invalid", "The access token is invalid or not found in the request.", 401
        )
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
