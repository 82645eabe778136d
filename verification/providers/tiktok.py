"""TikTok Login Kit (OAuth v2): authorize redirect, code -> token exchange, user info.

Decides success by the body, never the HTTP status: TikTok answers OAuth errors with 200 and an
`error` field, and data-API errors with an `error.code` other than "ok".
"""

import hashlib
import hmac
import re
from dataclasses import dataclass
from urllib.parse import urlencode

from django.conf import settings

from verification.providers.loopback import http_client

SCOPE = "user.info.basic,user.info.stats,video.list"
BASIC_FIELDS = "open_id,union_id,avatar_url,display_name"
USER_FIELDS = BASIC_FIELDS + ",follower_count,video_count"
VIDEO_FIELDS = (
    "id,create_time,share_url,video_description,duration,view_count,like_count,comment_count,share_count"
)


class TikTokError(Exception):
    def __init__(self, code: str, description: str = ""):
        super().__init__(f"{code}: {description}" if description else code)
        self.code = code
        self.description = description


@dataclass(frozen=True)
class TikTokUser:
    open_id: str
    display_name: str
    tokens: dict
    follower_count: int | None = None
    video_count: int | None = None


@dataclass(frozen=True)
class TikTokVideo:
    video_id: str
    share_url: str
    caption: str
    create_time: int
    view_count: int
    like_count: int
    comment_count: int
    share_count: int


def authorize_url(*, state: str, redirect_uri: str) -> str:
    query = urlencode(
        {
            "client_key": settings.TIKTOK_CLIENT_KEY,
            "scope": SCOPE,
            "response_type": "code",
            "redirect_uri": redirect_uri,
            "state": state,
        }
    )
    return f"{settings.TIKTOK_AUTHORIZE_URL}?{query}"


def _json(response) -> dict:
    try:
        return response.json()
    except ValueError:
        raise TikTokError("invalid_response", f"HTTP {response.status_code} without JSON") from None


def _token_request(form: dict) -> dict:
    with http_client() as client:
        response = client.post(
            f"{settings.TIKTOK_API_BASE}/v2/oauth/token/",
            data={
                "client_key": settings.TIKTOK_CLIENT_KEY,
                "client_secret": settings.TIKTOK_CLIENT_SECRET,
                **form,
            },
        )
    body = _json(response)
    if "access_token" not in body:
        raise TikTokError(body.get("error", "invalid_response"), body.get("error_description", ""))
    return body


def code_exchange(*, code: str, redirect_uri: str) -> dict:
    return _token_request({"code": code, "grant_type": "authorization_code", "redirect_uri": redirect_uri})


def token_refresh(*, refresh_token: str) -> dict:
    """New tokens; the refresh token may rotate, so the caller must store the one returned."""
    return _token_request({"grant_type": "refresh_token", "refresh_token": refresh_token})


def _data(response) -> dict:
    body = _json(response)
    error = body.get("error") or {}
    if error.get("code") not in ("ok", 0):
        raise TikTokError(str(error.get("code", "invalid_response")), error.get("message", ""))
    return body.get("data") or {}


def user_info(*, access_token: str, fields: str) -> dict:
    with http_client() as client:
        response = client.get(
            f"{settings.TIKTOK_API_BASE}/v2/user/info/",
            params={"fields": fields},
            headers={"Authorization": f"Bearer {access_token}"},
        )
    return _data(response).get("user") or {}


def videos_query(*, access_token: str, video_ids: list[str]) -> dict[str, TikTokVideo]:
    """The user's own videos among video_ids; others and deleted ones are silently absent."""
    with http_client() as client:
        response = client.post(
            f"{settings.TIKTOK_API_BASE}/v2/video/query/",
            params={"fields": VIDEO_FIELDS},
            json={"filters": {"video_ids": video_ids[:20]}},
            headers={"Authorization": f"Bearer {access_token}"},
        )
    videos = {}
    for item in _data(response).get("videos") or []:
        video = TikTokVideo(
            video_id=str(item.get("id", "")),
            share_url=item.get("share_url", ""),
            caption=item.get("video_description", ""),
            create_time=int(item.get("create_time") or 0),
            view_count=int(item.get("view_count") or 0),
            like_count=int(item.get("like_count") or 0),
            comment_count=int(item.get("comment_count") or 0),
            share_count=int(item.get("share_count") or 0),
        )
        videos[video.video_id] = video
    return videos


def login_complete(*, code: str, redirect_uri: str) -> TikTokUser:
    tokens = code_exchange(code=code, redirect_uri=redirect_uri)
    granted = set(tokens.get("scope", "").split(","))
    fields = USER_FIELDS if "user.info.stats" in granted else BASIC_FIELDS
    user = user_info(access_token=tokens["access_token"], fields=fields)
    if user.get("open_id") != tokens.get("open_id"):
        raise TikTokError("identity_mismatch", "user info is for another account than the token")
    return TikTokUser(
        open_id=tokens["open_id"],
        display_name=user.get("display_name", ""),
        tokens=tokens,
        follower_count=user.get("follower_count"),
        video_count=user.get("video_count"),
    )


def video_id_from_url(url: str) -> str | None:
    """The numeric id in a TikTok video link (https://www.tiktok.com/@name/video/7301234567890123456)."""
    match = re.search(r"/video/(\d{6,25})", url or "")
    return match.group(1) if match else None


def webhook_signature(*, body: bytes, timestamp: int, secret: str) -> str:
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},s={digest}"


def webhook_verify(*, body: bytes, header: str, secret: str, tolerance: int, now: int) -> int:
    """The signed timestamp of a genuine, fresh TikTok webhook; raises TikTokError otherwise."""
    parts = dict(part.split("=", 1) for part in (header or "").split(",") if "=" in part)
    try:
        timestamp = int(parts.get("t", ""))
    except ValueError:
        raise TikTokError("bad_signature", "no timestamp in Tiktok-Signature") from None
    expected = webhook_signature(body=body, timestamp=timestamp, secret=secret).split(",s=", 1)[1]
    if not hmac.compare_digest(expected, parts.get("s", "")):
        raise TikTokError("bad_signature", "signature does not match the body")
    if abs(now - timestamp) > tolerance:
        raise TikTokError("stale", f"timestamp is {now - timestamp} s away; the tolerance is {tolerance} s")
    return timestamp
