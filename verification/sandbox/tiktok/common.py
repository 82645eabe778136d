"""What every part of the sandbox TikTok shares: the sandbox's gate, TikTok's error envelope and
log ids, the bearer token's grant, and TikTok's signed webhooks to our endpoint."""

import json
import secrets
import time

from django.conf import settings
from django.http import Http404, JsonResponse
from django.urls import reverse
from django.utils import timezone

from verification.models import SandboxTikTokGrant, SandboxTikTokUser
from verification.providers.loopback import http_client
from verification.providers.tiktok import webhook_signature


def sandbox_only(request=None):
    """Open in the sandbox; elsewhere only in-process, to a test brand's calls (the loopback
    transport marks its requests: nothing from the network is marked)."""
    if not (settings.SANDBOX or getattr(request, "loopback", False)):
        raise Http404("The sandbox is off")


def log_id_new() -> str:
    return timezone.now().strftime("%Y%m%d%H%M%S") + secrets.token_hex(8).upper()


def data_error(code: str, message: str, status: int) -> JsonResponse:
    log_id = log_id_new()
    response = JsonResponse(
        {"data": {}, "error": {"code": code, "message": message, "log_id": log_id}}, status=status
    )
    response["x-tt-logid"] = log_id
    return response


def bearer_grant(request) -> SandboxTikTokGrant | None:
    access_token = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
    grant = SandboxTikTokGrant.objects.filter(access_token=access_token).select_related("user").first()
    if not access_token or grant is None or grant.access_expires_at < timezone.now():
        return None
    return grant


def invalid_token() -> JsonResponse:
    return data_error("access_token_invalid", "The access token is invalid or not found in the request.", 401)


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
