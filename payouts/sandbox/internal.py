"""The sandbox's one handler of POST /transfers with category internal (TransferService v4): money
between two balance accounts of the platform, as both the platform's fee (a brand's account -> the
platform's) and a custody move (the platform's -> a brand's) ask for it.

As Adyen documents it: the request is checked against TransferInfo and the field rules Adyen's
descriptions state, and refused with Adyen's RestServiceError (its invalidFields naming each
field); the same Idempotency-Key again answers as the first time, and with another body is refused;
more than the paying account holds is a transfer with status refused and reason notEnoughBalance
(HTTP 202, as Adyen answers a transfer it took and refused), which moves nothing; otherwise the
sandbox books it at once, so its answer says booked (unless the paying account is set to leave its
transfers received: a provider that takes a transfer and never finishes it, until
internal_transfer_finish). Each status the transfer takes (received, authorised, booked; or
refused) goes out as a signed balancePlatform.transfer.created/updated
webhook with the funding ones (payouts.sandbox.funding.funding_webhooks_deliver), about the brand's
balance account.

The sandbox moves money between the platform's account and one brand's only: it has no reason to
move one brand's money to another's, and refuses it.
"""

import json
import re
import secrets

from django.conf import settings
from django.db import transaction
from django.http import JsonResponse

from payouts.models import SandboxBalanceAccount, SandboxFundingEvent, SandboxFundingTransfer
from payouts.sandbox.bank import adyen_error_response, capability_allowed, sandbox_balance

# Adyen's description of a transfer: at most 140 of [a-z] [A-Z] [0-9] / - ? : ( ) . , ' + and space.
DESCRIPTION_OK = re.compile(r"[a-zA-Z0-9/\-?:().,'+ ]{0,140}")
REFERENCE_MOST = 80
BOOKED_STATUSES = ("received", "authorised", "booked")


def _field(name: str, value, message: str) -> dict:
    return {"name": name, "value": "" if value is None else str(value), "message": message}


def internal_transfer_invalid(body) -> list[dict]:
    """Adyen's invalidFields for an internal transfer request: what TransferInfo requires and what
    its field descriptions forbid."""
    if not isinstance(body, dict):
        return [_field("body", "", "Must be a JSON object")]
    invalid = []
    amount = body.get("amount")
    if not isinstance(amount, dict):
        invalid.append(_field("amount", None, "Required field"))
    else:
        value, currency = amount.get("value"), amount.get("currency")
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            invalid.append(_field("amount.value", value, "Must be a whole number greater than 0"))
        if not (isinstance(currency, str) and re.fullmatch(r"[A-Z]{3}", currency)):
            invalid.append(_field("amount.currency", currency, "Must be a three-letter ISO 4217 code"))
    if not isinstance(body.get("balanceAccountId"), str) or not body.get("balanceAccountId"):
        invalid.append(_field("balanceAccountId", body.get("balanceAccountId"), "Required field"))
    counterparty = body.get("counterparty")
    if not isinstance(counterparty, dict) or not isinstance(counterparty.get("balanceAccountId"), str):
        invalid.append(
            _field(
                "counterparty.balanceAccountId",
                None,
                "Required for a transfer of category internal",
            )
        )
    elif set(counterparty) - {"balanceAccountId"}:
        invalid.append(
            _field(
                "counterparty", ",".join(sorted(counterparty)), "Only balanceAccountId for category internal"
            )
        )
    elif counterparty["balanceAccountId"] == body.get("balanceAccountId"):
        invalid.append(
            _field(
                "counterparty.balanceAccountId",
                counterparty["balanceAccountId"],
                "Must be another balance account",
            )
        )
    reference = body.get("reference", "")
    if not isinstance(reference, str) or len(reference) > REFERENCE_MOST:
        invalid.append(_field("reference", reference, f"At most {REFERENCE_MOST} characters"))
    description = body.get("description", "")
    if not isinstance(description, str) or not DESCRIPTION_OK.fullmatch(description):
        invalid.append(
            _field(
                "description", description, "At most 140 characters of a-z A-Z 0-9 / - ? : ( ) . , ' + space"
            )
        )
    return invalid


def _invalid_response(fields: list[dict]) -> JsonResponse:
    response = adyen_error_response(
        422, "30_112", "Invalid transfer information provided", "Invalid transfer details"
    )
    return JsonResponse({**json.loads(response.content), "invalidFields": fields}, status=422)


def _brand_side(source: str, destination: str) -> tuple[SandboxBalanceAccount | None, bool]:
    """The brand's balance account the transfer moves money on, and whether it pays (outgoing)."""
    platform = settings.ADYEN_BALANCE_ACCOUNT_ID
    if destination == platform:
        return SandboxBalanceAccount.objects.filter(account_id=source).first(), True
    if source == platform:
        return SandboxBalanceAccount.objects.filter(account_id=destination).first(), False
    return None, True


def internal_transfer(body, key: str | None) -> JsonResponse:
    """POST /transfers, category internal (see the module)."""
    if invalid := internal_transfer_invalid(body):
        return _invalid_response(invalid)
    source, destination = body["balanceAccountId"], body["counterparty"]["balanceAccountId"]
    value, currency = body["amount"]["value"], body["amount"]["currency"]
    account, outgoing = _brand_side(source, destination)
    if account is None:
        unknown = source if source != settings.ADYEN_BALANCE_ACCOUNT_ID else destination
        return adyen_error_response(
            422,
            "30_011",
            "Invalid balance account",
            f"Balance account {unknown} not found, or not one the platform moves money with",
        )
    if currency != account.currency:
        return _invalid_response(
            [_field("amount.currency", currency, f"The balance account holds {account.currency}")]
        )
    if outgoing and not capability_allowed(account, "sendToBalanceAccount"):
        return adyen_error_response(
            403, "00_403", "Forbidden", "The account holder is not allowed to send to balance accounts"
        )
    reference = body.get("reference", "")
    with transaction.atomic():
        # Two transfers from one account take turns, as Adyen's balance does.
        locked = SandboxBalanceAccount.objects.select_for_update().get(pk=account.pk)
        existing = SandboxFundingTransfer.objects.filter(idempotency_key=key).first() if key else None
        if existing is not None:
            if (existing.amount, existing.reference, existing.currency) != (value, reference, currency):
                return adyen_error_response(
                    422,
                    "00_422",
                    "Idempotency key reused",
                    "The Idempotency-Key was used for another request",
                )
            moved = existing
        else:
            moved = SandboxFundingTransfer.objects.create(
                transfer_id=("SBXIT" + secrets.token_hex(6).upper())[:16],
                account=locked,
                category="internal",
                direction="outgoing" if outgoing else "incoming",
                amount=value,
                currency=currency,
                counterparty_balance_account=destination if outgoing else source,
                reference=reference,
                idempotency_key=key or "",
            )
            # Adyen books nothing the paying account cannot cover: refused, notEnoughBalance.
            short = outgoing and sandbox_balance(locked) < value
            statuses = ("refused",) if short else BOOKED_STATUSES
            if outgoing and not short and locked.internal_stays_received:
                statuses = ("received",)  # taken, and left there (see SandboxBalanceAccount)
            for status in statuses:
                SandboxFundingEvent.objects.create(transfer=moved, status=status)
    status = moved.events.order_by("pk").values_list("status", flat=True).last()
    response = JsonResponse(internal_transfer_json(moved, status, body=body), status=202)
    response["Idempotency-Key"] = key or ""
    return response


def internal_transfer_detail(transfer_id: str) -> JsonResponse | None:
    """GET /transfers/{id} of an internal transfer: Adyen's TransferData as it stands now (its
    latest status, its sequence number); None when no internal transfer has that id."""
    moved = (
        SandboxFundingTransfer.objects.filter(transfer_id=transfer_id, category="internal")
        .select_related("account")
        .first()
    )
    if moved is None:
        return None
    statuses = list(moved.events.order_by("pk").values_list("status", flat=True))
    outgoing = moved.direction == "outgoing"
    destination = moved.counterparty_balance_account if outgoing else moved.account.account_id
    data = internal_transfer_json(
        moved,
        statuses[-1] if statuses else "received",
        body={"counterparty": {"balanceAccountId": destination}},
    )
    data.update(
        creationDate=moved.created_at.isoformat(timespec="seconds"),
        sequenceNumber=max(len(statuses), 1),
        type="internalTransfer",
    )
    return JsonResponse(data)


def internal_transfer_json(moved: SandboxFundingTransfer, status: str, *, body: dict) -> dict:
    """Adyen's Transfer object for the answer (post-transfers-payout-to-balance-account-202)."""
    platform = settings.ADYEN_BALANCE_ACCOUNT_ID
    outgoing = moved.direction == "outgoing"
    source = moved.account.account_id if outgoing else platform
    holder = moved.account.account_holder_id if outgoing else settings.ADYEN_ACCOUNT_HOLDER_ID
    data = {
        "id": moved.transfer_id,
        "accountHolder": {"id": holder or "AH00000000000000000JOYBACK"},
        "amount": {"currency": moved.currency, "value": moved.amount},
        "balanceAccount": {"id": source},
        "category": "internal",
        "counterparty": {"balanceAccountId": body["counterparty"]["balanceAccountId"]},
        "direction": "outgoing",
        "reason": "notEnoughBalance" if status in ("refused", "failed") else "approved",
        "reference": moved.reference,
        "status": status,
    }
    if body.get("description"):
        data["description"] = body["description"]
    return data


def internal_transfer_finish(*, transfer_id: str, status: str = "booked") -> None:
    """What the provider does at last with a transfer it left received: books it (authorised, then
    booked) or fails it (failed, notEnoughBalance); each status goes out as its webhook."""
    moved = SandboxFundingTransfer.objects.get(transfer_id=transfer_id, category="internal")
    for step in ("authorised", "booked") if status == "booked" else ("failed",):
        SandboxFundingEvent.objects.create(transfer=moved, status=step)
