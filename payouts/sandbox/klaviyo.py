"""The sandbox Klaviyo, in Klaviyo's JSON:API format: Bulk Subscribe Profiles stores the profiles
under the key that sent them, Get Profiles lists them with their subscriptions. It fails as Klaviyo
does: 401 for a key that is not a private key (pk_...), 400 without a revision or for a historical
import without consented_at, 429 with Retry-After for a key named for it. A tester unsubscribes a
profile from the sandbox's own page, as a person would from a Klaviyo mail."""

import hashlib
import json
import secrets
from datetime import datetime

from django.conf import settings
from django.http import Http404, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from payouts.models import SandboxCrmProfile

JSON_API = "application/vnd.api+json"


def _base() -> str:
    # The sandbox answers in-process (the loopback carries no real host): its links name the site.
    return settings.SITE_URL.rstrip("/")


def _on(request) -> bool:
    return settings.SANDBOX or getattr(request, "loopback", False)


def _error(status: int, code: str, title: str, detail: str, pointer: str = "/data/") -> JsonResponse:
    body = {"errors": [{"id": secrets.token_hex(16), "status": status, "code": code, "title": title,
                        "detail": detail, "source": {"pointer": pointer}}]}  # fmt: skip
    response = JsonResponse(body, status=status, content_type=JSON_API)
    if status == 429:
        response["Retry-After"] = "30"
    return response


def _key(request) -> tuple[str, JsonResponse | None]:
    header = request.headers.get("Authorization", "")
    key = header.removeprefix("Klaviyo-API-Key ").strip()
    if not header.startswith("Klaviyo-API-Key ") or not key.startswith("pk_"):
        return "", _error(401, "not_authenticated", "Authentication credentials were not provided.",
                          "Missing or invalid private key.")  # fmt: skip
    if not request.headers.get("revision"):
        return "", _error(
            400, "invalid", "Invalid input.", "A revision header is required.", "/header/revision"
        )
    if "ratelimit" in key:
        return "", _error(
            429,
            "throttled",
            "Request was throttled.",
            "Request was throttled. Expected available in 30 seconds.",
        )
    return hashlib.sha256(key.encode()).hexdigest(), None


@csrf_exempt
@require_POST
def subscribe_jobs(request):
    """POST /api/profile-subscription-bulk-create-jobs: 202 and no body, as Klaviyo answers."""
    if not _on(request):
        raise Http404("The sandbox is off")
    key_hash, refused = _key(request)
    if refused:
        return refused
    try:
        data = json.loads(request.body)["data"]
        attributes = data["attributes"]
        profiles = attributes["profiles"]["data"]
        ok = data["type"] == "profile-subscription-bulk-create-job" and isinstance(profiles, list)
    except (ValueError, KeyError, TypeError):
        ok = False
    if not ok:
        return _error(400, "invalid", "Invalid input.", "The payload provided in the request is invalid.")
    if len(profiles) > 1000:
        return _error(
            400, "invalid", "Invalid input.", "A maximum of 1000 profiles can be subscribed at once."
        )
    historical = bool(attributes.get("historical_import"))
    now = timezone.now()
    for index, profile in enumerate(profiles):
        person = profile.get("attributes") or {}
        subscriptions = person.get("subscriptions") or {}
        channel = "email" if "email" in subscriptions else "whatsapp"
        marketing = (subscriptions.get(channel) or {}).get("marketing") or {}
        consented_at = marketing.get("consented_at") or ""
        if historical and not consented_at:
            return _error(400, "invalid", "Invalid input.",
                          "consented_at is required for historical imports.",
                          f"/data/attributes/profiles/data/{index}/attributes/subscriptions")  # fmt: skip
        if consented_at and datetime.fromisoformat(consented_at) > now:
            return _error(400, "invalid", "Invalid input.", "consented_at must be in the past.")
        SandboxCrmProfile.objects.update_or_create(
            api_key_hash=key_hash,
            phone_number=person.get("phone_number") or "" if channel == "whatsapp" else "",
            email=person.get("email") or "" if channel == "email" else "",
            defaults={
                "consent": "SUBSCRIBED",
                "consented_at": consented_at,
                "custom_source": str(attributes.get("custom_source") or ""),
                "updated": now,
            },
        )
    return HttpResponse(status=202)


@require_GET
def profiles(request):
    """GET /api/profiles with additional-fields[profile]=subscriptions and greater-than(updated,..)."""
    if not _on(request):
        raise Http404("The sandbox is off")
    key_hash, refused = _key(request)
    if refused:
        return refused
    rows = SandboxCrmProfile.objects.filter(api_key_hash=key_hash).order_by("pk")
    since = request.GET.get("filter", "")
    if since.startswith("greater-than(updated,") and since.endswith(")"):
        try:
            rows = rows.filter(updated__gt=datetime.fromisoformat(since[len("greater-than(updated,") : -1]))
        except ValueError:
            return _error(400, "invalid", "Invalid input.", "Invalid filter.", "/filter")
    try:
        size = max(1, min(int(request.GET.get("page[size]", "20")), 100))
        start = int(request.GET.get("page[cursor]") or 0)
    except ValueError:
        return _error(400, "invalid", "Invalid input.", "Invalid page.", "/page")
    page = list(rows[start : start + size])
    with_subscriptions = "subscriptions" in request.GET.get("additional-fields[profile]", "")
    data = []
    for row in page:
        attributes = {"email": row.email or None, "phone_number": row.phone_number or None,
                      "updated": row.updated.isoformat()}  # fmt: skip
        if with_subscriptions:
            channel = "email" if row.email else "whatsapp"
            attributes["subscriptions"] = {
                channel: {
                    "marketing": {
                        "consent": row.consent,
                        "consent_timestamp": row.consented_at or None,
                        "can_receive": row.consent == "SUBSCRIBED",
                    }
                }
            }
        profile_id = f"01SBX{row.pk:021d}"
        data.append(
            {
                "type": "profile",
                "id": profile_id,
                "attributes": attributes,
                "links": {"self": f"{_base()}{request.path}/{profile_id}/"},
            }
        )
    links = {"self": _base() + request.get_full_path()}
    if start + size < rows.count():
        query = request.GET.copy()
        query["page[cursor]"] = str(start + size)
        links["next"] = f"{_base()}{request.path}?{query.urlencode()}"
    return JsonResponse({"data": data, "links": links}, content_type=JSON_API)


def profile_unsubscribe(*, api_key: str, contact: str) -> int:
    """A person unsubscribed in a Klaviyo mail: the tester's (and the tests') way in."""
    key_hash = hashlib.sha256(api_key.encode()).hexdigest()
    return SandboxCrmProfile.objects.filter(api_key_hash=key_hash, phone_number=contact).update(
        consent="UNSUBSCRIBED", updated=timezone.now()
    ) + SandboxCrmProfile.objects.filter(api_key_hash=key_hash, email=contact).update(
        consent="UNSUBSCRIBED", updated=timezone.now()
    )
