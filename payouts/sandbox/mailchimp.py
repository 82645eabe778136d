"""The sandbox Mailchimp, at the Marketing API 3.0's paths under /sandbox/mailchimp/<datacenter>/:
members added or updated by their subscriber hash, tagged, listed by status and last change, read
one by one; a list's webhooks. It fails as Mailchimp does, in problem+json: 401 "API Key Invalid"
for a key of another datacenter, 404 "Resource Not Found" for an audience named "missing…" or an
unknown member, 400 "Invalid Resource" with errors[] (a hash that is not the address's, a new member
without status_if_new, a bad timestamp), 400 "Member Exists" when adding one twice, 400 "Member In
Compliance State" to resubscribe an unsubscribed member by API, 400 "Forgotten Email Not
Subscribed" for a permanently deleted one, 429 "Too Many Requests" for a key that begins 429. An
audience whose id says "gdpr" keeps GDPR fields (an email marketing permission). A tester
unsubscribes or permanently deletes a member with the functions at the end."""

import base64
import hashlib
import json
import re
import secrets
import uuid
from datetime import datetime

from django.conf import settings
from django.http import Http404, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from payouts.models import SandboxCrmProfile

ERRORS_DOC = "https://mailchimp.com/developer/marketing/docs/errors/"
PERMISSION = {"marketing_permission_id": "e7f8a1b2c3", "text": "Email"}
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _problem(status: int, title: str, detail: str, errors: list | None = None) -> JsonResponse:
    body = {
        "type": ERRORS_DOC,
        "title": title,
        "status": status,
        "detail": detail,
        "instance": str(uuid.uuid4()),
    }
    if errors:
        body["errors"] = errors
    return JsonResponse(body, status=status, content_type="application/problem+json; charset=utf-8")


def _key(request, dc: str) -> tuple[str, JsonResponse | None]:
    if not (settings.SANDBOX or getattr(request, "loopback", False)):
        raise Http404("The sandbox is off")
    header = request.headers.get("Authorization", "")
    key = ""
    if header.startswith("Basic "):
        try:
            key = base64.b64decode(header[6:]).decode().partition(":")[2]
        except (ValueError, UnicodeDecodeError):
            key = ""
    if not re.fullmatch(r"[0-9a-f]{32}-[a-z]{2,4}[0-9]{1,3}", key) or not key.endswith(f"-{dc}"):
        return "", _problem(
            401,
            "API Key Invalid",
            "Your API key may be invalid, or you've attempted to access the wrong datacenter.",
        )
    if key.startswith("429"):
        return "", _problem(
            429, "Too Many Requests", "You have exceeded the limit of 10 simultaneous connections."
        )
    return hashlib.sha256(key.encode()).hexdigest(), None


def _list_missing(list_id: str) -> JsonResponse | None:
    if list_id.startswith("missing"):
        return _problem(404, "Resource Not Found", "The requested resource could not be found.")
    return None


def _member(row: SandboxCrmProfile, list_id: str) -> dict:
    member = {
        "id": hashlib.md5(row.email.lower().encode(), usedforsecurity=False).hexdigest(),
        "email_address": row.email,
        "status": row.consent,
        "timestamp_opt": row.consented_at,
        "last_changed": row.updated.isoformat(timespec="seconds"),
        "list_id": list_id,
        "tags": [{"id": 1, "name": tag} for tag in row.custom_source.split("|") if tag],
    }
    if "gdpr" in list_id:
        member["marketing_permissions"] = [{**PERMISSION, "enabled": row.consent == "subscribed"}]
    return member


def _fields(member: dict, request) -> dict:
    wanted = [f.removeprefix("members.") for f in request.GET.get("fields", "").split(",") if f]
    return {k: v for k, v in member.items() if k in wanted} if wanted else member


@require_GET
def list_read(request, dc, list_id):
    """GET /3.0/lists/{list_id}."""
    _key_hash, refused = _key(request, dc)
    refused = refused or _list_missing(list_id)
    if refused:
        return refused
    return JsonResponse(
        {"id": list_id, "name": "Sandbox audience", "marketing_permissions": "gdpr" in list_id}
    )


@csrf_exempt
@require_http_methods(["GET", "POST"])
def members(request, dc, list_id):
    """GET lists the members (status, since_last_changed, count, offset); POST adds one."""
    key_hash, refused = _key(request, dc)
    refused = refused or _list_missing(list_id)
    if refused:
        return refused
    rows = SandboxCrmProfile.objects.filter(api_key_hash=key_hash, phone_number="").exclude(
        consent="forgotten"
    )
    if request.method == "POST":
        body, refused = _body(request)
        if refused:
            return refused
        email = str(body.get("email_address") or "")
        if rows.filter(email__iexact=email).exists():
            return _problem(
                400,
                "Member Exists",
                f"{email} is already a list member. Use PUT to insert or update list members.",
            )
        return _write(key_hash, list_id, email, body, new=True, field="status")
    if request.GET.get("status"):
        rows = rows.filter(consent=request.GET["status"])
    if request.GET.get("since_last_changed"):
        try:
            rows = rows.filter(updated__gt=datetime.fromisoformat(request.GET["since_last_changed"]))
        except ValueError:
            problem = [{"field": "since_last_changed", "message": "Please provide a valid date."}]
            return _problem(
                400, "Invalid Resource", "The resource submitted could not be validated.", problem
            )
    try:
        count = max(1, min(int(request.GET.get("count", "10")), 1000))
        offset = max(0, int(request.GET.get("offset", "0")))
    except ValueError:
        return _problem(400, "Invalid Resource", "The resource submitted could not be validated.")
    page = [_fields(_member(row, list_id), request) for row in rows.order_by("pk")[offset : offset + count]]
    if not rows.exists() and "gdpr" in list_id:
        # An audience with GDPR fields shows its permissions on its members; an empty one on a sample.
        page = [{"marketing_permissions": [{**PERMISSION, "enabled": False}]}]
    return JsonResponse({"members": page, "list_id": list_id, "total_items": rows.count()})


def _body(request) -> tuple[dict, JsonResponse | None]:
    try:
        body = json.loads(request.body)
        if isinstance(body, dict):
            return body, None
    except ValueError:
        pass
    return {}, _problem(400, "JSON Parse Exception", "We encountered an unspecified JSON parsing error.")


def _write(key_hash: str, list_id: str, email: str, body: dict, *, new: bool, field: str) -> JsonResponse:
    errors = []
    if not _EMAIL.match(email):
        return _problem(
            400, "Invalid Resource", f"{email} looks fake or invalid, please enter a real email address."
        )
    # A new member takes status_if_new when added by PUT, status when added by POST.
    status = (body.get(field) if new else None) or body.get("status")
    if new and status not in ("subscribed", "unsubscribed", "cleaned", "pending", "transactional"):
        errors.append({"field": field, "message": "Schema describes enum, NULL found instead"})
    opt = str(body.get("timestamp_opt") or "")
    if opt:
        try:
            datetime.strptime(opt + " +0000", "%Y-%m-%d %H:%M:%S %z")
        except ValueError:
            errors.append(
                {"field": "timestamp_opt", "message": "Data did not match the expected date format."}
            )
    for permission in body.get("marketing_permissions") or []:
        if (
            "gdpr" not in list_id
            or permission.get("marketing_permission_id") != PERMISSION["marketing_permission_id"]
        ):
            errors.append({"field": "marketing_permissions", "message": "Invalid marketing permission id."})
    if errors:
        return _problem(400, "Invalid Resource", "The resource submitted could not be validated.", errors)
    row, _created = SandboxCrmProfile.objects.update_or_create(
        api_key_hash=key_hash,
        phone_number="",
        email=email.lower(),
        defaults={"consent": status, "consented_at": opt, "updated": timezone.now()},
    )
    return JsonResponse(_member(row, list_id))


@csrf_exempt
@require_http_methods(["GET", "PUT"])
def member(request, dc, list_id, subscriber_hash):
    """GET reads a member; PUT adds or updates it (status_if_new when it is new)."""
    key_hash, refused = _key(request, dc)
    refused = refused or _list_missing(list_id)
    if refused:
        return refused
    rows = SandboxCrmProfile.objects.filter(api_key_hash=key_hash, phone_number="")
    found = next(
        (
            r
            for r in rows
            if hashlib.md5(r.email.encode(), usedforsecurity=False).hexdigest() == subscriber_hash
        ),
        None,
    )
    if request.method == "GET":
        if found is None or found.consent == "forgotten":
            return _problem(404, "Resource Not Found", "The requested resource could not be found.")
        return JsonResponse(_fields(_member(found, list_id), request))
    body, refused = _body(request)
    if refused:
        return refused
    email = str(body.get("email_address") or "")
    if hashlib.md5(email.strip().lower().encode(), usedforsecurity=False).hexdigest() != subscriber_hash:
        problem = [
            {"field": "email_address", "message": "The email address does not match the subscriber hash."}
        ]
        return _problem(400, "Invalid Resource", "The resource submitted could not be validated.", problem)
    if found is not None and found.consent == "forgotten":
        return _problem(
            400,
            "Forgotten Email Not Subscribed",
            f"{email} was permanently deleted and cannot be re-imported. "
            "The contact must re-subscribe to get back on the list.",
        )
    if (
        found is not None
        and found.consent in ("unsubscribed", "cleaned")
        and body.get("status") == "subscribed"
    ):
        return _problem(
            400,
            "Member In Compliance State",
            f"{email} is already a list member in compliance state due to unsubscribe, bounce, or compliance "
            "review and cannot be subscribed.",
        )
    if found is not None:
        body = {**body, "timestamp_opt": body.get("timestamp_opt") or found.consented_at}
    return _write(key_hash, list_id, email, body, new=found is None, field="status_if_new")


@csrf_exempt
@require_POST
def member_tags(request, dc, list_id, subscriber_hash):
    """POST …/members/{hash}/tags: 204, as Mailchimp answers."""
    key_hash, refused = _key(request, dc)
    refused = refused or _list_missing(list_id)
    if refused:
        return refused
    body, refused = _body(request)
    if refused:
        return refused
    for row in SandboxCrmProfile.objects.filter(api_key_hash=key_hash, phone_number=""):
        if hashlib.md5(row.email.encode(), usedforsecurity=False).hexdigest() == subscriber_hash:
            tags = [t for t in row.custom_source.split("|") if t]
            for tag in body.get("tags") or []:
                if tag.get("status") == "active" and tag.get("name") not in tags:
                    tags.append(str(tag.get("name"))[:100])
            SandboxCrmProfile.objects.filter(pk=row.pk).update(custom_source="|".join(tags)[:200])
            return HttpResponse(status=204)
    return _problem(404, "Resource Not Found", "The requested resource could not be found.")


@csrf_exempt
@require_POST
def webhooks(request, dc, list_id):
    """POST /lists/{list_id}/webhooks: the webhook, with an id."""
    _key_hash, refused = _key(request, dc)
    refused = refused or _list_missing(list_id)
    if refused:
        return refused
    body, refused = _body(request)
    if refused:
        return refused
    if not str(body.get("url", "")).startswith(("http://", "https://")):
        return _problem(400, "Invalid Resource", "The resource submitted could not be validated.",
                        [{"field": "url", "message": "This value should be a valid URL."}])  # fmt: skip
    return JsonResponse({"id": secrets.token_hex(5), "url": body["url"], "list_id": list_id,
                         "events": body.get("events", {}), "sources": body.get("sources", {})})  # fmt: skip


def _rows(api_key: str, email: str):
    return SandboxCrmProfile.objects.filter(
        api_key_hash=hashlib.sha256(api_key.encode()).hexdigest(), phone_number="", email=email.lower()
    )


def member_unsubscribe(*, api_key: str, email: str) -> int:
    """A person unsubscribed from a Mailchimp mail: the tester's (and the tests') way in."""
    return _rows(api_key, email).update(consent="unsubscribed", updated=timezone.now())


def member_forget(*, api_key: str, email: str) -> int:
    """The brand permanently deleted the member in Mailchimp."""
    return _rows(api_key, email).update(consent="forgotten", updated=timezone.now())
