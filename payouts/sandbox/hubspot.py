"""The sandbox HubSpot, in its Communication Preferences v4 format: batch writes stored under the
token that sent them, batch reads answered with each subscriber's statuses, 401 for a token that is
not a private app's (pat-...), 429 with Retry-After for a token named for it. Profiles are the
sandbox CRM's (payouts.sandbox.klaviyo.profile_unsubscribe unsubscribes one)."""

import hashlib
import json
import secrets

from django.conf import settings
from django.http import Http404, JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from payouts.models import SandboxCrmProfile


def _error(status: int, category: str, message: str) -> JsonResponse:
    body = {
        "status": "error",
        "message": message,
        "correlationId": secrets.token_hex(16),
        "category": category,
    }
    response = JsonResponse(body, status=status)
    if status == 429:
        response["Retry-After"] = "10"
    return response


def _token(request) -> tuple[str, JsonResponse | None]:
    if not (settings.SANDBOX or getattr(request, "loopback", False)):
        raise Http404("The sandbox is off")
    token = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
    if not token.startswith("pat-"):
        return "", _error(401, "INVALID_AUTHENTICATION", "Authentication credentials not found.")
    if "ratelimit" in token:
        return "", _error(429, "RATE_LIMITS", "You have reached your secondly limit.")
    return hashlib.sha256(token.encode()).hexdigest(), None


def _now() -> str:
    return timezone.now().isoformat()


@require_GET
def definitions(request):
    _key, refused = _token(request)
    if refused:
        return refused
    return JsonResponse({"subscriptionDefinitions": [], "timestamp": _now()})


@csrf_exempt
@require_POST
def batch_write(request):
    key_hash, refused = _token(request)
    if refused:
        return refused
    try:
        inputs = json.loads(request.body)["inputs"]
        assert isinstance(inputs, list) and len(inputs) <= 100
        for item in inputs:
            assert item["channel"] in ("EMAIL", "WHATSAPP") and item["statusState"] == "SUBSCRIBED"
            assert item["legalBasis"] and isinstance(item["subscriptionId"], int)
    except (ValueError, KeyError, TypeError, AssertionError):
        return _error(400, "VALIDATION_ERROR", "Invalid input JSON on line 1")
    results = []
    for item in inputs:
        email = item["channel"] == "EMAIL"
        SandboxCrmProfile.objects.update_or_create(
            api_key_hash=key_hash,
            phone_number="" if email else item["subscriberIdString"],
            email=item["subscriberIdString"] if email else "",
            defaults={
                "consent": "SUBSCRIBED",
                "custom_source": item.get("legalBasisExplanation", "")[:200],
                "updated": timezone.now(),
            },
        )
        results.append({**item, "status": "SUBSCRIBED", "source": "Public API", "timestamp": _now()})
    return JsonResponse(
        {"status": "COMPLETE", "results": results, "startedAt": _now(), "completedAt": _now()}
    )


@csrf_exempt
@require_POST
def batch_read(request):
    key_hash, refused = _token(request)
    if refused:
        return refused
    channel = request.GET.get("channel", "")
    try:
        inputs = [str(value) for value in json.loads(request.body)["inputs"]]
    except (ValueError, KeyError, TypeError):
        return _error(400, "VALIDATION_ERROR", "Invalid input JSON on line 1")
    results = []
    for subscriber in inputs:
        field = "email" if channel == "EMAIL" else "phone_number"
        row = SandboxCrmProfile.objects.filter(api_key_hash=key_hash, **{field: subscriber}).first()
        statuses = []
        if row is not None:
            status = "SUBSCRIBED" if row.consent == "SUBSCRIBED" else "NOT_SUBSCRIBED"
            statuses.append(
                {
                    "channel": channel,
                    "status": status,
                    "subscriberIdString": subscriber,
                    "subscriptionId": 0,
                    "source": "Public API",
                    "timestamp": row.updated.isoformat(),
                }
            )
        results.append({"subscriberIdString": subscriber, "statuses": statuses})
    return JsonResponse(
        {"status": "COMPLETE", "results": results, "startedAt": _now(), "completedAt": _now()}
    )
