"""Which browser a claim came from: a first-party cookie, not the browser's headers.

The User-Agent and Accept-Language are the same for millions of browsers and whatever a script
says they are; a farm changes them per claim. Every browser page instead hands out a random id in a
signed, long-lived cookie (HttpOnly, SameSite=Lax so it comes back from TikTok's sign-in redirect),
carrying when it was issued. A claim records a hash of the id (`ActionClaim.device`), and the fraud
signals read it with the address and the claims' behaviour (verification/fraud.py): one browser
behind several people, and a browser first seen just now at an address someone else claimed from
(a fresh, cookie-less browser per claim is how the headers were dodged). Neither refuses: shared
addresses and shared computers exist, and a person decides in the review queue."""

import hashlib
import secrets
import time
from functools import lru_cache

from django.conf import settings
from django.core import signing

COOKIE = "joyback_device"
_SALT = "joyback.device"
MAX_AGE = 2 * 365 * 24 * 3600  # a browser stays itself for two years unless its cookies are cleared


@lru_cache(maxsize=4)
def _signer_for(secret_key: str, fallback_keys: tuple) -> signing.Signer:
    return signing.get_cookie_signer(salt=COOKIE + _SALT)


def _signer() -> signing.Signer:
    return _signer_for(settings.SECRET_KEY, tuple(settings.SECRET_KEY_FALLBACKS))


def device_from_cookie(value: str) -> tuple[str, int] | None:
    """(id, issued at as a Unix time) from the cookie's value; None when absent, forged or too old."""
    if not value:
        return None
    try:
        token, _, issued = _signer().unsign(value, max_age=MAX_AGE).partition(".")
    except signing.BadSignature:
        return None
    return (token, int(issued)) if token and issued.isdigit() else None


def device_cookie_value(token: str, issued: int) -> str:
    return _signer().sign(f"{token}.{issued}")


def _device(request) -> tuple[str, int]:
    if not hasattr(request, "_device"):
        found = device_from_cookie(request.COOKIES.get(COOKIE, ""))
        request._device_issued = found is None
        request._device = found or (secrets.token_urlsafe(18), int(time.time()))
    return request._device


def browser_device(request) -> tuple[str, bool]:
    """The hash a claim records for this browser, and whether the browser is new: it came without
    the cookie, or was given it less than FRAUD_NEW_DEVICE_MINUTES ago."""
    token, issued = _device(request)
    new = time.time() - issued < settings.FRAUD_NEW_DEVICE_MINUTES * 60
    return hashlib.sha256(f"device:{token}".encode()).hexdigest()[:32], new


def _publicly_cached(response) -> bool:
    return "public" in response.get("Cache-Control", "")


def device_cookie_middleware(get_response):
    """Gives a browser its id on the first page it opens (not on a page every visitor shares from a
    cache, nor on the API), so that by the time it claims the cookie is there."""

    def middleware(request):
        response = get_response(request)
        _device(request)
        if request._device_issued and not request.path.startswith("/api/") and not _publicly_cached(response):
            token, issued = request._device
            response.set_cookie(
                COOKIE,
                device_cookie_value(token, issued),
                max_age=MAX_AGE,
                secure=settings.SESSION_COOKIE_SECURE,
                httponly=True,
                samesite="Lax",
            )
        return response

    return middleware
