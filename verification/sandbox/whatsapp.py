"""The sandbox WhatsApp: a phone page that sends a message, delivered to our webhook as Meta would.

The webhook body is Meta's envelope, serialised with escaped non-ASCII like Meta's and signed with
X-Hub-Signature-256 over those exact bytes.
"""

import hashlib
import json
import secrets
import time
from urllib.parse import urlencode

import phonenumbers
from django.conf import settings
from django.core import signing
from django.core.cache import cache
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from verification.models import Provider, ProviderEvent, SandboxWhatsAppMessage
from verification.providers.loopback import http_client
from verification.providers.whatsapp import PLACEHOLDER, signature
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


# The sandbox WABA's message templates, in the Management API's format: the audience's sends pick
# among the approved ones; a pending or rejected one is refused at send (132001), as Meta does.
TEMPLATES = [
    {
        "name": "joyback_news",
        "category": "MARKETING",
        "status": "APPROVED",
        "languages": {
            "en_US": "News from {{1}}: {{2}}",
            "de": "Neues von {{1}}: {{2}}",
            "es": "Novedades de {{1}}: {{2}}",
            "zh_CN": "{{1}} 的新消息: {{2}}",
        },
        "stop_button": {
            "en_US": "Stop promotions",
            "de": "Werbung stoppen",
            "es": "Detener promociones",
            "zh_CN": "停止推广",
        },
    },
    {
        "name": "joyback_offer",
        "category": "MARKETING",
        "status": "APPROVED",
        "languages": {"en_US": "{{1}} has a new offer for you. Reply STOP to stop these messages."},
        "stop_button": {},
    },
    {
        "name": "joyback_launch",
        "category": "MARKETING",
        "status": "PENDING",
        "languages": {"en_US": "Soon: {{1}}"},
    },
    {
        "name": "joyback_winner",
        "category": "MARKETING",
        "status": "REJECTED",
        "languages": {"en_US": "You won!"},
    },
]
# The sending number's messaging limit (GET /{phone-number-id}?fields=messaging_limit_tier).
MESSAGING_TIER = "TIER_250"
# Numbers ending in these digits are ones Meta capped: their marketing message fails with 131049.
CAPPED_SUFFIX = "049"


def _template_id(name: str, language: str, waba_id: str = WABA_ID) -> str:
    """A numeric id that stays the same for an account's template and language, as Meta's do."""
    seed = f"{name}:{language}" if waba_id == WABA_ID else f"{waba_id}:{name}:{language}"
    return str(int(hashlib.sha256(seed.encode()).hexdigest()[:13], 16))


def _authorised(request) -> bool:
    return request.headers.get("Authorization") == f"Bearer {settings.WHATSAPP_ACCESS_TOKEN}"


# A brand's WhatsApp Business Account in the sandbox: one per business that went through the
# sandbox's Embedded Signup, its ids derived from the business's name (so signing up again finds
# the same account), its token signed (a token opens its own account only).
CODE_SALT = "sandbox-whatsapp-signup-code"
TOKEN_SALT = "sandbox-whatsapp-business-token"  # noqa: S105 (a signing salt, not a secret)
# Meta's code from Embedded Signup is short-lived and works once.
CODE_MAX_AGE = 600


def _digits(seed: str, length: int) -> str:
    return str(int(hashlib.sha256(seed.encode()).hexdigest(), 16))[:length]


def business_waba(business: str) -> dict:
    waba_id = "1" + _digits(f"waba:{business}", 14)
    return {
        "waba_id": waba_id,
        "phone_number_id": "1" + _digits(f"phone:{waba_id}", 14),
        "display_phone_number": "+49 30 " + _digits(f"number:{waba_id}", 8),
        "verified_name": business[:100],
    }


def signup_code(business: str) -> str:
    """What Meta's signup popup hands the page when a business finished: a code for our server."""
    return signing.dumps({"b": business[:100], "n": secrets.token_hex(8)}, salt=CODE_SALT, compress=True)


def _token_for(waba_id: str, business: str) -> str:
    return "EAAsbx" + signing.dumps({"w": waba_id, "b": business}, salt=TOKEN_SALT, compress=True)


def _token_waba(raw: str) -> dict | None:
    """The account a business token opens, or None."""
    if not raw.startswith("EAAsbx"):
        return None
    try:
        found = signing.loads(raw[6:], salt=TOKEN_SALT)
    except signing.BadSignature:
        return None
    account = business_waba(found.get("b", ""))
    return account if account["waba_id"] == found.get("w") else None


def _bearer_waba(request) -> dict | None:
    header = request.headers.get("Authorization", "")
    return _token_waba(header[7:]) if header.startswith("Bearer ") else None


def _may_use_waba(request, waba_id: str) -> bool:
    if waba_id == WABA_ID:
        return _authorised(request)
    account = _bearer_waba(request)
    return account is not None and account["waba_id"] == waba_id


def _may_send_from(request, phone_number_id: str) -> bool:
    if phone_number_id == PHONE_NUMBER_ID:
        return _authorised(request)
    account = _bearer_waba(request)
    return account is not None and account["phone_number_id"] == phone_number_id


def _sandbox_open(request) -> None:
    if not (settings.SANDBOX or getattr(request, "loopback", False)):
        raise Http404("The sandbox is off")


def _oauth_error(message: str, code: int, subcode: int | None = None, status: int = 400):
    error = {
        "message": message,
        "type": "OAuthException",
        "code": code,
        "fbtrace_id": "A" + secrets.token_hex(8),
    }
    if subcode:
        error["error_subcode"] = subcode
    return JsonResponse({"error": error}, status=status)


@require_http_methods(["GET"])
def graph_oauth_access_token(request):
    """GET /oauth/access_token?client_id&client_secret&code, answered as Meta answers: the token,
    or its documented refusals (a wrong app secret, an expired code (36007), a used one (36009))."""
    _sandbox_open(request)
    if request.GET.get("client_id") != settings.WHATSAPP_APP_ID:
        return _oauth_error("Error validating application. Invalid application ID.", 101)
    if request.GET.get("client_secret") != settings.WHATSAPP_APP_SECRET:
        return _oauth_error("Error validating client secret.", 1, 463)
    code = request.GET.get("code", "")
    try:
        found = signing.loads(code, salt=CODE_SALT, max_age=CODE_MAX_AGE)
    except signing.SignatureExpired:
        return _oauth_error("This authorization code has expired.", 100, 36007)
    except signing.BadSignature:
        return _oauth_error("Invalid verification code format.", 100, 36008)
    if not cache.add("sandbox-whatsapp-code:" + hashlib.sha256(code.encode()).hexdigest(), 1, CODE_MAX_AGE):
        return _oauth_error("This authorization code has been used.", 100, 36009)
    account = business_waba(found["b"])
    return JsonResponse({"access_token": _token_for(account["waba_id"], found["b"]), "token_type": "bearer"})


@require_http_methods(["GET"])
def graph_debug_token(request):
    """GET /debug_token?input_token=, asked with the app's token: which accounts it may manage."""
    _sandbox_open(request)
    if (
        request.headers.get("Authorization")
        != f"Bearer {settings.WHATSAPP_APP_ID}|{settings.WHATSAPP_APP_SECRET}"
    ):
        return _oauth_error("Invalid OAuth access token - Cannot parse access token", 190, status=401)
    account = _token_waba(request.GET.get("input_token", ""))
    if account is None:
        return JsonResponse(
            {
                "data": {
                    "error": {
                        "code": 190,
                        "message": "Invalid OAuth access token - Cannot parse access token",
                    },
                    "is_valid": False,
                    "scopes": [],
                }
            }
        )
    scopes = ["whatsapp_business_management", "whatsapp_business_messaging"]
    return JsonResponse(
        {
            "data": {
                "app_id": settings.WHATSAPP_APP_ID,
                "type": "SYSTEM_USER",
                "application": "JoyBack",
                "data_access_expires_at": 0,
                "expires_at": 0,
                "is_valid": True,
                "issued_at": int(time.time()),
                "scopes": scopes,
                "granular_scopes": [{"scope": scope, "target_ids": [account["waba_id"]]} for scope in scopes],
                "user_id": _digits(f"user:{account['waba_id']}", 15),
            }
        }
    )


@require_http_methods(["GET"])
def graph_phone_numbers(request, waba_id):
    """GET /{waba-id}/phone_numbers: the account's one number."""
    _sandbox_open(request)
    if not _may_use_waba(request, waba_id):
        return _oauth_refused()
    if waba_id == WABA_ID:
        number = {"id": PHONE_NUMBER_ID, "display_phone_number": settings.WHATSAPP_BUSINESS_NUMBER}
        number["verified_name"] = "JoyBack"
    else:
        account = _bearer_waba(request)
        number = {
            "id": account["phone_number_id"],
            "display_phone_number": account["display_phone_number"],
            "verified_name": account["verified_name"],
        }
    number.update(
        {"code_verification_status": "VERIFIED", "quality_rating": "GREEN", "platform_type": "CLOUD_API"}
    )
    return JsonResponse({"data": [number], "paging": {"cursors": {"before": "QVFI", "after": "QVFI"}}})


@csrf_exempt
@require_POST
def graph_subscribed_apps(request, waba_id):
    """POST /{waba-id}/subscribed_apps: our app hears the account's webhooks."""
    _sandbox_open(request)
    if not _may_use_waba(request, waba_id):
        return _oauth_refused()
    return JsonResponse({"success": True})


@require_http_methods(["GET", "POST"])
def signup(request):
    """A stand-in for Meta's Embedded Signup popup: the business names itself, and the page it came
    from gets the code, as the popup's callback hands it to the page's script."""
    if not settings.SANDBOX:
        raise Http404("The sandbox is off")
    back = request.GET.get("next", "/")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = "/"
    if request.method == "GET":
        return render(
            request,
            "sandbox/whatsapp_signup.html",
            {"business": request.GET.get("business", ""), "next": back},
        )
    business = request.POST.get("business", "").strip()[:100] or "Sandbox Business"
    return redirect(back + ("&" if "?" in back else "?") + urlencode({"code": signup_code(business)}))


def _oauth_refused():
    return JsonResponse(
        {"error": {"message": "Invalid OAuth access token.", "type": "OAuthException", "code": 190}},
        status=401,
    )


@require_http_methods(["GET"])
def graph_templates(request, waba_id):
    """GET /{waba-id}/message_templates, one page per `limit` with Meta's cursors."""
    if not (settings.SANDBOX or getattr(request, "loopback", False)):
        raise Http404("The sandbox is off")
    if not (_authorised(request) or _bearer_waba(request)):
        return _oauth_refused()
    if not _may_use_waba(request, waba_id):
        return JsonResponse(
            {"error": {"message": "(#100) Invalid parameter", "type": "OAuthException", "code": 100}},
            status=400,
        )
    data = []
    for template in TEMPLATES:
        for language, body in template["languages"].items():
            components = [{"type": "BODY", "text": body}]
            button = template.get("stop_button", {}).get(language)
            if button:
                components.append({"type": "BUTTONS", "buttons": [{"type": "QUICK_REPLY", "text": button}]})
            data.append(
                {
                    "name": template["name"],
                    "parameter_format": "POSITIONAL",
                    "components": components,
                    "language": language,
                    "status": template["status"],
                    "category": template["category"],
                    "id": _template_id(template["name"], language, waba_id),
                }
            )
    try:
        limit = max(1, min(int(request.GET.get("limit", "25")), 100))
        start = int(request.GET.get("after") or 0)
    except ValueError:
        return JsonResponse({"error": {"message": "(#100) Invalid parameter", "code": 100}}, status=400)
    page = data[start : start + limit]
    paging = {"cursors": {"before": str(start), "after": str(start + len(page))}}
    if start + limit < len(data):
        # In-process, the request has no real host: the link names the site, as Meta's names its own.
        query = request.GET.copy()
        query["after"] = str(start + limit)
        paging["next"] = f"{settings.SITE_URL.rstrip('/')}{request.path}?{query.urlencode()}"
    return JsonResponse({"data": page, "paging": paging})


@require_http_methods(["GET"])
def graph_phone_number(request, phone_number_id):
    """GET /{phone-number-id}?fields=messaging_limit_tier."""
    if not (settings.SANDBOX or getattr(request, "loopback", False)):
        raise Http404("The sandbox is off")
    if not (_authorised(request) or _bearer_waba(request)):
        return _oauth_refused()
    if not _may_send_from(request, phone_number_id):
        return JsonResponse({"error": {"message": "(#100) Invalid parameter", "code": 100}}, status=400)
    return JsonResponse({"messaging_limit_tier": MESSAGING_TIER, "id": phone_number_id})


def status_envelope(
    *,
    wamid: str,
    wa_id: str,
    status: str,
    callback: str = "",
    error_code: int | None = None,
    waba_id: str = WABA_ID,
    phone_number_id: str = PHONE_NUMBER_ID,
    display_number: str = "",
) -> dict:
    """A statuses[] notification as Meta sends it (per-message pricing since July 2025)."""
    item = {"id": wamid, "status": status, "timestamp": str(int(time.time())), "recipient_id": wa_id}
    if error_code:
        item["errors"] = [
            {
                "code": error_code,
                "title": "Message failed to send because there were too many messages sent from this phone "
                "number in a short period of time"
                if error_code != 131049
                else "This message was not delivered to maintain healthy ecosystem engagement.",
                "message": "This message was not delivered to maintain healthy ecosystem engagement.",
                "error_data": {
                    "details": "In order to maintain a healthy ecosystem engagement, the message failed "
                    "to be delivered."
                },
                "href": "https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/",
            }
        ]
    else:
        item["pricing"] = {
            "billable": True,
            "pricing_model": "PMP",
            "category": "marketing",
            "type": "regular",
        }
    if callback:
        item["biz_opaque_callback_data"] = callback
    return {
        "object": "whatsapp_business_account",
        "entry": [
            {
                "id": waba_id,
                "changes": [
                    {
                        "field": "messages",
                        "value": {
                            "messaging_product": "whatsapp",
                            "metadata": {
                                "display_phone_number": display_number or settings.WHATSAPP_BUSINESS_NUMBER,
                                "phone_number_id": phone_number_id,
                            },
                            "statuses": [item],
                        },
                    }
                ],
            }
        ],
    }


def _known_template(name: str, language: str):
    for template in TEMPLATES:
        if template["name"] == name:
            return template, template["languages"].get(language)
    return None, None


@csrf_exempt
@require_POST
def graph_messages(request, phone_number_id):
    """Cloud API's POST /{phone-number-id}/messages for templates, answered as Meta answers; in-process
    only (a test brand's message) when the sandbox is off."""
    if not (settings.SANDBOX or getattr(request, "loopback", False)):
        raise Http404("The sandbox is off")
    if not (_authorised(request) or _bearer_waba(request)):
        return JsonResponse({"error": {"message": "Invalid OAuth access token.", "code": 190}}, status=401)
    try:
        body = json.loads(request.body)
        to, template = str(body["to"]), body["template"]
        valid = body.get("messaging_product") == "whatsapp" and to.isdigit() and template["name"]
    except (ValueError, KeyError, TypeError):
        valid = False
    if not _may_send_from(request, phone_number_id) or not valid:
        return JsonResponse({"error": {"message": "(#100) Invalid parameter", "code": 100}}, status=400)
    language = str((template.get("language") or {}).get("code") or "")
    known, body = _known_template(template["name"], language)
    parameters = [
        str(p.get("text", ""))
        for c in template.get("components") or []
        if c.get("type") == "body"
        for p in c.get("parameters") or []
    ]
    if known is not None:
        if body is None or known["status"] != "APPROVED":
            return _graph_error(132001, "Template name does not exist in the translation")
        wanted = len(set(PLACEHOLDER.findall(body)))
        if len(parameters) != wanted:
            return _graph_error(
                132000,
                "Number of parameters does not match the expected number of params",
                f"body: number of localizable_params ({len(parameters)}) does not match the expected "
                f"number of params ({wanted})",
            )
    message_id = "wamid." + secrets.token_urlsafe(24)
    if known is not None:
        text = body
        for index, value in enumerate(parameters, start=1):
            text = text.replace("{{" + str(index) + "}}", value)
        capped = known["category"] == "MARKETING" and (to.startswith("1") or to.endswith(CAPPED_SUFFIX))
        callback = str(body_callback(request.body))
        SandboxWhatsAppMessage.objects.create(
            wamid=message_id,
            wa_id=to,
            template=known["name"],
            language=language,
            body=text,
            callback=callback,
            failed_code=131049 if capped else None,
        )
        # Meta answers "accepted" and reports what became of it by webhook: sent and delivered, or
        # failed with 131049 for a number it holds marketing back from (+1 numbers among them).
        statuses = ["failed"] if capped else ["sent", "delivered"]
        account = _bearer_waba(request) or {}
        for status in statuses:
            webhook_deliver(
                status_envelope(
                    wamid=message_id,
                    wa_id=to,
                    status=status,
                    callback=callback,
                    error_code=131049 if capped else None,
                    waba_id=account.get("waba_id", WABA_ID),
                    phone_number_id=phone_number_id,
                    display_number=account.get("display_phone_number", ""),
                )
            )
    return JsonResponse(
        {
            "messaging_product": "whatsapp",
            "contacts": [{"input": to, "wa_id": to}],
            "messages": [{"id": message_id, "message_status": "accepted"}],
        }
    )


def body_callback(raw: bytes) -> str:
    try:
        return str(json.loads(raw).get("biz_opaque_callback_data") or "")[:200]
    except (ValueError, AttributeError):
        return ""


def _graph_error(code: int, message: str, details: str = ""):
    return JsonResponse(
        {
            "error": {
                "message": f"(#{code}) {message}",
                "type": "OAuthException",
                "code": code,
                "error_data": {"messaging_product": "whatsapp", "details": details or message},
                "fbtrace_id": "A" + secrets.token_urlsafe(16),
            }
        },
        status=400,
    )


def _wa_id_from(raw: str) -> str:
    try:
        number = phonenumbers.parse(raw, None)
    except phonenumbers.NumberParseException:
        return ""
    if not phonenumbers.is_valid_number(number):
        return ""
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164).lstrip("+")


def _deliver_and_process(payload: dict, event_ids: list[str]) -> None:
    if webhook_deliver(payload) == 200:
        stored = ProviderEvent.objects.filter(provider=Provider.WHATSAPP, event_id__in=event_ids)
        provider_events_process(ids=list(stored.values_list("pk", flat=True)))


@require_http_methods(["GET", "POST"])
def inbox(request):
    """The sandbox phone's chat with the business: the templates sent to this number (opening it
    reads them, and Meta's "read" status goes out), Meta's stop button and a reply box."""
    if not settings.SANDBOX:
        raise Http404("The sandbox is off")
    wa_id = _wa_id_from(request.GET.get("number", "") or request.POST.get("number", ""))
    if request.method == "POST" and wa_id:
        reply_to = SandboxWhatsAppMessage.objects.filter(
            wa_id=wa_id, wamid=request.POST.get("context", "")
        ).first()
        message_id = f"wamid.{secrets.token_urlsafe(36)}"
        payload = message_envelope(
            wa_id=wa_id, name="Sandbox User", text=request.POST.get("text", "")[:4096], message_id=message_id
        )
        message = payload["entry"][0]["changes"][0]["value"]["messages"][0]
        if reply_to is not None:
            message["context"] = {"from": settings.WHATSAPP_BUSINESS_NUMBER, "id": reply_to.wamid}
        if request.POST.get("button"):
            # A quick-reply button of the template: Meta sends its label as the payload.
            message.pop("text")
            message["type"] = "button"
            message["button"] = {"payload": request.POST["button"], "text": request.POST["button"]}
        _deliver_and_process(payload, [message_id])
        return redirect(reverse("verification:sandbox_whatsapp_inbox") + "?number=%2B" + wa_id)
    messages = (
        list(SandboxWhatsAppMessage.objects.filter(wa_id=wa_id).order_by("created_at")) if wa_id else []
    )
    unread = [m for m in messages if m.read_at is None and m.failed_code is None]
    for message in unread:
        _deliver_and_process(
            status_envelope(wamid=message.wamid, wa_id=wa_id, status="read", callback=message.callback),
            [f"status:{message.wamid}:read"],
        )
    SandboxWhatsAppMessage.objects.filter(pk__in=[m.pk for m in unread]).update(read_at=timezone.now())
    for message in messages:
        known, _body = _known_template(message.template, message.language)
        message.stop_button = (known or {}).get("stop_button", {}).get(message.language, "")
    context = {
        "wa_id": wa_id,
        "messages": [m for m in messages if m.failed_code is None],
        "number": request.GET.get("number", ""),
    }
    return render(request, "sandbox/whatsapp_inbox.html", context)
