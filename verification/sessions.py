"""Which participant this browser is. People never sign in: a signed cookie names their participant
per brand, so every page of the claim flow knows them without reading a session from the database.
The signature makes it unforgeable and carries its age, checked on every read."""

from functools import lru_cache

from django.conf import settings
from django.core import signing
from django.utils.cache import patch_vary_headers

from verification.selectors import participant_get

COOKIE = "joyback_participant"
_SALT = "joyback.participant"


def _decode(raw: str) -> dict[int, int]:
    """Brand id - participant id pairs, as in 1-42.2-7 (no character a cookie would quote)."""
    participants = {}
    for pair in raw.split("."):
        brand_id, _, participant_id = pair.partition("-")
        if brand_id.isdigit() and participant_id.isdigit():
            participants[int(brand_id)] = int(participant_id)
    return participants


def _encode(participants: dict[int, int]) -> str:
    return ".".join(f"{brand}-{participant}" for brand, participant in sorted(participants.items()))


def _participants(request) -> dict[int, int]:
    if not hasattr(request, "_participants"):
        request._participants = participants_from_cookie(request.COOKIES.get(COOKIE, ""))
        request._participants_changed = False
    return request._participants


def participants_from_cookie(value: str) -> dict[int, int]:
    """Brand id -> participant id, from the cookie's value; {} when absent, tampered with or too old."""
    if not value:
        return {}
    try:
        return _decode(_signer().unsign(value, max_age=settings.SESSION_COOKIE_AGE))
    except signing.BadSignature:
        return {}


def participant_cookie_value(participants: dict[int, int]) -> str:
    """The signed cookie naming these participants (brand id -> participant id)."""
    return _signer().sign(_encode(participants))


def _signer():
    return _signer_for(settings.SECRET_KEY, tuple(settings.SECRET_KEY_FALLBACKS))


@lru_cache(maxsize=4)
def _signer_for(secret_key: str, fallback_keys: tuple) -> signing.Signer:
    # Made once per key rather than on every page of the claim flow; signs as
    # HttpResponse.set_signed_cookie would (Django's cookie signer).
    return signing.get_cookie_signer(salt=COOKIE + _SALT)


def browser_participant_id(request, campaign) -> int | None:
    """The id this browser's cookie names for the campaign's brand, unchecked (None if none)."""
    return _participants(request).get(campaign.brand_id)


def browser_participant(request, campaign):
    return participant_get(
        participant_id=browser_participant_id(request, campaign), brand_id=campaign.brand_id
    )


def browser_participant_set(request, participant) -> None:
    """From this response on, the browser is this participant for their brand."""
    participants = _participants(request)
    if participants.get(participant.brand_id) != participant.pk:
        participants[participant.brand_id] = participant.pk
        request._participants_changed = True


def participant_cookie_middleware(get_response):
    """Writes the cookie when a view changed it; a page that read it varies by cookie."""

    def middleware(request):
        response = get_response(request)
        if not hasattr(request, "_participants"):
            return response
        patch_vary_headers(response, ("Cookie",))
        if request._participants_changed:
            response.set_cookie(
                COOKIE,
                participant_cookie_value(request._participants),
                max_age=settings.SESSION_COOKIE_AGE,
                secure=settings.SESSION_COOKIE_SECURE,
                httponly=True,
                samesite="Lax",
            )
        return response

    return middleware
