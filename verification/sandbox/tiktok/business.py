"""The sandbox TikTok's Business API: Spark Ads authorisation codes, made by the creator and read by
the brand (GET /open_api/v1.3/tt_video/info/)."""

import secrets
import time

from django.http import JsonResponse

from verification.models import SandboxTikTokAdCode, SandboxTikTokVideo
from verification.sandbox.tiktok.common import log_id_new, sandbox_only

AD_CODE_DAYS = (7, 30, 60, 365)


SANDBOX_ADS_TOKEN = "sbx-ads-token"  # noqa: S105  (the sandbox Business API's own, public by design)


def ad_code_generate(*, video: SandboxTikTokVideo, days: int) -> SandboxTikTokAdCode:
    """The creator's "Ad settings -> Generate code" in TikTok: a code for this video and period."""
    return SandboxTikTokAdCode.objects.create(
        video=video, code="#" + secrets.token_urlsafe(40), days=days if days in AD_CODE_DAYS else 30
    )


def _business_error(code: int, message: str) -> JsonResponse:
    # The Business API answers HTTP 200 with its own code; 0 is success.
    return JsonResponse({"code": code, "message": message, "request_id": log_id_new(), "data": {}})


def ad_code_info(request):
    """GET /open_api/v1.3/tt_video/info/: what a Spark Ads authorisation code is for, and until when."""
    sandbox_only(request)
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
            "request_id": log_id_new(),
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
