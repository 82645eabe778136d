"""TikTok Login Kit (OAuth v2): authorize redirect, code -> token exchange, user info.

Decides success by the body, never the HTTP status: TikTok answers OAuth errors with 200 and an
`error` field, and data-API errors with an `error.code` other than "ok".
"""

import hashlib
import hmac
import json
import re
from dataclasses import dataclass
from urllib.parse import urlencode

import httpx
from django.conf import settings

from joyback.modes import provider_sandboxed
from verification.providers.loopback import SANDBOX_BASES, http_client, provider_url

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


def authorize_url(*, state: str, redirect_uri: str, publish: bool = False) -> str:
    """TikTok's consent page; video.publish is asked for only when the person chose to post
    through JoyBack."""
    query = urlencode(
        {
            "client_key": settings.TIKTOK_CLIENT_KEY,
            "scope": f"{SCOPE},{PUBLISH_SCOPE}" if publish else SCOPE,
            "response_type": "code",
            "redirect_uri": redirect_uri,
            "state": state,
        }
    )
    return f"{provider_url('TIKTOK_AUTHORIZE_URL')}?{query}"


def _json(response) -> dict:
    try:
        return response.json()
    except ValueError:
        raise TikTokError("invalid_response", f"HTTP {response.status_code} without JSON") from None


def _token_request(form: dict) -> dict:
    with http_client() as client:
        response = client.post(
            f"{provider_url('TIKTOK_API_BASE')}/v2/oauth/token/",
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
            f"{provider_url('TIKTOK_API_BASE')}/v2/user/info/",
            params={"fields": fields},
            headers={"Authorization": f"Bearer {access_token}"},
        )
    return _data(response).get("user") or {}


def videos_query(*, access_token: str, video_ids: list[str]) -> dict[str, TikTokVideo]:
    """The user's own videos among video_ids; others and deleted ones are silently absent."""
    with http_client() as client:
        response = client.post(
            f"{provider_url('TIKTOK_API_BASE')}/v2/video/query/",
            params={"fields": VIDEO_FIELDS},
            json={"filters": {"video_ids": video_ids[:20]}},
            headers={"Authorization": f"Bearer {access_token}"},
        )
    videos = {}
    for item in _data(response).get("videos") or []:
        video = _video(item)
        videos[video.video_id] = video
    return videos


def _video(item: dict) -> TikTokVideo:
    return TikTokVideo(
        video_id=str(item.get("id", "")),
        share_url=item.get("share_url", ""),
        caption=item.get("video_description", ""),
        create_time=int(item.get("create_time") or 0),
        view_count=int(item.get("view_count") or 0),
        like_count=int(item.get("like_count") or 0),
        comment_count=int(item.get("comment_count") or 0),
        share_count=int(item.get("share_count") or 0),
    )


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
    """The numeric id in a TikTok video link (https://www.tiktok.com/@name/video/7301234567890123456,
    or the mobile site's https://m.tiktok.com/v/7301234567890123456.html)."""
    match = re.search(r"/(?:video|v)/(\d{6,25})", url or "")
    return match.group(1) if match else None


# The app's Share -> Copy link gives a short link (https://vm.tiktok.com/ZMabc123/, or vt. in some
# regions); TikTok answers it with a redirect to the video's canonical /@user/video/<id> address.
SHORT_LINK = re.compile(r"^\s*(?:https?://)?(vm|vt)\.tiktok\.com/([A-Za-z0-9]{5,20})/?(?:[?#]\S*)?\s*$")


def short_link_parts(url: str) -> tuple[str, str] | None:
    """(host, code) of a TikTok short link, or None for anything else."""
    match = SHORT_LINK.match(url or "")
    return (f"{match.group(1)}.tiktok.com", match.group(2)) if match else None


def short_link_resolve(*, url: str) -> str | None:
    """The canonical video link a short link redirects to, or None (not a short link, or one that
    leads to no video). Only the redirect is read: the video's page itself is never fetched."""
    parts = short_link_parts(url)
    if parts is None:
        return None
    host, code = parts
    # The sandbox stands in for TikTok's short-link hosts wherever provider calls are sandboxed.
    base = f"{SANDBOX_BASES['TIKTOK_SHORT_LINK']}/{host}" if provider_sandboxed() else f"https://{host}"
    try:
        with http_client() as client:
            response = client.get(f"{base}/{code}/", follow_redirects=False)
    except httpx.HTTPError as error:
        raise TikTokError("network_error", str(error)[:200]) from None
    if response.status_code not in (301, 302, 303, 307, 308):
        return None
    location = response.headers.get("location", "")
    return location if video_id_from_url(location) else None


def videos_list(*, access_token: str, max_count: int = 10) -> list[TikTokVideo]:
    """The person's own most recent public videos (Display API video.list), newest first."""
    with http_client() as client:
        response = client.post(
            f"{provider_url('TIKTOK_API_BASE')}/v2/video/list/",
            params={"fields": VIDEO_FIELDS},
            json={"max_count": min(max(max_count, 1), 20)},
            headers={"Authorization": f"Bearer {access_token}"},
        )
    return [_video(item) for item in _data(response).get("videos") or []]


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


# Content Posting, Direct Post: JoyBack publishes the person's video with the disclosure label on.
# Scope video.publish, asked for only when the person chooses to post through JoyBack.

PUBLISH_SCOPE = "video.publish"
PUBLIC = "PUBLIC_TO_EVERYONE"
PRIVATE = "SELF_ONLY"
# TikTok's media transfer rules: chunks of 5 to 64 MB, sent in order; a video under 5 MB goes whole;
# at most 1000 chunks, the last one taking the trailing bytes (up to 128 MB).
CHUNK_MIN = 5 * 1024 * 1024
CHUNK_SIZE = 10 * 1024 * 1024
CHUNK_MAX = 64 * 1024 * 1024
CHUNK_COUNT_MAX = 1000
CAPTION_MAX = 2200  # post_info.title, in UTF-16 code units (an emoji counts 2)
PRIVACY_LEVELS = ("PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY")
# creator_info's refusals: this creator cannot post through an app now, whatever they choose.
CANNOT_POST = (
    "spam_risk_too_many_posts",
    "spam_risk_user_banned_from_posting",
    "reached_active_user_cap",
    "unaudited_client_can_only_post_to_private_accounts",
)


def utf16_length(text: str) -> int:
    """A caption's length as TikTok counts it: UTF-16 code units, so an emoji counts 2."""
    return len(text.encode("utf-16-le")) // 2


@dataclass(frozen=True)
class PublishStatus:
    status: str  # PROCESSING_UPLOAD, PROCESSING_DOWNLOAD, SEND_TO_USER_INBOX, PUBLISH_COMPLETE, FAILED
    fail_reason: str = ""
    post_id: str = ""  # only once TikTok has made the post public
    uploaded_bytes: int = 0


def chunk_plan(video_size: int) -> tuple[int, int]:
    """(chunk_size, total_chunk_count) for a video of this many bytes, as TikTok counts them:
    the count is the size divided by the chunk size, rounded down."""
    if video_size < CHUNK_MIN:
        return video_size, 1
    chunk_size = min(CHUNK_SIZE, video_size)
    return chunk_size, min(CHUNK_COUNT_MAX, video_size // chunk_size)


def chunk_ranges(video_size: int, chunk_size: int, total_chunk_count: int) -> list[tuple[int, int]]:
    """The inclusive byte ranges of the chunks; the last one runs to the end of the file."""
    ranges = [(i * chunk_size, (i + 1) * chunk_size - 1) for i in range(total_chunk_count)]
    ranges[-1] = (ranges[-1][0], video_size - 1)
    return ranges


def _bearer(access_token: str) -> dict:
    return {"Authorization": f"Bearer {access_token}", "Content-Type": "application/json; charset=UTF-8"}


def creator_info_query(*, access_token: str) -> dict:
    """The creator's posting options: privacy_level_options, and whether comments, duets and
    stitches are off on their account."""
    with http_client() as client:
        response = client.post(
            f"{provider_url('TIKTOK_API_BASE')}/v2/post/publish/creator_info/query/",
            headers=_bearer(access_token),
        )
    return _data(response)


def direct_post_body(
    *, caption: str, privacy_level: str, video_size: int, creator: dict, choices: dict | None = None
) -> dict:
    """The video/init body: the disclosure label on (paid partnership for the brand), the caption
    as given (it starts with the disclosure), the privacy the person picked, and comments, duets and
    stitches only where the person switched them on and the creator's account allows them."""
    choices = choices or {}
    chunk_size, total_chunk_count = chunk_plan(video_size)

    def disabled(name: str) -> bool:
        return bool(creator.get(f"{name}_disabled", False)) or not choices.get(f"allow_{name}", False)

    return {
        "post_info": {
            "title": caption,
            "privacy_level": privacy_level,
            "disable_duet": disabled("duet"),
            "disable_comment": disabled("comment"),
            "disable_stitch": disabled("stitch"),
            "video_cover_timestamp_ms": 1000,
            "brand_content_toggle": True,
            "brand_organic_toggle": bool(choices.get("your_brand", False)),
            "is_aigc": False,
        },
        "source_info": {
            "source": "FILE_UPLOAD",
            "video_size": video_size,
            "chunk_size": chunk_size,
            "total_chunk_count": total_chunk_count,
        },
    }


def video_init(*, access_token: str, body: dict) -> tuple[str, str]:
    """Start a Direct Post: (publish_id, upload_url). The upload_url is valid for one hour."""
    with http_client() as client:
        response = client.post(
            f"{provider_url('TIKTOK_API_BASE')}/v2/post/publish/video/init/",
            content=json.dumps(body).encode(),
            headers=_bearer(access_token),
        )
    data = _data(response)
    if not data.get("publish_id") or not data.get("upload_url"):
        raise TikTokError("invalid_response", "video/init answered without publish_id or upload_url")
    return str(data["publish_id"]), str(data["upload_url"])


def video_upload(*, upload_url: str, file, video_size: int, content_type: str, source_info: dict) -> None:
    """PUT the file to TikTok chunk by chunk, in order, one chunk in memory at a time."""
    ranges = chunk_ranges(video_size, source_info["chunk_size"], source_info["total_chunk_count"])
    with http_client() as client:
        for first, last in ranges:
            file.seek(first)
            chunk = file.read(last - first + 1)
            response = client.put(
                upload_url,
                content=chunk,
                headers={
                    "Content-Type": content_type,
                    "Content-Range": f"bytes {first}-{last}/{video_size}",
                },
                timeout=120,
            )
            if response.status_code not in (200, 201, 206):
                try:
                    code = str((response.json().get("error") or {}).get("code") or "invalid_file_upload")
                except ValueError:
                    code = "invalid_file_upload"
                raise TikTokError(code, f"chunk {first}-{last} answered HTTP {response.status_code}")


def publish_status_fetch(*, access_token: str, publish_id: str) -> PublishStatus:
    with http_client() as client:
        response = client.post(
            f"{provider_url('TIKTOK_API_BASE')}/v2/post/publish/status/fetch/",
            content=json.dumps({"publish_id": publish_id}).encode(),
            headers=_bearer(access_token),
        )
    data = _data(response)
    # TikTok's own spelling: "publicaly".
    post_ids = data.get("publicaly_available_post_id") or data.get("publicly_available_post_id") or []
    return PublishStatus(
        status=str(data.get("status", "")),
        fail_reason=str(data.get("fail_reason") or ""),
        post_id=str(post_ids[0]) if post_ids else "",
        uploaded_bytes=int(data.get("uploaded_bytes") or 0),
    )


# post.publish.* webhooks, mapped onto the status/fetch statuses they announce.
PUBLISH_EVENTS = {
    "post.publish.failed": "FAILED",
    "post.publish.complete": "PUBLISH_COMPLETE",
    "post.publish.publicly_available": "PUBLISH_COMPLETE",
    # The docs spell it "publicaly"; the live spelling is unconfirmed, so both are read.
    "post.publish.no_longer_publicaly_available": "NO_LONGER_PUBLIC",
    "post.publish.no_longer_publicly_available": "NO_LONGER_PUBLIC",
}


def publish_event(payload: dict) -> tuple[str, PublishStatus] | None:
    """(publish_id, status) of a post.publish.* webhook body; None for other events or no publish_id."""
    status = PUBLISH_EVENTS.get(str(payload.get("event", "")))
    if status is None:
        return None
    try:
        content = json.loads(payload.get("content") or "{}")
    except (TypeError, ValueError):
        return None
    if not isinstance(content, dict) or not content.get("publish_id"):
        return None
    return str(content["publish_id"]), PublishStatus(
        status=status,
        fail_reason=str(content.get("reason") or ""),
        post_id=str(content.get("post_id") or ""),
    )


# oEmbed: the embed card of a public video, as TikTok serves it to anyone (no token). The content
# library shows its title, author and thumbnail; TikTok's embed.js is not loaded (no third-party
# script on the brand's pages), the card links to the video instead.


@dataclass(frozen=True)
class Embed:
    title: str
    author_name: str
    author_url: str
    thumbnail_url: str
    video_id: str
    html: str


def oembed(*, url: str) -> Embed | None:
    """The oEmbed answer for a video link, or None for a video TikTok does not show (deleted, private)."""
    with http_client() as client:
        response = client.get(provider_url("TIKTOK_OEMBED_URL"), params={"url": url})
    if response.status_code != 200:
        return None
    body = _json(response)
    if body.get("type") != "video":
        return None
    return Embed(
        title=str(body.get("title", "")),
        author_name=str(body.get("author_name", "")),
        author_url=str(body.get("author_url", "")),
        thumbnail_url=str(body.get("thumbnail_url", "")),
        video_id=str(body.get("embed_product_id", "")),
        html=str(body.get("html", "")),
    )


# Spark Ads: the creator generates an authorisation code for a video in TikTok and gives it to the
# brand; the Business API (v1.3, tt_video/info) says which video it is for and for how long.

AD_CODE_PATTERN = re.compile(r"#?[A-Za-z0-9+/=_-]{16,120}")


@dataclass(frozen=True)
class AdCode:
    item_id: str
    status: str  # AUTHORIZED, or another word when the code cannot be used
    auth_start_time: int
    auth_end_time: int


def ad_code_info(*, auth_code: str) -> AdCode:
    with http_client() as client:
        response = client.get(
            f"{provider_url('TIKTOK_BUSINESS_API_BASE')}/open_api/v1.3/tt_video/info/",
            params={"advertiser_id": settings.TIKTOK_ADVERTISER_ID, "auth_code": auth_code},
            headers={"Access-Token": settings.TIKTOK_ADS_ACCESS_TOKEN},
        )
    body = _json(response)
    # The Business API's envelope: code 0 and message OK, else a numeric code and its words.
    if body.get("code") != 0:
        raise TikTokError(str(body.get("code", "invalid_response")), str(body.get("message", "")))
    data = body.get("data") or {}
    item, auth = data.get("item_info") or {}, data.get("auth_info") or {}
    return AdCode(
        item_id=str(item.get("item_id", "")),
        status=str(auth.get("ad_auth_status", "")),
        auth_start_time=int(auth.get("auth_start_time") or 0),
        auth_end_time=int(auth.get("auth_end_time") or 0),
    )


# The Commercial Content API (a research product: a client token with research.adlib.basic, granted to
# approved clients only) lists the branded content of creators in the EEA, each with its label. It is
# the one way to read the "Paid partnership" label back; elsewhere the platform cannot say.
COMMERCIAL_FIELDS = "id,create_timestamp,create_date,label,brand_names,creator,videos"
EEA = frozenset(
    [
        "AT",
        "BE",
        "BG",
        "HR",
        "CY",
        "CZ",
        "DK",
        "EE",
        "FI",
        "FR",
        "DE",
        "GR",
        "HU",
        "IE",
        "IT",
        "LV",
        "LT",
        "LU",
        "MT",
        "NL",
        "PL",
        "PT",
        "RO",
        "SK",
        "SI",
        "ES",
        "SE",
        "IS",
        "LI",
        "NO",
    ]
)


@dataclass(frozen=True)
class CommercialContent:
    content_id: str
    label: str
    brand_names: tuple[str, ...]
    video_ids: tuple[str, ...]


def client_token() -> str:
    return _token_request({"grant_type": "client_credentials"})["access_token"]


def commercial_content_query(*, username: str, date_min: str, date_max: str) -> list[CommercialContent]:
    """A creator's branded content published between two days (YYYYMMDD), label and videos."""
    with http_client() as client:
        response = client.post(
            f"{provider_url('TIKTOK_API_BASE')}/v2/research/adlib/commercial_content/query/",
            params={"fields": COMMERCIAL_FIELDS},
            json={
                "filters": {
                    "content_published_date_range": {"min": date_min, "max": date_max},
                    "creator_usernames": [username],
                },
                "max_count": 50,
            },
            headers={"Authorization": f"Bearer {client_token()}"},
        )
    return [
        CommercialContent(
            content_id=str(row.get("id", "")),
            label=str(row.get("label") or ""),
            brand_names=tuple(row.get("brand_names") or ()),
            video_ids=tuple(str(video.get("id", "")) for video in row.get("videos") or ()),
        )
        for row in _data(response).get("commercial_contents") or []
    ]


def username_from_url(url: str) -> str | None:
    found = re.search(r"tiktok\.com/@([\w.]+)/video/\d+", url or "")
    return found.group(1) if found else None
