"""The sandbox bank: a PSP inside the app for `make run` and the tests.

It speaks the PSP API payouts/psp.py calls (JSON payments by scheme, status by EndToEndId,
Verification of Payee, pain.001 file upload, an event feed) and issues the ISO 20022 messages a
bank would (pain.002 status reports, camt.054 notifications) for reconciliation to import.

What it does with a payment is chosen per account: a SandboxBankAccount row set in the admin, or
else the account number's last four digits (the magic numbers in MAGIC_SUFFIXES; README lists
IBANs that end in them). Every other account settles at once and its holder's name matches.
"""

import json
import secrets
from datetime import timedelta
from difflib import SequenceMatcher

from django.conf import settings
from django.db import transaction
from django.http import Http404, JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from joyback.money import from_major, to_major
from payouts.models import (
    SandboxBankAccount,
    SandboxBankEvent,
    SandboxBankPayment,
    SandboxOutcome,
    VopResult,
)
from payouts.sandbox.files import notification_issue, pain001_receive
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
# Schemes that settle later than they are accepted, as ACH and SWIFT do.
DEFERRED_SCHEMES = {"ach", "swift", "sepa"}


def account_key(account: dict) -> str:
    if account.get("iban"):
        return account["iban"].replace(" ", "").upper()
    if account.get("sortCode"):
        return f"GB:{account['sortCode']}:{account['accountNumber']}"
    if account.get("routingNumber"):
        return f"US:{account['routingNumber']}:{account['accountNumber']}"
    return f"SWIFT:{account.get('bic', '')}:{account.get('accountNumber', '')}"


def outcome_for(key: str) -> str:
    chosen = SandboxBankAccount.objects.filter(account=key).values_list("outcome", flat=True).first()
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


def _refuse(status: int, code: str, message: str) -> JsonResponse:
    return JsonResponse({"error": {"code": code, "message": message}}, status=status)


def _payment_json(payment: SandboxBankPayment) -> dict:
    return {
        "paymentId": payment.bank_reference,
        "endToEndId": payment.end_to_end_id,
        "transactionStatus": payment.status,
        "statusReasonCode": payment.reason_code or None,
        "returned": payment.returned_at is not None,
        "instructedAmount": {
            "currency": payment.currency,
            "amount": str(to_major(payment.amount, payment.currency)),
        },
    }


def _sandbox_only():
    if not settings.SANDBOX:
        raise Http404("The sandbox bank is off")


@csrf_exempt
def payments(request):
    _sandbox_only()
    if not _authorised(request):
        return _refuse(401, "unauthorized", "Bearer token missing or wrong")
    if request.method != "POST":
        return _refuse(405, "method_not_allowed", "POST a payment")
    try:
        body = json.loads(request.body)
        amount = from_major(body["instructedAmount"]["amount"], body["instructedAmount"]["currency"])
        order = {
            "end_to_end_id": str(body["endToEndId"])[:35],
            "scheme": str(body["scheme"]),
            "currency": body["instructedAmount"]["currency"],
            "creditor_name": str(body["creditorName"])[:140],
            "account": account_key(body["creditorAccount"]),
        }
    except (ValueError, KeyError, TypeError) as error:
        return _refuse(400, "invalid_request", f"Malformed payment: {error}")
    payment = payment_receive(amount=amount, **order)
    response = JsonResponse(_payment_json(payment), status=201)
    if payment.outcome == SandboxOutcome.TIMEOUT:
        response[LOST_ANSWER_HEADER] = "1"
    return response


def payment_receive(
    *, end_to_end_id, scheme, amount, currency, creditor_name, account, msg_id=""
) -> SandboxBankPayment:
    """Book one incoming order as the bank would, and tell of its outcome in the event feed."""
    outcome = outcome_for(account)
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
    with transaction.atomic():
        payment = SandboxBankPayment.objects.create(
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
        )
        if status != "ACSP":
            _event_add(payment, "payment.settled" if status == "ACSC" else "payment.rejected", reason)
        if status == "ACSC":
            notification_issue(payment=payment)
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
                _event_add(payment, "payment.returned", _return_reason(payment))
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
            _event_add(payment, "payment.settled")
            notification_issue(payment=payment)


@require_GET
def payment_detail(request, end_to_end_id):
    """The latest order for an EndToEndId; a deferred one settles when it is asked about."""
    _sandbox_only()
    if not _authorised(request):
        return _refuse(401, "unauthorized", "Bearer token missing or wrong")
    payment = SandboxBankPayment.objects.filter(end_to_end_id=end_to_end_id).order_by("-pk").first()
    if payment is None:
        return _refuse(404, "not_found", "No payment with this EndToEndId")
    if payment.status == "ACSP":
        payment_settle(payment=payment)
    returns_due()
    payment.refresh_from_db()
    data = _payment_json(payment)
    if payment.returned_at:
        data["statusReasonCode"] = _return_reason(payment)
    return JsonResponse(data)


@csrf_exempt
@require_POST
def payee_verifications(request):
    _sandbox_only()
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


@require_GET
def events(request):
    """What happened to payments since event `after`: the PSP's feed of settlements and returns."""
    _sandbox_only()
    if not _authorised(request):
        return _refuse(401, "unauthorized", "Bearer token missing or wrong")
    try:
        after = int(request.GET.get("after", "0"))
    except ValueError:
        return _refuse(400, "invalid_request", "after must be an event number")
    returns_due()
    found = SandboxBankEvent.objects.filter(pk__gt=after).select_related("payment").order_by("pk")[:500]
    return JsonResponse(
        {
            "events": [
                {
                    "id": event.pk,
                    "type": event.kind,
                    "endToEndId": event.payment.end_to_end_id,
                    "reasonCode": event.reason_code or None,
                }
                for event in found
            ]
        }
    )


@csrf_exempt
@require_POST
def payment_files(request):
    """A pain.001 upload: validated against the schema, each transfer booked, a pain.002 back."""
    _sandbox_only()
    if not _authorised(request):
        return _refuse(401, "unauthorized", "Bearer token missing or wrong")
    return pain001_receive(request.body)
