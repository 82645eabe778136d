"""Klaviyo: a brand's consented audience pushed as subscriptions with their consent time and
source (Bulk Subscribe Profiles, historical_import with consented_at, as the consent was collected
here), and unsubscribes pulled back (Get Profiles with their subscriptions). A private API key in
the Authorization header, a dated revision header, JSON:API bodies (Klaviyo's OpenAPI, vendored
in tests/payouts/vendor/klaviyo)."""

from dataclasses import dataclass
from datetime import datetime

from verification.providers.loopback import http_client, provider_url

REVISION = "2026-07-15"
BATCH = 1000  # Klaviyo takes at most 1,000 profiles per subscribe job
JSON_API = "application/vnd.api+json"


class KlaviyoError(Exception):
    """Klaviyo refused or could not answer; `retry` says whether trying later can help."""

    def __init__(self, message: str, *, retry: bool, after: int | None = None):
        super().__init__(message)
        self.retry = retry
        self.after = after


@dataclass(frozen=True)
class Subscriber:
    channel: str  # "whatsapp" or "email"
    contact: str  # E.164 phone number or email address
    consented_at: datetime
    source: str


def _headers(api_key: str) -> dict:
    return {
        "Authorization": f"Klaviyo-API-Key {api_key}",
        "revision": REVISION,
        "accept": JSON_API,
        "content-type": JSON_API,
    }


def subscribe_body(
    *, subscribers: list[Subscriber], list_id: str = "", custom_source: str = "JoyBack"
) -> dict:
    """The Bulk Subscribe Profiles job for up to 1,000 people."""
    profiles = []
    for person in subscribers:
        marketing = {"consent": "SUBSCRIBED", "consented_at": person.consented_at.isoformat()}
        if person.channel == "email":
            attributes = {"email": person.contact, "subscriptions": {"email": {"marketing": marketing}}}
        else:
            attributes = {
                "phone_number": person.contact,
                "subscriptions": {"whatsapp": {"marketing": marketing}},
            }
        profiles.append({"type": "profile", "attributes": attributes})
    body = {
        "data": {
            "type": "profile-subscription-bulk-create-job",
            "attributes": {
                "custom_source": custom_source,
                "profiles": {"data": profiles},
                "historical_import": True,
            },
        }
    }
    if list_id:
        body["data"]["relationships"] = {"list": {"data": {"type": "list", "id": list_id}}}
    return body


def _raise_for(response) -> None:
    if response.status_code in (200, 201, 202):
        return
    detail = ""
    try:
        errors = response.json().get("errors") or [{}]
        detail = f"{errors[0].get('code', '')}: {errors[0].get('detail', '')}"
    except ValueError:
        detail = response.text[:200]
    if response.status_code == 429 or response.status_code >= 500:
        after = response.headers.get("Retry-After", "")
        raise KlaviyoError(
            f"Klaviyo {response.status_code} {detail}",
            retry=True,
            after=int(after) if after.isdigit() else None,
        )
    raise KlaviyoError(f"Klaviyo {response.status_code} {detail}", retry=False)


def subscribers_push(*, api_key: str, subscribers: list[Subscriber], list_id: str = "") -> int:
    """POST /api/profile-subscription-bulk-create-jobs per 1,000 people; how many were sent."""
    sent = 0
    with http_client() as client:
        for start in range(0, len(subscribers), BATCH):
            chunk = subscribers[start : start + BATCH]
            response = client.post(
                f"{provider_url('KLAVIYO_API_BASE')}/api/profile-subscription-bulk-create-jobs",
                json=subscribe_body(subscribers=chunk, list_id=list_id, custom_source=chunk[0].source[:100]),
                headers=_headers(api_key),
            )
            _raise_for(response)
            sent += len(chunk)
    return sent


def unsubscribed_since(*, api_key: str, since: datetime | None) -> list[tuple[str, str]]:
    """(channel, contact) of the profiles changed since `since` whose WhatsApp or email marketing
    consent is now UNSUBSCRIBED: GET /api/profiles with their subscriptions, every page."""
    params = {"additional-fields[profile]": "subscriptions", "page[size]": "100"}
    if since is not None:
        params["filter"] = f"greater-than(updated,{since.isoformat()})"
    url = f"{provider_url('KLAVIYO_API_BASE')}/api/profiles"
    found = []
    with http_client() as client:
        for _page in range(1000):
            response = client.get(url, params=params, headers=_headers(api_key))
            _raise_for(response)
            answer = response.json()
            for profile in answer.get("data") or []:
                attributes = profile.get("attributes") or {}
                subscriptions = attributes.get("subscriptions") or {}
                whatsapp = ((subscriptions.get("whatsapp") or {}).get("marketing") or {}).get("consent")
                email = ((subscriptions.get("email") or {}).get("marketing") or {}).get("consent")
                if whatsapp == "UNSUBSCRIBED" and attributes.get("phone_number"):
                    found.append(("whatsapp", attributes["phone_number"]))
                if email == "UNSUBSCRIBED" and attributes.get("email"):
                    found.append(("email", attributes["email"]))
            following = (answer.get("links") or {}).get("next")
            if not following:
                break
            url, params = following, None
    return found


def key_check(*, api_key: str) -> None:
    """The key works (GET /api/profiles, one): raises KlaviyoError when Klaviyo refuses it."""
    with http_client() as client:
        response = client.get(
            f"{provider_url('KLAVIYO_API_BASE')}/api/profiles",
            params={"page[size]": "1"},
            headers=_headers(api_key),
        )
    _raise_for(response)
