"""The sandbox bank: a PSP inside the app for `make run` and the tests.

It speaks Adyen's balance platform wire format to payouts/providers/adyen.py (POST and GET
/btl/v4/transfers with X-API-Key and Idempotency-Key, and balancePlatform.transfer.created/updated
webhooks signed with an HMAC key, sent at least once by webhooks_deliver), the bank's own
Verification of Payee and pain.001 file channel, and issues the ISO 20022 messages a bank would
(pain.002 status reports, camt.054 notifications) for reconciliation to import.

What it does with a payment is chosen per account: a SandboxBankAccount row set in the admin, or
else the account number's last four digits (the magic numbers in MAGIC_SUFFIXES; README lists
IBANs that end in them). Every other account settles at once and its holder's name matches.
"""

import json
import re
import secrets
from datetime import timedelta
from difflib import SequenceMatcher

from django.conf import settings
from django.db import transaction
from django.http import Http404, HttpResponse, JsonResponse
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from joyback.money import from_major
from payouts import sql
from payouts.iso20022.pain002 import pain002_xml
from payouts.iso20022.types import SchemaError
from payouts.iso20022.validate import namespace, xsd_parse
from payouts.models import (
    PspFeedCursor,
    SandboxBalanceAccount,
    SandboxBankAccount,
    SandboxBankEvent,
    SandboxBankMessage,
    SandboxBankPayment,
    SandboxFundingEvent,
    SandboxLegalEntity,
)
from payouts.models.payees import VopResult
from payouts.models.sandbox import SandboxLegalEntityStatus, SandboxOutcome
from payouts.providers import adyen
from payouts.psp import psp_client, routed_for
from payouts.sandbox.files import message_id, msg_id_of, notification_issue, notification_message
from payouts.sandbox.transport import LOST_ANSWER_HEADER

MAGIC_SUFFIXES = {
    "9001": SandboxOutcome.REJECT_AC01,
    "9004": SandboxOutcome.REJECT_AC04,
    "9006": SandboxOutcome.REJECT_AC06,
    "9011": SandboxOutcome.REJECT_AG01,
    "9014": SandboxOutcome.REJECT_AM04,
    "9015": SandboxOutcome.REJECT_AM05,
    "9033": SandboxOutcome.REJECT_MS03,
    "9055": SandboxOutcome.REJECT_AB05,
    "9101": SandboxOutcome.RETURN_AC01,
    "9104": SandboxOutcome.RETURN_AC04,
    "9107": SandboxOutcome.RETURN_MD07,
    "9200": SandboxOutcome.TIMEOUT,
    "9300": SandboxOutcome.PENDING,
}
# The payee's bank not answering within SEPA Instant's seconds: a batch transfer gets there.
INSTANT_ONLY_OUTCOMES = frozenset({SandboxOutcome.REJECT_AB05})
MAGIC_VOP_SUFFIXES = {
    "9401": VopResult.CLOSE_MATCH,
    "9402": VopResult.NO_MATCH,
    "9403": VopResult.NOT_POSSIBLE,
}
# An account whose webhooks arrive each twice and newest first, as a provider's retries can.
CHAOS_SUFFIX = "9500"
# Schemes that settle later than they are accepted, as ACH and SWIFT do.
DEFERRED_SCHEMES = {"ach", "swift", "sepa"}


def outcome_for(key: str) -> str:
    chosen = SandboxBankAccount.objects.filter(account=key).values_list("outcome", flat=True).first()
    return _outcome(key, chosen)


def _outcome(key: str, chosen: str | None) -> str:
    """The tester's choice for the account (SandboxBankAccount.outcome, read by the caller), else
    what its last digits say."""
    if chosen:
        return chosen
    return MAGIC_SUFFIXES.get(key[-4:], SandboxOutcome.SETTLE)


def vop_answer(*, iban: str, name: str) -> tuple[str, str]:
    key = iban.replace(" ", "").upper()
    chosen = SandboxBankAccount.objects.filter(account=key).first()
    if chosen and chosen.vop_result:
        return chosen.vop_result, chosen.holder_name
    if chosen and chosen.holder_name:
        return _name_compare(name, chosen.holder_name), chosen.holder_name
    magic = MAGIC_VOP_SUFFIXES.get(key[-4:])
    if magic == VopResult.CLOSE_MATCH:
        return magic, _close_variant(name)
    return magic or VopResult.MATCH, ""


def _name_compare(entered: str, holder: str) -> str:
    def plain(value):
        return " ".join(value.casefold().split())

    if plain(entered) == plain(holder):
        return VopResult.MATCH
    return (
        VopResult.CLOSE_MATCH
        if SequenceMatcher(None, plain(entered), plain(holder)).ratio() > 0.8
        else (VopResult.NO_MATCH)
    )


def _close_variant(name: str) -> str:
    words = name.split()
    if len(words) > 1:
        return " ".join([*words[:-1], words[-1].upper()]) + " JR"
    return f"{name} JR"


def _authorised(request) -> bool:
    return request.headers.get("Authorization", "") == f"Bearer {settings.PSP_API_KEY}"


def sandbox_api_key_valid(request) -> bool:
    return request.headers.get("X-API-Key", "") == settings.ADYEN_API_KEY


def _refuse(status: int, code: str, message: str) -> JsonResponse:
    return JsonResponse({"error": {"code": code, "message": message}}, status=status)


def adyen_error_response(status: int, code: str, title: str, detail: str) -> JsonResponse:
    """Adyen's RestServiceError (RFC 7807 problem details)."""
    return JsonResponse(
        {
            "type": f"https://docs.adyen.com/errors/{code}",
            "title": title,
            "status": status,
            "detail": detail,
            "errorCode": code,
        },
        status=status,
    )


# Adyen's refusals on demand, as Adyen's and Stripe's test values do: a transfer of one of these
# amounts (minor units), or to a payee named "Sandbox error <status>", is answered with that error
# and makes nothing (README lists them).
MAGIC_ERROR_AMOUNTS = {4_01: 401, 4_03: 403, 4_22: 422, 4_29: 429, 5_03: 500, 5_04: 504}
MAGIC_ERROR_NAME = re.compile(r"sandbox error (\d{3})", re.IGNORECASE)
RETRY_AFTER_SECONDS = 30


def magic_error(body: dict) -> int | None:
    amount = (body.get("amount") or {}).get("value")
    holder = ((body.get("counterparty") or {}).get("bankAccount") or {}).get("accountHolder") or {}
    named = MAGIC_ERROR_NAME.search(str(holder.get("fullName") or ""))
    status = int(named.group(1)) if named else MAGIC_ERROR_AMOUNTS.get(amount)
    return status if status in set(MAGIC_ERROR_AMOUNTS.values()) else None


def magic_error_response(status: int, body: dict) -> JsonResponse:
    """The error Adyen documents for `status`, in its shape for that status."""
    if status == 401:
        # The authentication layer answers with Adyen's ServiceError, not a RestServiceError.
        return JsonResponse(
            {
                "status": 401,
                "errorCode": "000",
                "message": "HTTP Status Response - Unauthorized",
                "errorType": "security",
            },
            status=401,
        )
    if status == 403:
        return adyen_error_response(
            403, "00_403", "Forbidden", "Not allowed to make transfers from this balance account"
        )
    if status == 422:
        holder = body["counterparty"]["bankAccount"]["accountHolder"]
        response = adyen_error_response(
            422, "30_112", "Invalid transfer information provided", "Invalid counterparty details"
        )
        problem = json.loads(response.content)
        problem["invalidFields"] = [
            {
                "name": "counterparty.bankAccount.accountHolder.fullName",
                "value": str(holder.get("fullName", "")),
                "message": "Contains characters that are not supported",
            }
        ]
        return JsonResponse(problem, status=422)
    if status == 429:
        response = adyen_error_response(429, "00_429", "Too Many Requests", "Rate limit exceeded")
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
    response = adyen_error_response(500, "00_500", "Internal Server Error", "Try again later")
    if status == 504:
        response[LOST_ANSWER_HEADER] = "1"  # no answer at all: the caller's read times out
    return response


# What Adyen's field descriptions document beyond its schema, refused here as Adyen refuses it.
_REFERENCE_OK = re.compile(r"[a-zA-Z0-9]*")
_FULL_NAME_OK = re.compile(r"[a-zA-Z0-9,.;:\-\u2014/\\+&!?@()\"' ]*")


def transfer_invalid_fields(body: dict) -> list[dict]:
    """Adyen's invalidFields for what its descriptions forbid: a beneficiary reference too long for
    the account or not letters and digits, a holder's name outside its set, a cross-border transfer
    without the holder's address."""
    invalid = []
    bank_account = body["counterparty"]["bankAccount"]
    kind = bank_account["accountIdentification"]["type"]
    reference = str(body.get("referenceForBeneficiary") or "")
    longest = 35 if kind == "iban" else 15
    if len(reference) > longest or not _REFERENCE_OK.fullmatch(reference):
        invalid.append(
            {
                "name": "referenceForBeneficiary",
                "value": reference,
                "message": f"Must be at most {longest} alphanumeric characters for a {kind} account",
            }
        )
    holder = bank_account.get("accountHolder") or {}
    if not _FULL_NAME_OK.fullmatch(str(holder.get("fullName") or "")):
        invalid.append(
            {
                "name": "counterparty.bankAccount.accountHolder.fullName",
                "value": str(holder.get("fullName")),
                "message": "Contains characters that are not supported",
            }
        )
    if body.get("priority") in ("crossBorder", "wire") and not holder.get("address"):
        invalid.append(
            {
                "name": "counterparty.bankAccount.accountHolder.address",
                "value": "",
                "message": "Required for cross-border transfers",
            }
        )
    return invalid


ADYEN_STATUS = {"ACSP": "authorised", "ACSC": "booked", "RJCT": "failed"}
PRIORITY_SCHEME = {"instant": "sepa_instant", "fast": "fps", "crossBorder": "swift", "wire": "swift"}


def _scheme(body: dict) -> str:
    priority = body.get("priority")
    if priority == "regular":
        return "ach" if body["amount"]["currency"] == "USD" else "sepa"
    return PRIORITY_SCHEME[priority]


def account_key_adyen(identification: dict) -> str:
    kind = identification["type"]
    if kind == "iban":
        return identification["iban"].replace(" ", "").upper()
    if kind == "ukLocal":
        return f"GB:{identification['sortCode']}:{identification['accountNumber']}"
    if kind == "usLocal":
        return f"US:{identification['routingNumber']}:{identification['accountNumber']}"
    if kind == "numberAndBic":
        return f"SWIFT:{identification['bic']}:{identification['accountNumber']}"
    raise ValueError(f"accountIdentification type {kind} is not served by the sandbox bank")


def transfer_json(payment: SandboxBankPayment, status: str = "") -> dict:
    """A sandbox payment as Adyen's Transfer object."""
    status = status or ("returned" if payment.returned_at else ADYEN_STATUS[payment.status])
    data = {
        "id": payment.bank_reference,
        "accountHolder": {"id": _holder_of(payment)},
        "balanceAccount": {"id": payment.balance_account_id or settings.ADYEN_BALANCE_ACCOUNT_ID},
        "amount": {"currency": payment.currency, "value": payment.amount},
        "category": "bank",
        "categoryData": {"type": "bank", "priority": _priority(payment.scheme)},
        "counterparty": {
            "bankAccount": {
                "accountHolder": {"fullName": payment.creditor_name},
                "accountIdentification": _identification(payment.account),
            }
        },
        "creationDate": payment.received_at.isoformat(timespec="seconds"),
        "direction": "outgoing",
        "reference": payment.end_to_end_id,
        "status": status,
        "type": "bankTransfer",
    }
    reason = _return_reason(payment) if status == "returned" else payment.reason_code
    if status in ("failed", "returned"):
        data["reason"] = adyen.ADYEN_REASON_FOR.get(reason, "refusedByCounterpartyBank")
        # The counterparty bank's own code, as Adyen passes it on.
        data["externalReason"] = {"code": reason or "MS03", "namespace": "ISO20022"}
    else:
        data["reason"] = "approved"
    return data


def _holder_of(payment: SandboxBankPayment) -> str:
    if payment.balance_account_id:
        found = SandboxBalanceAccount.objects.filter(account_id=payment.balance_account_id).first()
        if found is not None:
            return found.account_holder_id
    return settings.ADYEN_ACCOUNT_HOLDER_ID or "AH00000000000000000JOYBACK"


def capability_allowed(account: SandboxBalanceAccount, capability: str) -> bool:
    """Whether the balance account's holder may use the capability: the platform's own holder
    may; a brand's only once its legal entity is verified (payouts.sandbox.onboarding)."""
    entity = SandboxLegalEntity.objects.filter(account_holder_id=account.account_holder_id).first()
    if entity is None:
        return account.account_holder_id == settings.ADYEN_ACCOUNT_HOLDER_ID
    return entity.status == SandboxLegalEntityStatus.VERIFIED and capability in entity.capabilities


def funding_event_signed(transfer, status: str) -> int:
    """A funding event's effect on its balance account (minor units)."""
    if transfer.direction == "incoming":
        return transfer.amount if status == "booked" else -transfer.amount if status == "returned" else 0
    return -transfer.amount if status == "booked" else 0


def sandbox_balance(account: SandboxBalanceAccount) -> int:
    """What is on a balance account: what arrived on its virtual IBAN (and was swept, for an old
    account), less the payouts that left it and did not come back."""
    events = SandboxFundingEvent.objects.filter(transfer__account=account).select_related("transfer")
    funded = sum(funding_event_signed(event.transfer, event.status) for event in events)
    paid = SandboxBankPayment.objects.filter(
        balance_account_id=account.account_id, status="ACSC", returned_at__isnull=True
    ).values_list("amount", flat=True)
    return funded - sum(paid)


def _identification(key: str) -> dict:
    """account_key_adyen's key back as Adyen's accountIdentification."""
    kind, _sep, rest = key.partition(":")
    if kind == "GB":
        sort_code, account_number = rest.split(":")
        return {"type": "ukLocal", "sortCode": sort_code, "accountNumber": account_number}
    if kind == "US":
        routing_number, account_number = rest.split(":")
        return {"type": "usLocal", "routingNumber": routing_number, "accountNumber": account_number}
    if kind == "SWIFT":
        bic, account_number = rest.split(":")
        return {"type": "numberAndBic", "bic": bic, "accountNumber": account_number}
    return {"type": "iban", "iban": key}


def _priority(scheme: str) -> str:
    return {"sepa_instant": "instant", "fps": "fast", "swift": "crossBorder"}.get(scheme, "regular")


def sandbox_open_check(request):
    """Open in the sandbox; elsewhere only in-process, to the payouts of test data (the loopback
    transport marks its requests: nothing from the network is marked)."""
    if not (settings.SANDBOX or getattr(request, "loopback", False)):
        raise Http404("The sandbox bank is off")


@csrf_exempt
def transfers(request):
    """POST /transfers (a bank transfer; the same Idempotency-Key again is a replay) and GET
    /transfers?reference= (what the bank has for a reference)."""
    sandbox_open_check(request)
    if not sandbox_api_key_valid(request):
        return adyen_error_response(401, "00_401", "Unauthorized", "X-API-Key missing or wrong")
    if request.method == "GET":
        return _transfers_list(request)
    if request.method != "POST":
        return adyen_error_response(405, "00_405", "Method not allowed", "GET or POST")
    key = request.headers.get("Idempotency-Key", "")[:64] or None
    try:
        body = json.loads(request.body)
        # Category internal is the balance platform's (payouts.sandbox.internal), routed before this.
        if body.get("category") != "bank":
            raise ValueError("the sandbox bank makes bank transfers only")
        source = str(body.get("balanceAccountId") or "")
        bank_account = body["counterparty"]["bankAccount"]
        order = {
            "end_to_end_id": str(body["reference"])[:35],
            "scheme": _scheme(body),
            "amount": int(body["amount"]["value"]),
            "currency": str(body["amount"]["currency"]),
            "creditor_name": str(bank_account["accountHolder"]["fullName"])[:140],
            "account": account_key_adyen(bank_account["accountIdentification"]),
        }
        # The source account, an earlier payment of this key and the tester's outcome for the
        # account, read at once: one statement where each was one (every transfer asks all three).
        brand_account_pk, existing_pk, chosen = sql.sandbox_transfer_read(
            balance_account_id=source, idempotency_key=key, account=order["account"]
        )
        if source != settings.ADYEN_BALANCE_ACCOUNT_ID and brand_account_pk is None:
            raise ValueError("balanceAccountId is no balance account of this platform")
    except (ValueError, KeyError, TypeError) as error:
        return adyen_error_response(
            422, "30_112", "Invalid transfer information", f"Malformed transfer: {error}"
        )
    brand_account = SandboxBalanceAccount.objects.get(pk=brand_account_pk) if brand_account_pk else None
    if (error := magic_error(body)) is not None:
        return magic_error_response(error, body)
    if invalid := transfer_invalid_fields(body):
        response = adyen_error_response(
            422, "30_112", "Invalid transfer information provided", "Invalid transfer details"
        )
        return JsonResponse({**json.loads(response.content), "invalidFields": invalid}, status=422)
    existing = SandboxBankPayment.objects.get(pk=existing_pk) if key and existing_pk else None
    if existing is not None:
        if existing.end_to_end_id != order["end_to_end_id"] or existing.amount != order["amount"]:
            return adyen_error_response(
                422, "00_422", "Idempotency key reused", "The Idempotency-Key was used for another request"
            )
        payment = existing
    elif brand_account is not None and not capability_allowed(brand_account, "sendToThirdParty"):
        # Adyen refuses a transfer from an account holder not allowed to pay third parties.
        return adyen_error_response(
            403, "00_403", "Forbidden", "The account holder is not allowed to send to third parties"
        )
    elif brand_account is not None:
        with transaction.atomic():
            # Two transfers from one account take turns, as Adyen's balance does.
            SandboxBalanceAccount.objects.select_for_update().filter(pk=brand_account.pk).first()
            short = sandbox_balance(brand_account) < order["amount"]
            payment = payment_receive(
                idempotency_key=key,
                balance_account_id=brand_account.account_id,
                # Adyen books nothing it cannot cover: the transfer fails with notEnoughBalance.
                outcome_override=SandboxOutcome.REJECT_AM04 if short else _outcome(order["account"], chosen),
                **order,
            )
    else:
        payment = payment_receive(
            idempotency_key=key, outcome_override=_outcome(order["account"], chosen), **order
        )
    # The chaos account's answer is Adyen's usual first word; its booking comes by webhook only.
    chaos = payment.account[-4:] == CHAOS_SUFFIX and payment.status == "ACSC"
    response = JsonResponse(transfer_json(payment, status="authorised" if chaos else ""), status=202)
    response["Idempotency-Key"] = key or ""
    if payment.outcome == SandboxOutcome.TIMEOUT and existing is None:
        response[LOST_ANSWER_HEADER] = "1"
    return response


def _transfers_list(request) -> JsonResponse:
    reference = request.GET.get("reference", "")
    found = SandboxBankPayment.objects.filter(end_to_end_id=reference, msg_id="").order_by("pk")
    data = []
    for payment in found:
        _as_time_passes(payment)
        data.append(transfer_json(payment))
    return JsonResponse({"data": data, "_links": {}})


def _as_time_passes(payment: SandboxBankPayment) -> None:
    """A deferred transfer books when it is asked about; returns whose day came are sent."""
    if payment.status == "ACSP":
        payment_settle(payment=payment)
    returns_due()
    payment.refresh_from_db()


@require_GET
def transfer_detail(request, transfer_id):
    sandbox_open_check(request)
    if not sandbox_api_key_valid(request):
        return adyen_error_response(401, "00_401", "Unauthorized", "X-API-Key missing or wrong")
    payment = SandboxBankPayment.objects.filter(bank_reference=transfer_id).first()
    if payment is None:
        return adyen_error_response(404, "00_404", "Not found", "No transfer with this id")
    _as_time_passes(payment)
    return JsonResponse(transfer_json(payment))


def payment_receive(
    *,
    end_to_end_id,
    scheme,
    amount,
    currency,
    creditor_name,
    account,
    msg_id="",
    idempotency_key=None,
    balance_account_id="",
    outcome_override=None,
) -> SandboxBankPayment:
    """Book one incoming order as the bank would; each status it takes becomes a webhook."""
    outcome = outcome_override or outcome_for(account)
    if outcome in INSTANT_ONLY_OUTCOMES and scheme != "sepa_instant":
        outcome = SandboxOutcome.SETTLE  # a batch transfer has the day to reach the payee's bank
    now = timezone.now()
    status, reason, settled_at, return_due_at = "ACSC", "", now, None
    if outcome.startswith("reject_"):
        status, reason, settled_at = "RJCT", outcome.removeprefix("reject_"), None
    elif outcome == SandboxOutcome.PENDING or scheme in DEFERRED_SCHEMES:
        status, settled_at = "ACSP", None
    elif outcome.startswith("return_"):
        return_due_at = now + timedelta(seconds=settings.SANDBOX_BANK_RETURN_AFTER_SECONDS)
    payment = SandboxBankPayment(
        end_to_end_id=end_to_end_id,
        scheme=scheme,
        amount=amount,
        currency=currency,
        creditor_name=creditor_name,
        account=account,
        outcome=outcome,
        status=status,
        reason_code=reason,
        bank_reference="SBX" + secrets.token_hex(12).upper(),
        msg_id=msg_id,
        received_at=now,
        settled_at=settled_at,
        return_due_at=return_due_at,
        idempotency_key=idempotency_key,
        balance_account_id=balance_account_id,
    )
    events = []
    if status == "ACSP" or account[-4:] == CHAOS_SUFFIX:
        events.append(("authorised", ""))
    if status != "ACSP":
        events.append(("booked" if status == "ACSC" else "failed", reason))
    message = notification_message(payment=payment) if status == "ACSC" else None
    # The payment, its events and its camt.054 in one statement (one transaction by itself).
    payment.pk = sql.sandbox_payment_book(payment=payment, events=events, message=message)
    payment._state.adding = False
    return payment


def _event_add(payment: SandboxBankPayment, kind: str, reason: str = "") -> None:
    SandboxBankEvent.objects.create(payment=payment, kind=kind, reason_code=reason)


def _return_reason(payment: SandboxBankPayment) -> str:
    return payment.outcome.removeprefix("return_") if payment.outcome.startswith("return_") else ""


def returns_due() -> int:
    """Returns whose day has come: the payee's bank sends the money back."""
    returned = 0
    now = timezone.now()
    for payment in SandboxBankPayment.objects.filter(return_due_at__lte=now, returned_at__isnull=True):
        with transaction.atomic():
            if SandboxBankPayment.objects.filter(pk=payment.pk, returned_at__isnull=True).update(
                returned_at=now
            ):
                _event_add(payment, "returned", _return_reason(payment))
                # The money back on the platform's account: the bank reports it like any booking.
                notification_issue(payment=payment, returned=True, reason_code=_return_reason(payment))
                returned += 1
    return returned


def payment_return(*, payment: SandboxBankPayment, reason_code: str) -> None:
    """A tester sends a settled payment back (from the admin), as the payee's bank would."""
    SandboxBankPayment.objects.filter(pk=payment.pk, status="ACSC", returned_at__isnull=True).update(
        outcome=f"return_{reason_code}", return_due_at=timezone.now()
    )
    returns_due()


def payment_settle(*, payment: SandboxBankPayment) -> None:
    with transaction.atomic():
        if SandboxBankPayment.objects.filter(pk=payment.pk, status="ACSP").update(
            status="ACSC", settled_at=timezone.now()
        ):
            payment.refresh_from_db()
            _event_add(payment, "booked")
            notification_issue(payment=payment)


@csrf_exempt
@require_POST
def payee_verifications(request):
    sandbox_open_check(request)
    if not _authorised(request):
        return _refuse(401, "unauthorized", "Bearer token missing or wrong")
    try:
        body = json.loads(request.body)
        iban, name = str(body["iban"]), str(body["name"])
    except (ValueError, KeyError, TypeError) as error:
        return _refuse(400, "invalid_request", f"Malformed request: {error}")
    result, holder = vop_answer(iban=iban, name=name)
    return JsonResponse(
        {"result": result, "matchedName": holder if result == VopResult.CLOSE_MATCH else None}
    )


@csrf_exempt
@require_POST
def payment_files(request):
    """A pain.001 upload: validated against the schema, each transfer booked, a pain.002 back."""
    sandbox_open_check(request)
    if not _authorised(request):
        return _refuse(401, "unauthorized", "Bearer token missing or wrong")
    return pain001_receive(request.body)


PAIN001 = "pain.001.001.09"


def pain001_receive(xml: bytes) -> HttpResponse:
    """Validate the file, refuse a file already received, book each transfer, answer with pain.002."""
    try:
        root = xsd_parse(xml, PAIN001)
    except SchemaError as error:
        return JsonResponse({"error": {"code": "invalid_file", "message": str(error)}}, status=400)
    ns = {"p": namespace(PAIN001)}
    msg_id = root.findtext("p:CstmrCdtTrfInitn/p:GrpHdr/p:MsgId", namespaces=ns)
    if SandboxBankPayment.objects.filter(msg_id=msg_id).exists():
        return JsonResponse(
            {"error": {"code": "duplicate_file", "message": f"File {msg_id} was received before"}}, status=409
        )
    statuses, batch_of = [], {}
    for batch in root.iterfind("p:CstmrCdtTrfInitn/p:PmtInf", ns):
        pmt_inf_id = batch.findtext("p:PmtInfId", namespaces=ns)
        for tx in batch.iterfind("p:CdtTrfTxInf", ns):
            amount = tx.find("p:Amt/p:InstdAmt", ns)
            payment = payment_receive(
                end_to_end_id=tx.findtext("p:PmtId/p:EndToEndId", namespaces=ns),
                scheme="sepa",
                amount=from_major(amount.text, amount.get("Ccy")),
                currency=amount.get("Ccy"),
                creditor_name=tx.findtext("p:Cdtr/p:Nm", namespaces=ns) or "",
                account=tx.findtext("p:CdtrAcct/p:Id/p:IBAN", namespaces=ns) or "",
                msg_id=msg_id,
            )
            batch_of[payment.end_to_end_id] = pmt_inf_id
            statuses.append((payment.end_to_end_id, payment.status, payment.reason_code, ""))
    group = "PART" if any(s[1] == "RJCT" for s in statuses) else "ACCP"
    report = pain002_xml(
        msg_id=message_id("STS"),
        created_at=timezone.now(),
        original_msg_id=msg_id,
        transactions=statuses,
        original_pmt_inf_id=batch_of,
        group_status=group,
    )
    SandboxBankMessage.objects.create(kind="pain.002.001.10", msg_id=msg_id_of(report), xml=report)
    return HttpResponse(report, content_type="application/xml", status=202)


def files_book() -> None:
    """The transfers of pain.001 files book at the bank's next cycle (this call stands for it)."""
    for payment in SandboxBankPayment.objects.filter(status="ACSP").exclude(msg_id="")[:1000]:
        payment_settle(payment=payment)


def webhook_url() -> str:
    return "http://sandbox.localhost" + reverse("payouts:adyen_webhook")


def _webhook(event: SandboxBankEvent, sequence: int) -> dict:
    return {
        "data": {
            **transfer_json(event.payment, status=event.kind),
            "balancePlatform": "JOYBACK_SANDBOX",
            "sequenceNumber": sequence,
            "updatedAt": event.created_at.isoformat(timespec="seconds"),
        },
        "environment": "test",
        "timestamp": event.created_at.isoformat(timespec="seconds"),
        "type": "balancePlatform.transfer.created" if sequence == 1 else "balancePlatform.transfer.updated",
    }


def webhooks_deliver(*, limit: int = 500) -> int:
    """Send each new status change as Adyen would: a signed POST to the platform's webhook URL, at
    least once. A chaos account's webhooks go twice and newest first. Returns how many were sent."""
    returns_due()
    files_book()
    cursor, _created = PspFeedCursor.objects.get_or_create(name="sandbox_webhooks")
    found = list(
        SandboxBankEvent.objects.filter(pk__gt=cursor.position)
        .select_related("payment")
        .order_by("pk")[:limit]
    )
    if not found:
        return 0
    sequences = _sequences(found)
    batch = [_webhook(event, sequences[event.pk]) for event in found]
    chaos = [
        body for event, body in zip(found, batch, strict=True) if event.payment.account[-4:] == CHAOS_SUFFIX
    ]
    plain = [
        body for event, body in zip(found, batch, strict=True) if event.payment.account[-4:] != CHAOS_SUFFIX
    ]
    sent = 0
    for body in [*plain, *reversed(chaos), *reversed(chaos)]:
        raw = json.dumps(body).encode()
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
        sent += 1
    # Moved on only once every webhook was taken: a crash sends them again, as Adyen retries.
    PspFeedCursor.objects.filter(pk=cursor.pk, position__lt=found[-1].pk).update(position=found[-1].pk)
    return sent


def _sequences(events: list[SandboxBankEvent]) -> dict[int, int]:
    """Each event's place among its transfer's events: Adyen's sequenceNumber."""
    payment_ids = {event.payment_id for event in events}
    ordered = SandboxBankEvent.objects.filter(payment_id__in=payment_ids).order_by("payment_id", "pk")
    sequences, seen = {}, {}
    for pk, payment_id in ordered.values_list("pk", "payment_id"):
        seen[payment_id] = seen.get(payment_id, 0) + 1
        sequences[pk] = seen[payment_id]
    return sequences


def sandbox_hmac_key() -> str:
    return settings.SANDBOX_BANK_HMAC_KEY or settings.ADYEN_HMAC_KEYS[0]


def webhook_client():

    # In-process always: the sandbox bank's webhooks reach this app whatever the live provider is.
    with routed_for(livemode=False):
        return psp_client()
