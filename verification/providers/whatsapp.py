"""WhatsApp Cloud API webhooks: the verify handshake, X-Hub-Signature-256, inbound messages."""

import hashlib
import hmac
import re
from dataclasses import dataclass

from django.conf import settings

from verification.providers.loopback import http_client, provider_url


@dataclass(frozen=True)
class InboundMessage:
    message_id: str
    wa_id: str
    text: str
    timestamp: str
    profile_name: str
    # "text", "button" (a template's quick reply, Meta's marketing stop button among them),
    # "interactive", or "preference" (the user_preferences webhook: the person stopped marketing
    # messages in WhatsApp itself). Events stored before these fields read as a text.
    kind: str = "text"
    # The wamid of our message the person answered or whose button they tapped.
    context_id: str = ""


@dataclass(frozen=True)
class StatusUpdate:
    """What became of a message we sent (Meta's statuses[]): sent, delivered, read or failed."""

    message_id: str
    status: str
    timestamp: str
    recipient_id: str
    error_code: int | None = None
    billable: bool | None = None
    pricing_category: str = ""
    callback: str = ""  # biz_opaque_callback_data, echoed from the send


def signature(*, body: bytes, app_secret: str) -> str:
    return "sha256=" + hmac.new(app_secret.encode(), body, hashlib.sha256).hexdigest()


def signature_valid(*, body: bytes, header: str, app_secret: str) -> bool:
    # Hash the exact bytes received: Meta escapes non-ASCII, so re-serialising would change them.
    return hmac.compare_digest(signature(body=body, app_secret=app_secret), header or "")


def handshake_answer(*, params, verify_token: str) -> str | None:
    """The challenge to echo back, or None when the handshake must be refused."""
    if params.get("hub.mode") != "subscribe":
        return None
    if not hmac.compare_digest(params.get("hub.verify_token", ""), verify_token):
        return None
    return params.get("hub.challenge", "")


def inbound_messages(payload: dict) -> list[InboundMessage]:
    """Every message in every entry and change; button and interactive replies count as text."""
    found = []
    for entry in payload.get("entry") or []:
        for change in entry.get("changes") or []:
            if change.get("field") != "messages":
                continue
            value = change.get("value") or {}
            names = {
                c.get("wa_id"): (c.get("profile") or {}).get("name", "") for c in value.get("contacts") or []
            }
            for message in value.get("messages") or []:
                wa_id = message.get("from") or ""
                found.append(
                    InboundMessage(
                        message_id=message.get("id", ""),
                        wa_id=wa_id,
                        text=_message_text(message),
                        timestamp=message.get("timestamp", ""),
                        profile_name=names.get(wa_id, ""),
                        kind=str(message.get("type") or ""),
                        context_id=str((message.get("context") or {}).get("id") or ""),
                    )
                )
    found += _preference_stops(payload)
    return [message for message in found if message.message_id and message.wa_id]


def _preference_stops(payload: dict) -> list[InboundMessage]:
    """The user_preferences field: a person who stopped marketing messages in WhatsApp itself
    ("value": "stop"); a "resume" is no consent to any brand, so it is not read."""
    found = []
    for entry in payload.get("entry") or []:
        for change in entry.get("changes") or []:
            if change.get("field") != "user_preferences":
                continue
            for preference in (change.get("value") or {}).get("user_preferences") or []:
                if preference.get("category") != "marketing_messages" or preference.get("value") != "stop":
                    continue
                wa_id, at = str(preference.get("wa_id") or ""), str(preference.get("timestamp") or "")
                found.append(
                    InboundMessage(
                        message_id=f"preference:{wa_id}:{at}",
                        wa_id=wa_id,
                        text="",
                        timestamp=at,
                        profile_name="",
                        kind="preference",
                    )
                )
    return found


def status_updates(payload: dict) -> list[StatusUpdate]:
    """Every statuses[] item of every entry and change (a messages change carries messages or
    statuses); pricing and errors are optional, as Meta's changed over time."""
    found = []
    for entry in payload.get("entry") or []:
        for change in entry.get("changes") or []:
            if change.get("field") != "messages":
                continue
            for status in (change.get("value") or {}).get("statuses") or []:
                errors = status.get("errors") or [{}]
                pricing = status.get("pricing") or {}
                code = errors[0].get("code")
                found.append(
                    StatusUpdate(
                        message_id=str(status.get("id") or ""),
                        status=str(status.get("status") or ""),
                        timestamp=str(status.get("timestamp") or ""),
                        recipient_id=str(status.get("recipient_id") or ""),
                        error_code=int(code) if isinstance(code, int | str) and str(code).isdigit() else None,
                        billable=pricing.get("billable")
                        if isinstance(pricing.get("billable"), bool)
                        else None,
                        pricing_category=str(pricing.get("category") or ""),
                        callback=str(status.get("biz_opaque_callback_data") or ""),
                    )
                )
    return [update for update in found if update.message_id and update.status in STATUS_RANK]


# A late status never moves a message back (Meta does not keep their order); failed is final.
STATUS_RANK = {"sent": 1, "delivered": 2, "read": 3, "failed": 4}


def _message_text(message: dict) -> str:
    kind = message.get("type")
    if kind == "text":
        return (message.get("text") or {}).get("body", "")
    if kind == "button":
        return (message.get("button") or {}).get("payload", "")
    if kind == "interactive":
        interactive = message.get("interactive") or {}
        reply = interactive.get("button_reply") or interactive.get("list_reply") or {}
        return reply.get("id", "")
    return ""


@dataclass(frozen=True)
class Sender:
    """A business's number and the token that may send from it: a brand's own WhatsApp Business
    Account. None of it means the platform's own number (the person's payout messages)."""

    phone_number_id: str
    token: str


def _sender(sender: Sender | None) -> Sender:
    return sender or Sender(settings.WHATSAPP_PHONE_NUMBER_ID, settings.WHATSAPP_ACCESS_TOKEN)


def template_send(
    *,
    to: str,
    template: str,
    language: str,
    parameters: list[str],
    callback: str = "",
    sender: Sender | None = None,
) -> str:
    """Send an approved message template (the only kind allowed outside the 24-hour window);
    returns Meta's message id. `callback` comes back on its statuses (biz_opaque_callback_data)."""
    body = {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": to.lstrip("+"),
        "type": "template",
        "template": {
            "name": template,
            "language": {"code": language.replace("-", "_")},
            "components": [
                {"type": "body", "parameters": [{"type": "text", "text": str(value)} for value in parameters]}
            ],
        },
    }
    if callback:
        body["biz_opaque_callback_data"] = callback
    sender = _sender(sender)
    with http_client() as client:
        response = client.post(
            f"{provider_url('WHATSAPP_API_BASE')}/v21.0/{sender.phone_number_id}/messages",
            json=body,
            headers={"Authorization": f"Bearer {sender.token}"},
        )
    if response.status_code != 200:
        raise WhatsAppError(f"template {template} to {to[-4:]}: {response.status_code} {response.text[:200]}")
    return response.json()["messages"][0]["id"]


class WhatsAppError(Exception):
    def __init__(self, message: str, *, code: int | None = None, subcode: int | None = None):
        super().__init__(message)
        self.code, self.subcode = code, subcode


def _graph_error(what: str, response) -> WhatsAppError:
    """Meta's error envelope ({"error": {"code", "error_subcode", "message"}}) kept readable."""
    try:
        error = response.json().get("error") or {}
    except (ValueError, AttributeError):
        error = {}
    code, subcode = error.get("code"), error.get("error_subcode")
    return WhatsAppError(
        f"{what}: {response.status_code} {response.text[:200]}",
        code=code if isinstance(code, int) else None,
        subcode=subcode if isinstance(subcode, int) else None,
    )


@dataclass(frozen=True)
class Template:
    """A message template of the WhatsApp Business Account, as the Management API lists it."""

    template_id: str
    name: str
    language: str
    status: str
    category: str
    body: str
    parameters: int  # how many {{n}} the body takes


def templates_list(*, waba_id: str = "", token: str = "") -> list[Template]:
    """GET /{waba-id}/message_templates, every page (Meta pages with paging.next): a brand's
    account with its token, or the platform's own."""
    waba_id = waba_id or settings.WHATSAPP_BUSINESS_ACCOUNT_ID
    token = token or settings.WHATSAPP_ACCESS_TOKEN
    url = f"{provider_url('WHATSAPP_API_BASE')}/v21.0/{waba_id}/message_templates"
    params = {"fields": "id,name,language,status,category,components", "limit": "100"}
    found = []
    with http_client() as client:
        for _page in range(50):
            response = client.get(url, params=params, headers={"Authorization": f"Bearer {token}"})
            if response.status_code != 200:
                raise WhatsAppError(f"message_templates: {response.status_code} {response.text[:200]}")
            answer = response.json()
            found += [_template(item) for item in answer.get("data") or []]
            after = ((answer.get("paging") or {}).get("cursors") or {}).get("after")
            if not (answer.get("paging") or {}).get("next") or not after:
                break
            params = {**params, "after": after}
    return found


def _template(item: dict) -> Template:
    body = next(
        (c.get("text", "") for c in item.get("components") or [] if str(c.get("type")).upper() == "BODY"), ""
    )
    return Template(
        template_id=str(item.get("id") or ""),
        name=str(item.get("name") or ""),
        language=str(item.get("language") or ""),
        status=str(item.get("status") or ""),
        category=str(item.get("category") or ""),
        body=body,
        parameters=len(set(PLACEHOLDER.findall(body))),
    )


PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
# Meta's messaging limit: unique people reached with business-initiated messages per rolling 24 h.
TIER_LIMITS = {"TIER_250": 250, "TIER_1K": 1000, "TIER_2K": 2000, "TIER_10K": 10_000, "TIER_100K": 100_000}


def messaging_limit(*, sender: Sender | None = None) -> tuple[str, int | None]:
    """The sending number's tier (GET /{phone-number-id}?fields=messaging_limit_tier) and how many
    people it may reach a day (None: unlimited). An answer it cannot read counts as the lowest tier:
    sending too few is safe, too many gets the number restricted."""
    sender = _sender(sender)
    with http_client() as client:
        response = client.get(
            f"{provider_url('WHATSAPP_API_BASE')}/v21.0/{sender.phone_number_id}",
            params={"fields": "messaging_limit_tier"},
            headers={"Authorization": f"Bearer {sender.token}"},
        )
    if response.status_code != 200:
        raise WhatsAppError(f"messaging_limit_tier: {response.status_code} {response.text[:200]}")
    tier = str(response.json().get("messaging_limit_tier") or "")
    if tier == "TIER_UNLIMITED":
        return tier, None
    return tier or "TIER_250", TIER_LIMITS.get(tier, 250)


# Embedded Signup's end, on our server: the code the signup popup returned is exchanged for the
# business's token, the token tells which WhatsApp Business Account it was granted, the account
# lists its number, and our app subscribes to the account's webhooks.


@dataclass(frozen=True)
class PhoneNumber:
    phone_number_id: str
    display_number: str
    verified_name: str


def signup_code_exchange(*, code: str) -> str:
    """GET /oauth/access_token with the app's id and secret and the signup's code: the business
    integration system user's token (the code works once and expires within minutes)."""
    with http_client() as client:
        response = client.get(
            f"{provider_url('WHATSAPP_API_BASE')}/v21.0/oauth/access_token",
            params={
                "client_id": settings.WHATSAPP_APP_ID,
                "client_secret": settings.WHATSAPP_APP_SECRET,
                "code": code,
            },
        )
    if response.status_code != 200:
        raise _graph_error("oauth/access_token", response)
    token = str(response.json().get("access_token") or "")
    if not token:
        raise WhatsAppError("oauth/access_token: no access_token in the answer")
    return token


def token_wabas(*, token: str) -> list[str]:
    """GET /debug_token (asked with the app's token): the WhatsApp Business Accounts the token
    may manage, from granular_scopes' whatsapp_business_management target_ids. An invalid token
    grants none."""
    with http_client() as client:
        response = client.get(
            f"{provider_url('WHATSAPP_API_BASE')}/v21.0/debug_token",
            params={"input_token": token},
            headers={"Authorization": f"Bearer {settings.WHATSAPP_APP_ID}|{settings.WHATSAPP_APP_SECRET}"},
        )
    if response.status_code != 200:
        raise _graph_error("debug_token", response)
    data = response.json().get("data") or {}
    if data.get("is_valid") is not True:
        return []
    return [
        str(target)
        for scope in data.get("granular_scopes") or []
        if scope.get("scope") == "whatsapp_business_management"
        for target in scope.get("target_ids") or []
    ]


def waba_phone_numbers(*, waba_id: str, token: str) -> list[PhoneNumber]:
    """GET /{waba-id}/phone_numbers: the account's numbers, with the name Meta verified."""
    with http_client() as client:
        response = client.get(
            f"{provider_url('WHATSAPP_API_BASE')}/v21.0/{waba_id}/phone_numbers",
            params={"fields": "id,display_phone_number,verified_name"},
            headers={"Authorization": f"Bearer {token}"},
        )
    if response.status_code != 200:
        raise _graph_error("phone_numbers", response)
    return [
        PhoneNumber(
            str(item.get("id") or ""),
            str(item.get("display_phone_number") or ""),
            str(item.get("verified_name") or ""),
        )
        for item in response.json().get("data") or []
        if item.get("id")
    ]


def waba_subscribe(*, waba_id: str, token: str) -> None:
    """POST /{waba-id}/subscribed_apps: the account's messages and statuses come to our webhook."""
    with http_client() as client:
        response = client.post(
            f"{provider_url('WHATSAPP_API_BASE')}/v21.0/{waba_id}/subscribed_apps",
            headers={"Authorization": f"Bearer {token}"},
        )
    if response.status_code != 200 or response.json().get("success") is not True:
        raise _graph_error("subscribed_apps", response)
