"""The sandbox WhatsApp: a phone page that sends a message, delivered to our webhook as Meta would.

The webhook body is Meta's envelope, serialised with escaped non-ASCII like Meta's and signed with
X-Hub-Signature-256 over those exact bytes.
"""

import json
import secrets
import time

import phonenumbers
from django.conf import settings
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from verification.models import Provider, ProviderEvent
from verification.providers.loopback import http_client
from verification.providers.whatsapp import signature
from verification.services.provider_events import provider_events_process

PHONE_NUMBER_ID = "106540352242922"
WABA_ID = "102290129340398"


def message_envelope(*, wa_id: str, name: str, text: str, message_id: str | None = None) -> dict:
    return {
        "object": "whatsapp_business_account",
        "entry": [
            {
                "id": WABA_ID,
                "changes": [
                    {
                        "field": "messages",
                        "value": {
                            "messaging_product": "whatsapp",
                            "metadata": {
                                "display_phone_number": settings.WHATSAPP_BUSINESS_NUMBER,
                                "phone_number_id": PHONE_NUMBER_ID,
                            },
                            "contacts": [{"profile": {"name": name}, "wa_id": wa_id}],
                            "messages": [
                                {
                                    "from": wa_id,
                                    "id": message_id or f"wamid.{secrets.token_urlsafe(36)}",
                                    "timestamp": str(int(time.time())),
                                    "type": "text",
                                    "text": {"body": text},
                                }
                            ],
                        },
                    }
                ],
            }
        ],
    }


def webhook_deliver(payload: dict) -> int:
    """POST the payload to our webhook exactly as Meta would; returns the HTTP status we answered."""
    body = json.dumps(payload).encode()  # ensure_ascii, as Meta escapes non-ASCII
    with http_client() as client:
        response = client.post(
            reverse("verification:whatsapp_webhook"),
            content=body,
            headers={
                "Content-Type": "application/json",
                "X-Hub-Signature-256": signature(body=body, app_secret=settings.WHATSAPP_APP_SECRET),
            },
        )
    return response.status_code


@require_http_methods(["GET", "POST"])
def phone(request):
    """A stand-in for the person's phone: type your number, send the prefilled message."""
    if not settings.SANDBOX:
        raise Http404("The sandbox is off")
    text = request.GET.get("text", "")
    back = request.GET.get("next", "/")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = "/"
    context = {"text": text, "business_number": settings.WHATSAPP_BUSINESS_NUMBER, "next": back}
    if request.method == "GET":
        return render(request, "sandbox/whatsapp_phone.html", context)
    raw_number = request.POST.get("number", "")
    name = request.POST.get("name", "").strip()[:60] or "Sandbox User"
    try:
        number = phonenumbers.parse(raw_number, None)
        valid = phonenumbers.is_valid_number(number)
    except phonenumbers.NumberParseException:
        valid = False
    if not valid:
        context["problem"] = "Enter your number with its country code, e.g. +49 151 23456789."
        return render(request, "sandbox/whatsapp_phone.html", context, status=400)
    wa_id = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164).lstrip("+")
    message_id = f"wamid.{secrets.token_urlsafe(36)}"
    status = webhook_deliver(
        message_envelope(wa_id=wa_id, name=name, text=request.POST.get("text", text), message_id=message_id)
    )
    if status == 200:
        # The sandbox is the demo: the person sees their opt-in at once, with or without the
        # standing worker running.
        stored = ProviderEvent.objects.filter(provider=Provider.WHATSAPP, event_id=message_id)
        provider_events_process(ids=list(stored.values_list("pk", flat=True)))
    return redirect(back)


@csrf_exempt
@require_POST
def graph_messages(request, phone_number_id):
    """Cloud API's POST /{phone-number-id}/messages for templates, answered as Meta answers; in-process
    only (a test brand's message) when the sandbox is off."""
    if not (settings.SANDBOX or getattr(request, "loopback", False)):
        raise Http404("The sandbox is off")
    if request.headers.get("Authorization") != f"Bearer {settings.WHATSAPP_ACCESS_TOKEN}":
        return JsonResponse({"error": {"message": "Invalid OAuth access token.", "code": 190}}, status=401)
    try:
        body = json.loads(request.body)
        to, template = str(body["to"]), body["template"]
        valid = body.get("messaging_product") == "whatsapp" and to.isdigit() and template["name"]
    except (ValueError, KeyError, TypeError):
        valid = False
    if phone_number_id != PHONE_NUMBER_ID or not valid:
        return JsonResponse({"error": {"message": "(#100) Invalid parameter", "code": 100}}, status=400)
    message_id = "wamid." + secrets.token_urlsafe(24)
    return JsonResponse(
        {
            "messaging_product": "whatsapp",
            "contacts": [{"input": to, "wa_id": to}],
            "messages": [{"id": message_id}],
        }
    )
