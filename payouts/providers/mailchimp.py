"""Mailchimp (Marketing API 3.0): a brand's email audience in force written to its Mailchimp
audience as subscribed members with the time and address of the opt-in (PUT
/lists/{list_id}/members/{subscriber_hash}, the hash the MD5 of the lower-cased address), tagged with
the campaign it came from, with the audience's email marketing permission enabled where it keeps
GDPR fields; unsubscribes read back (members with status unsubscribed or cleaned changed since the
last read) and confirmed one by one for its webhook. The API key's datacenter suffix (…-us21)
names the host; HTTP Basic with any user name and the key as password, as Mailchimp documents.
Errors are problem+json documents (type, title, status, detail, instance, and errors[] for an
invalid resource)."""

import hashlib
import re
from datetime import UTC, datetime

from payouts.providers.klaviyo import KlaviyoError as CrmError  # one error shape for every CRM
from payouts.providers.klaviyo import Subscriber
from verification.providers.loopback import http_client, provider_url

PAGE = 1000  # Mailchimp's largest page of list members
_DATACENTER = re.compile(r"^[0-9a-f]{32}-([a-z]{2,4}[0-9]{1,3})$")
# Per member, the refusals that are about that person and not the connection: the sync goes on
# without them (a person unsubscribed or deleted in Mailchimp cannot be subscribed again by API;
# Mailchimp wants them to sign up on its own form).
MEMBER_REFUSALS = {"Member In Compliance State", "Forgotten Email Not Subscribed", "Invalid Resource"}


def datacenter(api_key: str) -> str:
    """The "us21" of "0123…cdef-us21"; a key without one is refused before any call."""
    found = _DATACENTER.match(api_key.strip())
    if not found:
        raise CrmError("Mailchimp: the key has no datacenter suffix (like -us21)", retry=False)
    return found.group(1)


def subscriber_hash(email: str) -> str:
    """Mailchimp's member id: the MD5 of the lower-cased address."""
    return hashlib.md5(email.strip().lower().encode(), usedforsecurity=False).hexdigest()


def _base(api_key: str) -> str:
    return provider_url("MAILCHIMP_API_BASE").replace("{dc}", datacenter(api_key)) + "/3.0"


def _auth(api_key: str) -> tuple[str, str]:
    return ("joyback", api_key)


def _problem(response) -> tuple[str, str]:
    try:
        body = response.json()
        fields = "; ".join(f"{e.get('field', '')}: {e.get('message', '')}" for e in body.get("errors") or [])
        detail = f"{body.get('detail', '')} {fields}".strip()
        return str(body.get("title") or ""), detail
    except ValueError:
        return "", response.text[:200]


def _raise_for(response) -> None:
    if response.status_code in (200, 201, 204):
        return
    title, detail = _problem(response)
    # Mailchimp limits concurrent connections and sends no Retry-After: the caller's backoff waits.
    retry = response.status_code == 429 or response.status_code >= 500
    raise CrmError(f"Mailchimp {response.status_code} {title}: {detail}"[:300], retry=retry)


def member_body(*, subscriber: Subscriber, permission_ids: list[str], ip: str = "") -> dict:
    """The add-or-update body: subscribed (also when new), the opt-in's time and, where known, the
    address it was confirmed from, and the audience's email permission given."""
    body = {
        "email_address": subscriber.contact,
        "status_if_new": "subscribed",
        "status": "subscribed",
        "timestamp_opt": subscriber.consented_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S"),
        "merge_fields": {},
    }
    if ip:
        body["ip_opt"] = ip
    if permission_ids:
        body["marketing_permissions"] = [
            {"marketing_permission_id": permission, "enabled": True} for permission in permission_ids
        ]
    return body


def tags_body(*, source: str) -> dict:
    return {"tags": [{"name": source[:100], "status": "active"}]}


def email_permission_ids(*, api_key: str, list_id: str) -> list[str]:
    """The audience's GDPR marketing permissions for email (Mailchimp lists them on its members),
    or none when the audience keeps no GDPR fields."""
    with http_client() as client:
        response = client.get(
            f"{_base(api_key)}/lists/{list_id}/members",
            params={"count": "1", "fields": "members.marketing_permissions"},
            auth=_auth(api_key),
        )
    _raise_for(response)
    members = response.json().get("members") or [{}]
    return [
        str(permission["marketing_permission_id"])
        for permission in members[0].get("marketing_permissions") or []
        if "email" in str(permission.get("text", "")).casefold()
    ]


def subscribers_push(*, api_key: str, subscribers: list[Subscriber], list_id: str = "") -> int:
    """Each email subscriber added or updated, then tagged with its source; how many Mailchimp took.
    WhatsApp consents are not Mailchimp's: they are left out."""
    emails = [person for person in subscribers if person.channel == "email"]
    if not emails:
        return 0
    permissions = email_permission_ids(api_key=api_key, list_id=list_id)
    sent = 0
    with http_client() as client:
        for person in emails:
            member = f"{_base(api_key)}/lists/{list_id}/members/{subscriber_hash(person.contact)}"
            response = client.put(
                member, json=member_body(subscriber=person, permission_ids=permissions), auth=_auth(api_key)
            )
            if response.status_code == 400 and _problem(response)[0] in MEMBER_REFUSALS:
                continue
            _raise_for(response)
            _raise_for(
                client.post(f"{member}/tags", json=tags_body(source=person.source), auth=_auth(api_key))
            )
            sent += 1
    return sent


def unsubscribed_since(*, api_key: str, list_id: str, since: datetime | None) -> list[tuple[str, str]]:
    """("email", address) of the members unsubscribed or cleaned (bounced) since `since`, every page."""
    found = []
    with http_client() as client:
        for status in ("unsubscribed", "cleaned"):
            for page in range(1000):
                params = {
                    "status": status,
                    "count": str(PAGE),
                    "offset": str(page * PAGE),
                    "fields": "members.email_address,members.status,members.last_changed,total_items",
                }
                if since is not None:
                    params["since_last_changed"] = since.isoformat()
                response = client.get(
                    f"{_base(api_key)}/lists/{list_id}/members", params=params, auth=_auth(api_key)
                )
                _raise_for(response)
                answer = response.json()
                members = answer.get("members") or []
                found += [("email", m["email_address"]) for m in members if m.get("status") == status]
                if (page + 1) * PAGE >= int(answer.get("total_items") or 0):
                    break
    return found


def member_status(*, api_key: str, list_id: str, email: str) -> str:
    """The member's status now ("subscribed", "unsubscribed", "cleaned", ...), "" when Mailchimp has
    no such member (never added, archived or permanently deleted)."""
    with http_client() as client:
        response = client.get(
            f"{_base(api_key)}/lists/{list_id}/members/{subscriber_hash(email)}",
            params={"fields": "status"},
            auth=_auth(api_key),
        )
    if response.status_code == 404:
        return ""
    _raise_for(response)
    return str(response.json().get("status") or "")


def webhook_create(*, api_key: str, list_id: str, url: str) -> str:
    """POST /lists/{list_id}/webhooks: Mailchimp posts unsubscribes and cleans to `url`; its id."""
    body = {
        "url": url,
        "events": {"unsubscribe": True, "cleaned": True},
        "sources": {"user": True, "admin": True, "api": True},
    }
    with http_client() as client:
        response = client.post(f"{_base(api_key)}/lists/{list_id}/webhooks", json=body, auth=_auth(api_key))
    _raise_for(response)
    return str(response.json().get("id") or "")


def key_check(*, api_key: str, list_id: str = "") -> None:
    """The key works and the audience is its own: GET /lists/{list_id}."""
    with http_client() as client:
        response = client.get(
            f"{_base(api_key)}/lists/{list_id}", params={"fields": "id,name"}, auth=_auth(api_key)
        )
    _raise_for(response)
