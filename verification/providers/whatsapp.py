"""WhatsApp Cloud API webhooks: the verify handshake, X-Hub-Signature-256, inbound messages."""

import hashlib
import hmac
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
                    )
                )
    return [message for message in found if message.message_id and message.wa_id]


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


def template_send(*, to: str, template: str, language: str, parameters: list[str]) -> str:
    """Send an approved message template (the only kind allowed outside the 24-hour window);
    returns Meta's message id."""
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
    with http_client() as client:
        response = client.post(
            f"{provider_url('WHATSAPP_API_BASE')}/v21.0/{settings.WHATSAPP_PHONE_NUMBER_ID}/messages",
            json=body,
            headers={"Authorization": f"Bearer {settings.WHATSAPP_ACCESS_TOKEN}"},
        )
    if response.status_code != 200:
        raise WhatsAppError(f"template {template} to {to[-4:]}: {response.status_code} {response.text[:200]}")
    return response.json()["messages"][0]["id"]


class WhatsAppError(Exception):
    pass
