"""The sandbox bank's onboarding, in Adyen's wire format: legal entities, account holders, the
hosted onboarding page and the account holder webhooks.

Legal Entity Management API (/sandbox/bank/lem/v4/): POST /legalEntities (type organization),
POST /legalEntities/{id}/onboardingLinks (a link to the hosted page below). Balance Platform API
(/sandbox/bank/bcl/v2/): POST /accountHolders (the capabilities asked for). Each POST with an
Idempotency-Key it has seen answers as the first time; an unknown legal entity is Adyen's 422.

Where a brand's verification goes is chosen by its legal name (the magic values, README lists them):

- a name with "Documents" in it needs documents first ("Upload a registration document", Adyen's
  remediating action 1_501, and its terms of service, 2_902), and is verified once they are given
  on the hosted page;
- a name with "Refused" in it needs documents first, then is refused (verificationStatus
  rejected) when they are given on the hosted page;
- any other is verified at once, every capability asked for allowed (as Adyen's test environment
  verifies valid test data).

legal_entity_decide is the sandbox control that moves one by hand (tests, the demo). Every change
goes out as a signed balancePlatform.accountHolder.updated webhook, as Adyen sends it, when the
sandbox's webhooks are next delivered (onboarding_webhooks_deliver, run with the funding ones).
"""

import json
import secrets
from urllib.parse import urlencode

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.http import Http404, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from payouts.models import SandboxLegalEntity
from payouts.models.sandbox import SandboxLegalEntityStatus as Status
from payouts.providers import adyen
from payouts.sandbox.bank import (
    adyen_error_response,
    sandbox_api_key_valid,
    sandbox_hmac_key,
    sandbox_open_check,
    webhook_client,
    webhook_url,
)

BALANCE_PLATFORM = "JOYBACK_SANDBOX"
# What the sandbox allows a verified account holder: every capability Adyen documents that
# JoyBack asks for (payouts.providers.adyen_onboarding.CAPABILITIES), and no other.
GRANTABLE = ("receiveFromThirdParty", "sendToThirdParty", "sendToBalanceAccount", "receiveFromBalanceAccount")
DOCUMENTS_ASKED = (
    ("1_501", "Upload a registration document", "2_8189", "'registrationDocument' was missing."),
    ("2_902", "Accept TOS", "2_902", "Terms Of Service forms are not accepted."),
)


def _id(prefix: str) -> str:
    return (prefix + secrets.token_hex(11).upper())[:25]


def _key(request) -> str | None:
    return request.headers.get("Idempotency-Key", "")[:64] or None


def _guarded(view):
    """Sandbox only, Adyen's API key, Adyen's error for a malformed body."""

    def wrapper(request, *args, **kwargs):
        sandbox_open_check(request)
        if not sandbox_api_key_valid(request):
            return adyen_error_response(401, "00_401", "Unauthorized", "X-API-Key missing or wrong")
        try:
            body = json.loads(request.body or b"{}")
            if not isinstance(body, dict):
                raise ValueError("the body is not a JSON object")
            return view(request, body, *args, **kwargs)
        except (ValueError, KeyError, TypeError) as error:
            return adyen_error_response(422, "30_112", "Invalid request", f"Malformed request: {error}")

    wrapper.__name__ = view.__name__
    return csrf_exempt(wrapper)


def _first_status(legal_name: str) -> str:
    named = legal_name.lower()
    return Status.DOCUMENTS if "documents" in named or "refused" in named else Status.VERIFIED


def _legal_entity_json(entity: SandboxLegalEntity) -> dict:
    organization = {"legalName": entity.legal_name, "registeredAddress": {"country": entity.country}}
    if entity.registration_number:
        organization["registrationNumber"] = entity.registration_number
    return {"id": entity.legal_entity_id, "type": "organization", "organization": organization}


@_guarded
@require_POST
def legal_entities(request, body):
    if body.get("type") != "organization":
        raise ValueError("the sandbox bank onboards organizations only")
    organization = body["organization"]
    legal_name = str(organization["legalName"])
    country = str(organization["registeredAddress"]["country"])
    if not legal_name.strip() or len(country) != 2:
        raise ValueError("legalName and a two-letter registeredAddress.country are required")
    key = _key(request)
    entity = SandboxLegalEntity.objects.filter(idempotency_key=key).first() if key else None
    if entity is None:
        entity = SandboxLegalEntity.objects.create(
            legal_entity_id=_id("LE"),
            legal_name=legal_name[:200],
            registration_number=str(organization.get("registrationNumber") or "")[:64],
            country=country.upper(),
            idempotency_key=key,
            status=_first_status(legal_name),
        )
    return JsonResponse(_legal_entity_json(entity))


@_guarded
@require_POST
def onboarding_links(request, body, legal_entity_id):
    entity = SandboxLegalEntity.objects.filter(legal_entity_id=legal_entity_id).first()
    if entity is None:
        return adyen_error_response(422, "30_011", "Invalid legal entity", "Legal entity not found")
    query = {"redirectUrl": str(body.get("redirectUrl") or ""), "locale": str(body.get("locale") or "en-US")}
    path = reverse("payouts:sandbox_onboarding_page", args=[entity.legal_entity_id])
    return JsonResponse({"url": f"{settings.SITE_URL}{path}?{urlencode(query)}"})


def _capabilities_json(entity: SandboxLegalEntity) -> dict:
    """Each capability asked for, as Adyen reports it for the entity's state."""
    found = {}
    for name in entity.capabilities:
        allowed = entity.status == Status.VERIFIED and name in GRANTABLE
        verification = {
            Status.VERIFIED: "valid" if allowed else "invalid",
            Status.REFUSED: "rejected",
            Status.PENDING: "pending",
            Status.DOCUMENTS: "invalid",
        }[entity.status]
        capability = {
            "enabled": True,
            "requested": True,
            "allowed": allowed,
            "verificationStatus": verification,
        }
        if entity.status == Status.DOCUMENTS:
            capability["problems"] = [
                {
                    "entity": {"id": entity.legal_entity_id, "type": "LegalEntity"},
                    "verificationErrors": [
                        {
                            "code": error_code,
                            "message": error_message,
                            "remediatingActions": [{"code": code, "message": message}],
                            "type": "dataMissing",
                        }
                        for code, message, error_code, error_message in DOCUMENTS_ASKED
                    ],
                }
            ]
        if entity.status == Status.REFUSED:
            capability["problems"] = [
                {
                    "entity": {"id": entity.legal_entity_id, "type": "LegalEntity"},
                    "verificationErrors": [
                        {
                            "code": "1_50",
                            "message": "Organization details couldn't be verified",
                            "type": "rejected",
                        }
                    ],
                }
            ]
        found[name] = capability
    return found


def account_holder_json(entity: SandboxLegalEntity) -> dict:
    return {
        "balancePlatform": BALANCE_PLATFORM,
        "id": entity.account_holder_id,
        "legalEntityId": entity.legal_entity_id,
        "reference": entity.account_holder_reference,
        "capabilities": _capabilities_json(entity),
        "status": "active",
    }


@_guarded
@require_POST
def account_holders(request, body):
    key = _key(request)
    entity = SandboxLegalEntity.objects.filter(legal_entity_id=str(body["legalEntityId"])).first()
    if entity is None:
        return adyen_error_response(422, "30_011", "Invalid legal entity", "Legal entity not found")
    if entity.account_holder_id:
        if key and entity.account_holder_key == key:
            return JsonResponse(account_holder_json(entity))
        return adyen_error_response(
            422, "30_113", "Not allowed", "The legal entity has an account holder already"
        )
    requested = [
        name for name, value in (body.get("capabilities") or {}).items() if (value or {}).get("requested")
    ]
    with transaction.atomic():
        locked = SandboxLegalEntity.objects.select_for_update().get(pk=entity.pk)
        if not locked.account_holder_id:
            locked.account_holder_id = _id("AH")
            locked.account_holder_key = key
            locked.account_holder_reference = str(body.get("reference") or "")[:150]
            locked.capabilities = requested
            # The webhook of its first state goes out, as Adyen sends one after the account holder
            # is made and each time a verification moves.
            locked.version += 1
            locked.updated_at = timezone.now()
            locked.save()
    return JsonResponse(account_holder_json(locked))


def legal_entity_decide(*, legal_entity_id: str, status: str) -> SandboxLegalEntity:
    """The sandbox control: move a legal entity's verification to `status` (documents, pending,
    verified, refused); its account holder's webhook goes out with the next delivery."""
    if status not in Status.values:
        raise ValueError(f"no sandbox verification status {status!r}")
    with transaction.atomic():
        entity = SandboxLegalEntity.objects.select_for_update().get(legal_entity_id=legal_entity_id)
        if entity.status != status:
            entity.status = status
            entity.version += 1
            entity.updated_at = timezone.now()
            entity.save(update_fields=["status", "version", "updated_at"])
    return entity


def documents_give(*, legal_entity_id: str) -> SandboxLegalEntity:
    """What the hosted page does when the brand gives the documents asked: verified, or refused
    for a legal name that says so."""
    entity = SandboxLegalEntity.objects.get(legal_entity_id=legal_entity_id)
    if entity.status != Status.DOCUMENTS:
        return entity
    refused = "refused" in entity.legal_name.lower()
    return legal_entity_decide(
        legal_entity_id=legal_entity_id, status=Status.REFUSED if refused else Status.VERIFIED
    )


@require_http_methods(["GET", "POST"])
def onboarding_page(request, legal_entity_id):
    """The hosted onboarding page, as the sandbox's Adyen shows it: what is asked, a file to give,
    and back to where the brand came from."""
    sandbox_open_check(request)
    entity = SandboxLegalEntity.objects.filter(legal_entity_id=legal_entity_id).first()
    if entity is None:
        raise Http404("No such legal entity")
    back = request.GET.get("redirectUrl") or ""
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}, require_https=False):
        back = ""
    if request.method == "POST":
        if not request.FILES.get("document"):
            return render(
                request,
                "sandbox/adyen_onboarding.html",
                {
                    "entity": entity,
                    "asked": DOCUMENTS_ASKED,
                    "error": "Choose the document to upload.",
                    "back": back,
                },
                status=400,
            )
        documents_give(legal_entity_id=legal_entity_id)
        return HttpResponseRedirect(back or request.path)
    return render(
        request, "sandbox/adyen_onboarding.html", {"entity": entity, "asked": DOCUMENTS_ASKED, "back": back}
    )


def _webhook(entity: SandboxLegalEntity) -> dict:
    return {
        "data": {"balancePlatform": BALANCE_PLATFORM, "accountHolder": account_holder_json(entity)},
        "environment": "test",
        "timestamp": entity.updated_at.isoformat(timespec="seconds"),
        "type": "balancePlatform.accountHolder.updated",
    }


def onboarding_webhooks_deliver() -> int:
    """Each account holder's news not sent yet, as a signed webhook (at least once)."""
    sent = 0
    pending = SandboxLegalEntity.objects.exclude(account_holder_id=None).filter(version__gt=F("sent_version"))
    for entity in pending.order_by("pk"):
        raw = json.dumps(_webhook(entity)).encode()
        response = webhook_client().post(
            webhook_url(),
            content=raw,
            headers={
                "Content-Type": "application/json",
                "HmacSignature": adyen.signature(raw, sandbox_hmac_key()),
            },
        )
        if response.status_code >= 300:
            raise RuntimeError(f"webhook refused: {response.status_code} {response.text[:200]}")
        SandboxLegalEntity.objects.filter(pk=entity.pk, sent_version__lt=entity.version).update(
            sent_version=entity.version
        )
        sent += 1
    return sent
