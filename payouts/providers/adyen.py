"""Adyen's balance platform Transfers API (v4): bank transfers from the platform's balance account.

Built from Adyen's published OpenAPI specification (TransferService-v4, BalancePlatformTransfer
Notification-v4); tests/payouts/adyen/ keeps the parts the contract tests validate against. httpx
with the documented shapes rather than the `Adyen` package: the package's client has no transport
hook for the in-process sandbox bank, and the adapter needs three calls.

- POST /transfers, category bank, priority by rail, Idempotency-Key derived from the EndToEndId,
  reference = EndToEndId: a retry after a timeout is a replay at Adyen, never a second transfer.
- GET /transfers?reference=...: what Adyen knows of a payout whose answer was lost.
- GET /transfers/{id}: what Adyen says now of one transfer it took (the platform's fee, when no
  webhook said booked or failed in time).
- balancePlatform.transfer.created / .updated webhooks, HMAC-signed (HmacSignature header:
  base64 HMAC-SHA256 of the raw body, key given in hex); two keys are accepted while one rotates.
"""

import base64
import binascii
import hashlib
import hmac
import json
import re
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import quote

from django.conf import settings
from django.utils import timezone

from payouts.bank_accounts import BankAccount, Rail
from payouts.iso20022.text import ADDRESS_CHARSET, POSTAL_CHARSET, name_text, rail_text
from payouts.psp import PaymentOrder, PaymentStatus, PspError, adyen_api_base, http_request

# The rail's scheme -> Adyen's priority (payouts.models.payouts.PayoutScheme values).
PRIORITY = {
    "sepa_instant": "instant",
    "sepa": "regular",
    "fps": "fast",
    "ach": "regular",
    "swift": "crossBorder",
}

# Adyen's transfer statuses for an outgoing bank transfer, by what they mean for a payout.
SETTLED = frozenset({"booked", "credited"})
FAILED = frozenset({"refused", "rejected", "failed", "error", "cancelled", "expired"})
RETURNED = frozenset({"returned"})
# received, authorised, pendingApproval, pendingExecution, bookingPending, ... : still under way.

# Adyen's reason -> the ISO 20022 reason code the product shows and explains.
REASON_CODES = {
    "counterpartyAccountNotFound": "AC01",
    "invalidToAccount": "AC01",
    "counterpartyAccountClosed": "AC04",
    "counterpartyAccountBlocked": "AC06",
    "transactionNotPermitted": "AG01",
    "notEnoughBalance": "AM04",
    "amountLimitExceeded": "AM02",
    "duplicateTransmissionDetected": "AM05",
    "counterpartyBankTimedOut": "AB05",
    "counterpartyBankUnavailable": "AB05",
    "routeNotFound": "RC01",
    "counterpartyAddressRequired": "BE04",
    "refusedByCounterpartyBank": "MS03",
    "declinedByTransactionRule": "MS03",
    "error": "MS03",
    "unknown": "MS03",
}
# The ISO reason codes Adyen passes through from the counterparty bank (externalReason).
ISO_NAMESPACES = frozenset({"iso20022", "ISO20022", "ISO 20022"})

# What the sandbox answers with for each ISO code it is told to reject or return with.
ADYEN_REASON_FOR = {
    "AC01": "counterpartyAccountNotFound",
    "AC04": "counterpartyAccountClosed",
    "AC06": "counterpartyAccountBlocked",
    "AG01": "transactionNotPermitted",
    "AM04": "notEnoughBalance",
    "AM05": "duplicateTransmissionDetected",
    "AB05": "counterpartyBankTimedOut",
}


class AdyenRefused(PspError):
    """Adyen refused the request and made nothing (a 4xx answer): its errorCode and words, as its
    RestServiceError (RFC 7807: type, title, status, detail, errorCode, invalidFields) or, for a
    401, its ServiceError (errorCode, message) carries them."""

    def __init__(
        self, *, what: str, status: int, error_code: str, title: str, detail: str, invalid_fields=()
    ):
        self.status = status
        self.error_code = error_code
        self.title = title
        self.detail = detail
        self.invalid_fields = tuple(invalid_fields)  # (name, value, message) each
        fields = "; ".join(f"{name}: {message}" for name, _value, message in self.invalid_fields)
        words = " ".join(part for part in (title, detail, fields) if part)
        super().__init__(f"{what} refused: {status} {error_code} {words}"[:500])

    @property
    def payment_reason_code(self) -> str | None:
        """The ISO 20022 reason a payout is rejected with when Adyen will not make the transfer for
        what the request says (its invalid fields name what); None when the refusal is about us
        (our key or permissions: 401, 403) and says nothing of the payment."""
        if self.status in (401, 403) or self.status >= 500:
            return None
        names = " ".join(name for name, _value, _message in self.invalid_fields).lower()
        if "address" in names:
            return "BE04"
        if any(
            part in names for part in ("iban", "accountnumber", "accountidentification", "bic", "routing")
        ):
            return "AC01"
        if "accountholder" in names or "fullname" in names:
            return "NAME"
        # Refused for something it does not name: not to be sent as it is again, so the person is
        # asked for details that work (a code that marks them, not one that pays again at once).
        return "AG01"


class AdyenRateLimited(AdyenRefused):
    """429: Adyen asks us to wait `retry_after` seconds (its Retry-After header) before asking again;
    the request made nothing, so the same request with the same Idempotency-Key may go again."""

    def __init__(self, *, retry_after: int | None, **refusal):
        self.retry_after = retry_after
        super().__init__(**refusal)


def refusal(response, what: str) -> AdyenRefused:
    """Adyen's refusal of a request, typed, from its documented error bodies."""
    try:
        body = response.json()
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    invalid = [
        (str(item.get("name", "")), str(item.get("value", "")), str(item.get("message", "")))
        for item in body.get("invalidFields") or []
        if isinstance(item, dict)
    ]
    refusal = {
        "what": what,
        "status": response.status_code,
        "error_code": str(body.get("errorCode") or ""),
        "title": str(body.get("title") or body.get("errorType") or ""),
        "detail": str(body.get("detail") or body.get("message") or ("" if body else response.text[:200])),
        "invalid_fields": invalid,
    }
    if response.status_code == 429:
        retry_after = response.headers.get("Retry-After", "")
        return AdyenRateLimited(retry_after=int(retry_after) if retry_after.isdigit() else None, **refusal)
    return AdyenRefused(**refusal)


def idempotency_key(end_to_end_id: str) -> str:
    """The same for every attempt of one payout, so Adyen treats a retry as a replay."""
    return f"joyback-payout-{end_to_end_id}"


def account_identification(account: BankAccount) -> dict:
    """The payee's account in Adyen's accountIdentification: the type Adyen documents for its rail."""
    match account.rail:
        case Rail.SEPA:
            found = {"type": "iban", "iban": account.iban}
            return {**found, "bic": account.bic} if account.bic else found
        case Rail.UK_FPS:
            return {"type": "ukLocal", "accountNumber": account.account_number, "sortCode": account.sort_code}
        case Rail.US_ACH:
            return {
                "type": "usLocal",
                "accountNumber": account.account_number,
                "routingNumber": account.routing_number,
            }
        case Rail.SWIFT:
            return {"type": "numberAndBic", "accountNumber": account.account_number, "bic": account.bic}
    raise ValueError(f"no Adyen account identification for the {account.rail} rail")


# What Adyen documents in prose for a bank transfer (TransferInfo, PartyIdentification, Address)
# beyond what its schema enforces: referenceForBeneficiary takes letters and digits, 35 of them to an
# IBAN and 15 to any other account; a holder's name and an address line have their own sets.
BENEFICIARY_REFERENCE_MAX = {"iban": 35}
BENEFICIARY_REFERENCE_OTHER_MAX = 15
NAME_MAX = 140
DESCRIPTION_MAX = 140
ADDRESS_LINE_MAX = 70  # the ISO 20022 postal address's line, which Adyen hands on
# Priorities whose payee bank is abroad and wants the holder's address (Adyen refuses with
# counterpartyAddressRequired otherwise; its cross-border example carries one).
ADDRESS_PRIORITIES = frozenset({"crossBorder", "wire"})


class TransferNotBuildable(PspError):
    """The transfer cannot be sent as it stands (a name with no Latin spelling, an address the rail
    needs and the payee has not given): nothing left, and nothing was guessed."""

    def __init__(self, *, code: str, message: str):
        self.code = code
        super().__init__(message)


def beneficiary_reference(order: PaymentOrder, kind: str) -> str:
    """The reference the payee's statement shows, as long as the account's rail takes: the
    EndToEndId to an IBAN, the payout's own short reference elsewhere."""
    if kind in BENEFICIARY_REFERENCE_MAX:
        return order.end_to_end_id[: BENEFICIARY_REFERENCE_MAX[kind]]
    short = order.beneficiary_reference or derived_beneficiary_reference(order.end_to_end_id)
    return short[:BENEFICIARY_REFERENCE_OTHER_MAX]


def derived_beneficiary_reference(end_to_end_id: str) -> str:
    """A payout made before its short reference was stored: the same one the migration gave it."""
    return "JB" + hashlib.md5(end_to_end_id.encode(), usedforsecurity=False).hexdigest()[:13].upper()


def account_holder(order: PaymentOrder, priority: str) -> dict:
    name = name_text(order.creditor_name, NAME_MAX)
    if not name:
        raise TransferNotBuildable(
            code="name_not_latin",
            message=f"transfer {order.end_to_end_id}: the payee's name has no Latin spelling to send",
        )
    holder = {"fullName": name}
    if priority in ADDRESS_PRIORITIES or order.address:
        address = counterparty_address(order.address or {})
        if priority in ADDRESS_PRIORITIES and not address_complete(address):
            raise TransferNotBuildable(
                code="address_missing",
                message=f"transfer {order.end_to_end_id}: a cross-border payee's address is missing",
            )
        if address:
            holder["address"] = address
    return holder


def counterparty_address(address: dict) -> dict:
    """Our payee's address in Adyen's Address, each field in the set Adyen documents for it."""
    found = {
        "line1": rail_text(address.get("line1") or "", ADDRESS_LINE_MAX, ADDRESS_CHARSET),
        "line2": rail_text(address.get("line2") or "", ADDRESS_LINE_MAX, ADDRESS_CHARSET),
        "city": rail_text(address.get("city") or "", ADDRESS_LINE_MAX, ADDRESS_CHARSET),
        "postalCode": rail_text(address.get("postalCode") or "", 10, POSTAL_CHARSET),
        "stateOrProvince": rail_text(address.get("stateOrProvince") or "", 3, POSTAL_CHARSET).upper(),
        "country": (address.get("country") or "").upper()[:2],
    }
    return {key: value for key, value in found.items() if value}


def address_complete(address: dict) -> bool:
    """What a payee bank abroad needs: a street line, a city of 3 or more letters (Adyen's
    minLength) and a country; a state for the US and Canada, as Adyen documents."""
    needs_state = address.get("country") in ("US", "CA")
    return bool(
        address.get("line1")
        and len(address.get("city", "")) >= 3
        and len(address.get("country", "")) == 2
        and (address.get("stateOrProvince") or not needs_state)
    )


class PooledSourceRefused(PspError):
    """A live payout with no brand balance account to leave from: it would leave the platform's
    own balance account, paying one party with money the platform holds for others. Never sent."""


def transfer_source(order: PaymentOrder) -> str:
    """The balance account a payout leaves from: the brand's own. Test mode's play money leaves the
    sandbox's platform account (test only: the sandbox bank, never live money); a live payout
    without its brand's account is refused (fail closed: livemode unknown counts as live)."""
    if order.balance_account_id:
        return order.balance_account_id
    if order.livemode is False:
        return settings.ADYEN_BALANCE_ACCOUNT_ID
    raise PooledSourceRefused(
        f"payout {order.end_to_end_id} has no brand balance account to leave from; the platform's "
        "own balance account pays nobody's rewards"
    )


def transfer_request(order: PaymentOrder) -> dict:
    identification = account_identification(order.account)
    priority = PRIORITY[order.scheme]
    return {
        "amount": {"currency": order.currency, "value": order.amount},
        "balanceAccountId": transfer_source(order),
        "category": "bank",
        "priority": priority,
        "reference": order.end_to_end_id,
        "referenceForBeneficiary": beneficiary_reference(order, identification["type"]),
        "description": rail_text(order.remittance, DESCRIPTION_MAX),
        "counterparty": {
            "bankAccount": {
                "accountHolder": account_holder(order, priority),
                "accountIdentification": identification,
            }
        },
    }


def _headers(extra: dict | None = None) -> dict:
    return {"X-API-Key": settings.ADYEN_API_KEY, **(extra or {})}


def transfer_submit(order: PaymentOrder) -> PaymentStatus:
    """POST /transfers. Raises PspUnknown when the answer is lost: the caller must then query."""
    response = http_request(
        "POST",
        f"{adyen_api_base()}/transfers",
        json=transfer_request(order),
        headers=_headers({"Idempotency-Key": idempotency_key(order.end_to_end_id)}),
    )
    if response.status_code not in (200, 202):
        raise refusal(response, f"transfer {order.end_to_end_id}")
    return transfer_status(response.json())


def transfer_find(end_to_end_id: str, *, balance_account_id: str = "") -> PaymentStatus | None:
    """What Adyen knows of the transfer with this reference, sent from `balance_account_id` (the
    brand's own; the platform's when empty); None when it never received it."""
    now = timezone.now()
    response = http_request(
        "GET",
        f"{adyen_api_base()}/transfers",
        params={
            "balanceAccountId": balance_account_id or settings.ADYEN_BALANCE_ACCOUNT_ID,
            "reference": end_to_end_id,
            "category": "bank",
            # Adyen asks for a window; a payout is queried within days of its submission.
            "createdSince": (now - timedelta(days=settings.ADYEN_QUERY_DAYS)).isoformat(timespec="seconds"),
            "createdUntil": (now + timedelta(minutes=5)).isoformat(timespec="seconds"),
        },
        headers=_headers(),
    )
    if response.status_code != 200:
        raise refusal(response, f"transfers of {end_to_end_id}")
    found = [item for item in response.json().get("data", []) if item.get("reference") == end_to_end_id]
    if not found:
        return None
    # One transfer per Idempotency-Key; were there ever two, the latest tells the most.
    return transfer_status(
        max(found, key=lambda item: item.get("creationDate") or item.get("createdAt") or "")
    )


def reason_code(data: dict) -> str:
    external = data.get("externalReason") or {}
    if external.get("code") and external.get("namespace") in ISO_NAMESPACES:
        return str(external["code"])[:4]
    return REASON_CODES.get(data.get("reason") or "", "MS03")


def transfer_status(data: dict) -> PaymentStatus:
    """A transfer (the POST's answer, a query's item, a webhook's data) as an ISO 20022 status."""
    status = data.get("status") or ""
    if status in RETURNED:
        return PaymentStatus(
            status="ACSC", reason_code=reason_code(data), bank_reference=data["id"], returned=True
        )
    if status in SETTLED:
        return PaymentStatus(status="ACSC", bank_reference=data["id"])
    if status in FAILED:
        return PaymentStatus(status="RJCT", reason_code=reason_code(data), bank_reference=data["id"])
    return PaymentStatus(status="ACSP", bank_reference=data.get("id") or "", provider_status=status)


def signature(body: bytes, key_hex: str) -> str:
    return base64.b64encode(hmac.new(binascii.unhexlify(key_hex), body, hashlib.sha256).digest()).decode()


def webhook_verify(body: bytes, headers) -> bool:
    """True when the HmacSignature header matches the body under one of the configured keys."""
    given = headers.get("HmacSignature", "")
    if not given:
        return False
    for key in settings.ADYEN_HMAC_KEYS:
        try:
            expected = signature(body, key)
        except (binascii.Error, ValueError):
            continue
        if hmac.compare_digest(expected, given):
            return True
    return False


WEBHOOK_TYPES = frozenset({"balancePlatform.transfer.created", "balancePlatform.transfer.updated"})


def webhook_event_id(payload: dict) -> str:
    """A redelivery of the same webhook has the same transfer id and sequence number; an account
    holder's (balancePlatform.accountHolder.*, the same endpoint and HMAC keys) its id, type and
    timestamp."""
    data = payload["data"]
    if "id" not in data and (data.get("accountHolder") or {}).get("id"):
        # Two states of one account holder can share a timestamp (whole seconds): the state itself
        # tells them apart, so the second is not dropped as a redelivery of the first.
        state = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]
        return f"{data['accountHolder']['id']}:{payload['type']}:{payload.get('timestamp', '')}:{state}"[:100]
    return f"{data['id']}:{data.get('sequenceNumber', data.get('status'))}"[:100]


def webhook_transfer(payload: dict) -> tuple[str, PaymentStatus] | None:
    """(reference, status) of an outgoing bank transfer's webhook; None for any other transfer."""
    data = payload.get("data") or {}
    if payload.get("type") not in WEBHOOK_TYPES or data.get("category") != "bank":
        return None
    if data.get("direction", "outgoing") != "outgoing" or not data.get("reference"):
        return None
    return data["reference"], transfer_status(data)


# Internal transfers between two balance accounts of the platform (TransferService v4, category
# internal): the platform's fee, from a brand's balance account to the platform's.
INTERNAL_DESCRIPTION = re.compile(r"[^a-zA-Z0-9/\-?:().,'+ ]")


@dataclass(frozen=True)
class InternalTransfer:
    transfer_id: str
    status: str  # Adyen's: received, authorised, booked, refused, failed, ...
    reason: str = ""
    reference: str = ""  # the reference it was asked for with (names the attempt)

    @property
    def refused(self) -> bool:
        return self.status in FAILED


def internal_transfer_request(
    *, source: str, destination: str, amount: int, currency: str, reference: str, description: str
) -> dict:
    """POST /transfers for money between two balance accounts, as Adyen's example
    post-transfers-payout-to-balance-account has it; the description in the characters Adyen
    documents for it."""
    return {
        "amount": {"currency": currency, "value": amount},
        "balanceAccountId": source,
        "category": "internal",
        "counterparty": {"balanceAccountId": destination},
        "reference": reference[:80],
        "description": INTERNAL_DESCRIPTION.sub("", description)[:DESCRIPTION_MAX],
    }


def internal_transfer_key(reference: str, refusals: int) -> str:
    """The same for every attempt of one request (a lost answer is a replay at Adyen); a new one
    only for asking again after Adyen refused it."""
    return f"joyback-internal-{reference}-{refusals}"


def internal_transfer_submit(*, request: dict, key: str) -> InternalTransfer:
    """POST /transfers; PspUnknown when the answer is lost, AdyenRefused when Adyen made nothing."""
    response = http_request(
        "POST",
        f"{adyen_api_base()}/transfers",
        json=request,
        headers=_headers({"Idempotency-Key": key}),
    )
    if response.status_code not in (200, 202):
        raise refusal(response, f"internal transfer {request.get('reference')}")
    data = response.json()
    return InternalTransfer(
        transfer_id=str(data.get("id") or "")[:64],
        status=str(data.get("status") or "")[:40],
        reason=str(data.get("reason") or "")[:60],
    )


def transfer_get(*, transfer_id: str) -> InternalTransfer | None:
    """GET /transfers/{id}: Adyen's TransferData of one transfer, None when Adyen knows no transfer
    with that id (404; the spec documents 401, 403, 422 and 500, each raised as its refusal)."""
    response = http_request(
        "GET", f"{adyen_api_base()}/transfers/{quote(transfer_id, safe='')}", headers=_headers()
    )
    if response.status_code == 404:
        return None
    if response.status_code != 200:
        raise refusal(response, f"transfer {transfer_id}")
    data = response.json()
    return InternalTransfer(
        transfer_id=str(data.get("id") or transfer_id)[:64],
        status=str(data.get("status") or "")[:40],
        reason=str(data.get("reason") or "")[:60],
        reference=str(data.get("reference") or "")[:80],
    )
