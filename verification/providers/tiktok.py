"""TikTok Login Kit (OAuth v2): authorize redirect, code -> token exchange, user info.

Decides success by the body, never the HTTP status: TikTok answers OAuth errors with 200 and an
`error` field, and data-API errors with an `error.code` other than "ok".
"""

from dataclasses import dataclass
from urllib.parse import urlencode

from django.conf import settings

from verification.providers.loopback import http_client

SCOPE = "user.info.basic"


class TikTokError(Exception):
    def __init__(self, code: str, description: str = ""):
        super().__init__(f"{code}: {description}" if description else code)
        self.code = code
        self.description = description


@dataclass(frozen=True)
class TikTokUser:
    open_id: str
    display_name: str
    access_token: str


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


def code_exchange(*, code: str, redirect_uri: str) -> dict:
    with http_client() as client:
        response = client.post(
            f"{settings.TIKTOK_API_BASE}/v2/oauth/token/",
            data={
                "client_key": settings.TIKTOK_CLIENT_KEY,
                "client_secret": settings.TIKTOK_CLIENT_SECRET,
                "code": code,
                "grant_type": "authorization_code",
                "redirect_uri": redirect_uri,
            },
        )
    body = _json(response)
    if "access_token" not in body:
        raise TikTokError(body.get("error", "invalid_response"), body.get("error_description", ""))
    return body


def user_info(*, access_token: str) -> dict:
    with http_client() as client:
        response = client.get(
            f"{settings.TIKTOK_API_BASE}/v2/user/info/",
            params={"fields": "open_id,union_id,avatar_url,display_name"},
            headers={"Authorization": f"Bearer {access_token}"},
        )
    body = _json(response)
    error = body.get("error") or {}
    if error.get("code") not in ("ok", 0):
        raise TikTokError(str(error.get("code", "invalid_response")), error.get("message", ""))
    return body["data"]["user"]


def login_complete(*, code: str, redirect_uri: str) -> TikTokUser:
    tokens = code_exchange(code=code, redirect_uri=redirect_uri)
    user = user_info(access_token=tokens["access_token"])
    if user.get("open_id") != tokens.get("open_id"):
        raise TikTokError("identity_mismatch", "user info is for another account than the token")
    return TikTokUser(
        open_id=tokens["open_id"],
        display_name=user.get("display_name", ""),
        access_token=tokens["access_token"],
    )
