"""The sandbox bank's balance platform for funding, in Adyen's wire format.

Balance Platform API (/sandbox/bank/bcl/v2/): POST /balanceAccounts, POST /paymentInstruments (type
bankAccount, formFactor virtual: an IBAN of the sandbox bank, valid, generated with schwifty),
POST /balanceAccounts/{id}/sweeps, GET /balanceAccounts/{id} (its balance). Transfers API
(/sandbox/bank/btl/v4/transactions): the booked transactions of a balance account. Each POST with an
Idempotency-Key it has seen answers as the first time.

deposit_simulate stands for a brand's bank sending money to its virtual IBAN: the transfer is
received, then booked (and, if asked, returned), and each status goes out as a signed
balancePlatform.transfer.created/updated webhook, as Adyen sends them; a "chaos" deposit's webhooks
go twice and newest first. Booked money is swept on to the platform's balance account by the
account's sweep when webhooks are next delivered, as Adyen's balance-triggered sweep would.

Test mode's play money (play_money_add): the sandbox bank's own account for a brand's test data.

"Add test funds" asks the sandbox bank to receive a transfer for the brand's test twin. The bank
answers as a bank does, with a camt.054 credit notification, signed with its key; the ledger books
the deposit from that message alone, to the test-mode platform bank. So even play money moves only
on the bank's word, and none of it passes through the live bank channel (its statements, drift and
reconciliation never see it).
"""

import hashlib
import hmac
import json
import secrets

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.http import JsonResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST
from schwifty import IBAN

from campaigns.models import Brand
from campaigns.services.refusals import CampaignError
from joyback.ledger.models import Transaction
from payouts.funding.deposits import brand_deposit_book
from payouts.iso20022.camt import camt_read
from payouts.iso20022.camt054 import camt054_xml
from payouts.iso20022.types import Entry, EntryDetail, Iso20022Error, SchemaError
from payouts.models import (
    PspFeedCursor,
    SandboxBalanceAccount,
    SandboxBankPayment,
    SandboxFundingEvent,
    SandboxFundingTransfer,
    SandboxLegalEntity,
)
from payouts.providers import adyen
from payouts.reconciliation.references import brand_deposit_reference, brand_for_reference
from payouts.sandbox.bank import (
    adyen_error_response,
    funding_event_signed,
    sandbox_api_key_valid,
    sandbox_balance,
    sandbox_hmac_key,
    sandbox_open_check,
    webhook_client,
)
from payouts.sandbox.bank import transfer_detail as sandbox_bank_transfer_detail
from payouts.sandbox.bank import transfers as sandbox_bank_transfers
from payouts.sandbox.internal import internal_transfer, internal_transfer_detail
from payouts.sandbox.onboarding import onboarding_webhooks_deliver

SANDBOX_BANK_CODE = "10010010"  # the sandbox bank's own German bank code (PAYOUT_DEBTOR_IBAN's)
BALANCE_PLATFORM = "JOYBACK_SANDBOX"


def _id(prefix: str) -> str:
    return (prefix + secrets.token_hex(12).upper())[:26]


def _key(request) -> str | None:
    return request.headers.get("Idempotency-Key", "")[:64] or None


def _body(request) -> dict:
    body = json.loads(request.body)
    if not isinstance(body, dict):
        raise ValueError("the body is not a JSON object")
    return body


def _account_json(account: SandboxBalanceAccount) -> dict:
    return {
        "id": account.account_id,
        "accountHolderId": account.account_holder_id,
        "defaultCurrencyCode": account.currency,
        "description": account.description,
        "timeZone": "Europe/Amsterdam",
        "balances": [
            {
                "currency": account.currency,
                "balance": sandbox_balance(account),
                "available": sandbox_balance(account),
                "reserved": 0,
            }
        ],
        "status": "active",
    }


def _instrument_json(account: SandboxBalanceAccount) -> dict:
    return {
        "id": account.payment_instrument_id,
        "balanceAccountId": account.account_id,
        "issuingCountryCode": "DE",
        "status": "active",
        "type": "bankAccount",
        "bankAccount": {"type": "iban", "iban": account.iban, "formFactor": "virtual"},
    }


def _sweep_json(account: SandboxBalanceAccount) -> dict:
    return {
        "id": account.sweep_id,
        "counterparty": {"balanceAccountId": account.sweep_to},
        "currency": account.currency,
        "schedule": {"type": "balance"},
        "type": "push",
        "category": "internal",
        "status": "active",
    }


def _guarded(view):
    """Sandbox only, Adyen's API key, Adyen's error for a malformed body."""

    def wrapper(request, *args, **kwargs):
        sandbox_open_check(request)
        if not sandbox_api_key_valid(request):
            return adyen_error_response(401, "00_401", "Unauthorized", "X-API-Key missing or wrong")
        try:
            return view(request, *args, **kwargs)
        except (ValueError, KeyError, TypeError) as error:
            return adyen_error_response(422, "30_112", "Invalid request", f"Malformed request: {error}")

    wrapper.__name__ = view.__name__
    return csrf_exempt(wrapper)


@_guarded
@require_POST
def balance_accounts(request):
    body = _body(request)
    holder = body.get("accountHolderId")
    if (
        holder != settings.ADYEN_ACCOUNT_HOLDER_ID
        and not SandboxLegalEntity.objects.filter(account_holder_id=holder).exists()
    ):
        return adyen_error_response(
            422, "30_011", "Invalid account holder", "The account holder is not one of this platform's"
        )
    key = _key(request)
    account = SandboxBalanceAccount.objects.filter(idempotency_key=key).first() if key else None
    if account is None:
        account = SandboxBalanceAccount.objects.create(
            account_id=_id("BA"),
            account_holder_id=body["accountHolderId"],
            currency=str(body.get("defaultCurrencyCode") or "EUR")[:3],
            description=str(body.get("description") or "")[:300],
            idempotency_key=key,
        )
    return JsonResponse(_account_json(account))


@_guarded
@require_GET
def balance_account(request, account_id):
    account = SandboxBalanceAccount.objects.filter(account_id=account_id).first()
    if account is None:
        return adyen_error_response(404, "30_011", "Not found", "Balance account not found")
    return JsonResponse(_account_json(account))


@_guarded
@require_POST
def payment_instruments(request):
    body = _body(request)
    if body.get("type") != "bankAccount" or (body.get("bankAccount") or {}).get("formFactor") != "virtual":
        raise ValueError("the sandbox bank issues virtual bank accounts only")
    key = _key(request)
    account = SandboxBalanceAccount.objects.filter(account_id=body["balanceAccountId"]).first()
    if account is None:
        return adyen_error_response(422, "30_011", "Invalid balance account", "Balance account not found")
    if account.payment_instrument_id:
        if key and account.instrument_key == key:
            return JsonResponse(_instrument_json(account))
        return adyen_error_response(
            422, "30_113", "Not allowed", "The balance account has a bank account already"
        )
    with transaction.atomic():
        locked = SandboxBalanceAccount.objects.select_for_update().get(pk=account.pk)
        if not locked.payment_instrument_id:
            locked.payment_instrument_id = _id("PI")
            locked.iban = str(
                IBAN.generate("DE", bank_code=SANDBOX_BANK_CODE, account_code=f"77{locked.pk:08d}")
            )
            locked.instrument_key = key
            locked.save(update_fields=["payment_instrument_id", "iban", "instrument_key"])
    return JsonResponse(_instrument_json(locked))


@_guarded
@require_POST
def sweeps(request, account_id):
    body = _body(request)
    account = SandboxBalanceAccount.objects.filter(account_id=account_id).first()
    if account is None:
        return adyen_error_response(404, "30_011", "Not found", "Balance account not found")
    counterparty = (body.get("counterparty") or {}).get("balanceAccountId")
    if body.get("type") != "push" or counterparty != settings.ADYEN_BALANCE_ACCOUNT_ID:
        raise ValueError("the sandbox bank sweeps to the platform's balance account only")
    if not account.sweep_id:
        SandboxBalanceAccount.objects.filter(pk=account.pk, sweep_id="").update(
            sweep_id=_id("SWPC"), sweep_to=counterparty, sweep_key=_key(request)
        )
        account.refresh_from_db()
    return JsonResponse(_sweep_json(account))


# What happened on the balance accounts.


def balance_of(account: SandboxBalanceAccount) -> int:
    return sandbox_balance(account)


@_guarded
@require_GET
def transactions(request):
    account = SandboxBalanceAccount.objects.filter(account_id=request.GET["balanceAccountId"]).first()
    since = parse_datetime(request.GET["createdSince"])
    until = parse_datetime(request.GET["createdUntil"])
    if account is None or since is None or until is None:
        raise ValueError("balanceAccountId, createdSince and createdUntil are required")
    found = (
        SandboxFundingEvent.objects.filter(
            transfer__account=account, status__in=["booked", "returned"], created_at__gte=since
        )
        .filter(created_at__lte=until)
        .select_related("transfer")
        .order_by("pk")
    )
    paid = SandboxBankPayment.objects.filter(balance_account_id=account.account_id).filter(
        Q(settled_at__gte=since, settled_at__lte=until) | Q(returned_at__gte=since, returned_at__lte=until)
    )
    data = [transaction_json(event) for event in found]
    for payment in paid.order_by("pk"):
        data.extend(payment_transactions_json(payment, account, since=since, until=until))
    return JsonResponse({"data": data, "_links": {}})


def payment_transactions_json(payment, account: SandboxBalanceAccount, *, since, until) -> list[dict]:
    """A payout from the brand's own balance account as the transactions it booked there: its
    leaving, and its coming back if the payee's bank returned it."""
    found = []
    for sign, at in ((-1, payment.settled_at), (1, payment.returned_at)):
        if at is None or not since <= at <= until:
            continue
        stamp = at.isoformat(timespec="seconds")
        found.append(
            {
                "id": f"EVJP{payment.pk:015d}{'R' if sign > 0 else 'S'}",
                "accountHolder": {"id": account.account_holder_id},
                "amount": {"currency": payment.currency, "value": sign * payment.amount},
                "balanceAccount": {"id": account.account_id},
                "balancePlatform": BALANCE_PLATFORM,
                "bookingDate": stamp,
                "creationDate": stamp,
                "valueDate": stamp,
                "status": "booked",
                "transfer": {"id": payment.bank_reference, "reference": payment.end_to_end_id},
            }
        )
    return found


def transaction_json(event: SandboxFundingEvent) -> dict:
    transfer = event.transfer
    at = event.created_at.isoformat(timespec="seconds")
    return {
        "id": f"EVJN{event.pk:016d}{transfer.currency}",
        "accountHolder": {"id": transfer.account.account_holder_id},
        "amount": {"currency": transfer.currency, "value": funding_event_signed(transfer, event.status)},
        "balanceAccount": {"id": transfer.account.account_id},
        "balancePlatform": BALANCE_PLATFORM,
        "bookingDate": at,
        "creationDate": at,
        "valueDate": at,
        "status": "booked",
        "transfer": {"id": transfer.transfer_id, "reference": transfer.reference},
    }


@csrf_exempt
def transfers(request):
    """POST /transfers: category internal (money between two balance accounts: the platform's fee, a
    custody move) is the balance platform's one handler (payouts.sandbox.internal); every other
    transfer is the bank's (payouts.sandbox.bank)."""
    if request.method == "POST":
        try:
            body = json.loads(request.body)
        except ValueError:
            body = None
        if isinstance(body, dict) and body.get("category") == "internal":
            return _internal(request, body)
    return sandbox_bank_transfers(request)


@_guarded
def _internal(request, body: dict):
    return internal_transfer(body, _key(request))


def transfer_detail(request, transfer_id):
    """GET /transfers/{id}: an internal transfer is the balance platform's to answer, any other the
    bank's (which answers 404 for an id it never made)."""
    if request.method == "GET":
        answered = _internal_detail(request, transfer_id)
        if answered is not None:
            return answered
    return sandbox_bank_transfer_detail(request, transfer_id)


@_guarded
def _internal_detail(request, transfer_id):
    return internal_transfer_detail(transfer_id)


def deposit_simulate(
    *,
    iban: str,
    amount: int,
    payer_name: str = "Brand Company",
    payer_iban: str = "DE89370400440532013000",
    chaos: bool = False,
    returned: bool = False,
) -> SandboxFundingTransfer:
    """Money sent to a virtual IBAN by the payer's bank: received, booked, and returned if asked."""
    account = SandboxBalanceAccount.objects.filter(iban=iban.replace(" ", "").upper()).first()
    if account is None:
        raise ValueError("No virtual account at the sandbox bank has this IBAN.")
    if amount <= 0:
        raise ValueError("A transfer moves more than nothing.")
    with transaction.atomic():
        transfer = SandboxFundingTransfer.objects.create(
            transfer_id=_id("SBXIN")[:16],
            account=account,
            category="bank",
            direction="incoming",
            amount=amount,
            currency=account.currency,
            counterparty_name=payer_name[:140],
            counterparty_iban=payer_iban,
            reference=f"Top-up {timezone.now():%Y%m%d%H%M%S}",
            chaos=chaos,
        )
        for status in ["received", "booked", *(["returned"] if returned else [])]:
            SandboxFundingEvent.objects.create(transfer=transfer, status=status)
    return transfer


def deposit_return(*, transfer: SandboxFundingTransfer) -> None:
    """The payer's bank recalls a booked deposit (days later, perhaps)."""
    statuses = set(transfer.events.values_list("status", flat=True))
    if "booked" in statuses and "returned" not in statuses:
        SandboxFundingEvent.objects.create(transfer=transfer, status="returned")


def sweeps_run() -> int:
    """Each balance account's sweep, as Adyen runs a balance-triggered one: what is there moves on."""
    swept = 0
    for account in SandboxBalanceAccount.objects.exclude(sweep_to=""):
        with transaction.atomic():
            locked = SandboxBalanceAccount.objects.select_for_update().get(pk=account.pk)
            balance = sandbox_balance(locked)
            if balance <= 0:
                continue
            transfer = SandboxFundingTransfer.objects.create(
                transfer_id=_id("SBXSW")[:16],
                account=locked,
                category="internal",
                direction="outgoing",
                amount=balance,
                currency=locked.currency,
                counterparty_balance_account=locked.sweep_to,
                reference=f"Sweep {locked.sweep_id}",
            )
            SandboxFundingEvent.objects.create(transfer=transfer, status="booked")
            swept += 1
    return swept


def _webhook(event: SandboxFundingEvent, sequence: int) -> dict:
    transfer = event.transfer
    data = {
        "id": transfer.transfer_id,
        "accountHolder": {"id": transfer.account.account_holder_id},
        "amount": {"currency": transfer.currency, "value": transfer.amount},
        "balanceAccount": {"id": transfer.account.account_id},
        "balancePlatform": BALANCE_PLATFORM,
        "category": transfer.category,
        "creationDate": transfer.created_at.isoformat(timespec="seconds"),
        "direction": transfer.direction,
        "reason": _event_reason(event),
        "reference": transfer.reference,
        "sequenceNumber": sequence,
        "status": event.status,
        "updatedAt": event.created_at.isoformat(timespec="seconds"),
        "balances": [_balances(transfer, event.status)],
    }
    if transfer.category == "bank":
        data["type"] = "bankTransfer"
        data["paymentInstrument"] = {"id": transfer.account.payment_instrument_id}
        data["counterparty"] = {
            "bankAccount": {
                "accountHolder": {"fullName": transfer.counterparty_name},
                "accountIdentification": {"type": "iban", "iban": transfer.counterparty_iban},
            }
        }
    else:
        data["type"] = "internalTransfer"
        data["categoryData"] = {"type": "internal"}
        data["counterparty"] = {"balanceAccountId": transfer.counterparty_balance_account}
    return {
        "data": data,
        "environment": "test",
        "timestamp": event.created_at.isoformat(timespec="seconds"),
        "type": "balancePlatform.transfer.created" if sequence == 1 else "balancePlatform.transfer.updated",
    }


def _event_reason(event: SandboxFundingEvent) -> str:
    if event.status == "returned":
        return "refusedByCounterpartyBank"
    # The one refusal of an internal transfer the sandbox makes: the paying account is short.
    return "notEnoughBalance" if event.status == "refused" else "approved"


def _balances(transfer: SandboxFundingTransfer, status: str) -> dict:
    """Adyen's BalanceMutation: where the transfer's amount stands on each register, signed."""
    signed = transfer.amount if transfer.direction == "incoming" else -transfer.amount
    if status == "received":
        return {"currency": transfer.currency, "received": signed}
    if status == "authorised":
        return {"currency": transfer.currency, "received": 0, "reserved": signed}
    if status in ("booked", "returned"):
        balance = signed if status == "booked" else -signed
        return {"currency": transfer.currency, "balance": balance, "received": 0, "reserved": 0}
    return {"currency": transfer.currency, "received": 0}


def webhook_bodies(events: list[SandboxFundingEvent]) -> list[dict]:
    """The webhooks of these events, in the order the sandbox sends them: a chaos transfer's twice
    and newest first, after the others."""
    sequences = {}
    for transfer_id in {event.transfer_id for event in events}:
        for number, pk in enumerate(
            SandboxFundingEvent.objects.filter(transfer_id=transfer_id)
            .order_by("pk")
            .values_list("pk", flat=True),
            start=1,
        ):
            sequences[pk] = number
    plain = [_webhook(event, sequences[event.pk]) for event in events if not event.transfer.chaos]
    chaos = [_webhook(event, sequences[event.pk]) for event in events if event.transfer.chaos]
    return [*plain, *reversed(chaos), *reversed(chaos)]


def funding_webhooks_deliver(*, limit: int = 500) -> int:
    """The account holders' news first (payouts.sandbox.onboarding), then the sweeps of accounts
    from before brands held their own, then each new status as a signed webhook, at least once."""
    onboarding_webhooks_deliver()
    sweeps_run()
    cursor, _created = PspFeedCursor.objects.get_or_create(name="sandbox_funding_webhooks")
    found = list(
        SandboxFundingEvent.objects.filter(pk__gt=cursor.position)
        .select_related("transfer__account")
        .order_by("pk")[:limit]
    )
    if not found:
        return 0
    sent = 0
    for body in webhook_bodies(found):
        raw = json.dumps(body).encode()
        response = webhook_client().post(
            "http://sandbox.localhost" + reverse("payouts:adyen_webhook"),
            content=raw,
            headers={
                "Content-Type": "application/json",
                "HmacSignature": adyen.signature(raw, sandbox_hmac_key()),
            },
        )
        if response.status_code >= 300:
            raise RuntimeError(f"webhook refused: {response.status_code} {response.text[:200]}")
        sent += 1
    PspFeedCursor.objects.filter(pk=cursor.pk, position__lt=found[-1].pk).update(position=found[-1].pk)
    return sent


# Test mode's play money.
# The sandbox bank's account that test-mode money arrives on (a valid IBAN the live bank never has).
TEST_ACCOUNT_IBAN = "DE89370400440532013000"
TEST_FUNDS_MAX = 1_000_000_00  # play money still has a sensible ceiling per transfer


class PlayMoneyRefused(CampaignError):
    """Refused play money; a CampaignError, so the dashboard's top up shows its message."""


def _play_money_key() -> bytes:
    return ("test-mode:" + sandbox_hmac_key()).encode()


def play_money_signature(xml: bytes) -> str:
    return hmac.new(_play_money_key(), xml, hashlib.sha256).hexdigest()


def play_money_transfer_notify(*, brand: Brand, amount: int) -> tuple[bytes, str]:
    """The sandbox bank receives a transfer for the brand's test twin and issues what it reports:
    the camt.054 credit notification and its signature."""
    today = timezone.localdate()
    reference = "SBXTEST" + secrets.token_hex(9).upper()
    entry = Entry(
        amount_minor=amount,
        currency=brand.default_currency,
        credit=True,
        booking_date=today,
        value_date=today,
        account_servicer_ref=reference,
        family="RCDT",
        sub_family="ESCT",
        details=(
            EntryDetail(
                end_to_end_id=reference,
                amount_minor=amount,
                remittance=f"{brand.name} {brand_deposit_reference(brand)}",
            ),
        ),
    )
    xml = camt054_xml(
        msg_id="TESTNTF" + secrets.token_hex(8).upper(),
        created_at=timezone.now(),
        account_iban=TEST_ACCOUNT_IBAN,
        account_currency=brand.default_currency,
        entries=[entry],
    )
    return xml, play_money_signature(xml)


def play_money_notification_book(*, xml: bytes, signature: str) -> list[Transaction]:
    """Book the deposits a signed sandbox-bank notification reports, to test twins only."""
    if not hmac.compare_digest(play_money_signature(xml), signature or ""):
        raise PlayMoneyRefused(_("The notification is not signed by the test-mode bank; nothing was booked."))
    try:
        parsed = camt_read(xml)
    except (Iso20022Error, SchemaError) as error:
        raise PlayMoneyRefused(str(error)) from None
    booked = []
    for block in parsed.statements:
        if block.account.replace(" ", "") != TEST_ACCOUNT_IBAN:
            raise PlayMoneyRefused(_("Test funds arrive only on the test-mode bank's account."))
        for line in block.lines:
            brand = brand_for_reference(line.reference, livemode=False) if line.credit else None
            if brand is None:
                continue
            booked.append(
                brand_deposit_book(
                    brand=brand,
                    amount=line.amount,
                    currency=line.currency,
                    bank_reference=line.entry_ref or line.end_to_end_id,
                    receiving_account=TEST_ACCOUNT_IBAN,
                )
            )
    return booked


def play_money_add(*, brand: Brand, amount: int) -> Transaction:
    """The dashboard's "Add test funds": the sandbox bank receives the transfer and reports it."""
    if brand.livemode:
        raise PlayMoneyRefused(_("Test funds go to test data only; switch to test data first."))
    if not 0 < amount <= TEST_FUNDS_MAX:
        raise PlayMoneyRefused(_("Add between 0.01 and 1,000,000.00 of test funds at a time."))
    xml, signature = play_money_transfer_notify(brand=brand, amount=amount)
    (posted,) = play_money_notification_book(xml=xml, signature=signature)
    return posted
