"""The sandbox TikTok's Commercial Content API (POST /v2/research/adlib/commercial_content/query/):
the branded content of a creator, each post with its "Paid partnership" label, in TikTok's wire
format. A client access token (grant_type=client_credentials) is the only credential it takes."""

import json
import secrets
from datetime import UTC, date, datetime

from django.db.models import Q
from django.http import JsonResponse
from django.utils.text import slugify
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from verification.models import SandboxTikTokVideo
from verification.sandbox.tiktok.common import data_error, invalid_token, log_id_new, sandbox_only
from verification.sandbox.tiktok.display_api import video_share_url
from verification.sandbox.tiktok.oauth import client_access_token

FIELDS = {"id", "create_timestamp", "create_date", "label", "brand_names", "creator", "videos"}


def _day(value) -> date | None:
    try:
        return datetime.strptime(str(value), "%Y%m%d").replace(tzinfo=UTC).date()
    except ValueError:
        return None


@csrf_exempt
@require_POST
def query(request):
    sandbox_only()
    given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
    if not given or not secrets.compare_digest(given, client_access_token()):
        return invalid_token()
    fields = [field for field in request.GET.get("fields", "").split(",") if field]
    if not fields or not set(fields) <= FIELDS:
        return data_error("invalid_params", "fields is required and must name commercial content fields", 400)
    try:
        filters = json.loads(request.body)["filters"]
        dates = filters["content_published_date_range"]
        first, last = _day(dates["min"]), _day(dates["max"])
        usernames = [str(name).lower() for name in filters.get("creator_usernames", [])]
    except (ValueError, KeyError, TypeError):
        return data_error("invalid_params", "filters.content_published_date_range is required", 400)
    if first is None or last is None or first > last:
        return data_error(
            "invalid_params", "content_published_date_range must be YYYYMMDD, min before max", 400
        )
    videos = SandboxTikTokVideo.objects.filter(
        Q(paid_partnership_label=True),
        deleted=False,
        create_time__date__gte=first,
        create_time__date__lte=last,
    ).select_related("user")
    rows = []
    for video in videos:
        handle = video_share_url(video).split("/@")[1].split("/")[0]
        if usernames and handle not in usernames:
            continue
        values = {
            "id": f"cc{video.video_id}",
            "create_timestamp": int(video.create_time.timestamp()),
            "create_date": video.create_time.strftime("%Y%m%d"),
            "label": "Paid partnership",
            "brand_names": [],  # reported as almost always empty: the check never relies on it
            "creator": {"username": handle or slugify(video.user.display_name)},
            "videos": [{"id": video.video_id, "url": video_share_url(video)}],
        }
        rows.append({field: values[field] for field in fields})
    log_id = log_id_new()
    response = JsonResponse(
        {
            "data": {"commercial_contents": rows, "has_more": False, "search_id": log_id},
            "error": {"code": "ok", "message": "", "log_id": log_id},
        }
    )
    response["x-tt-logid"] = log_id
    return response
