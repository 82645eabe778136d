"""Funding through Adyen's balance platform: a virtual IBAN per brand, and what arrives on it.

Built from Adyen's published OpenAPI specifications (BalancePlatformService-v2, TransferService-v4,
BalancePlatformTransferNotification-v4); tests/payouts/adyen/ keeps the parts the contract tests
validate against.

- A brand's account is a balance account of the brand's own account holder (POST
  /balanceAccounts; the account holder and its legal entity are payouts/providers/
  adyen_onboarding.py's), with a payment instrument of type bankAccount and formFactor virtual
  (POST /paymentInstruments): Adyen issues a local IBAN for it. The money stays there, in the
  brand's name: payouts leave from it (TransferService's balanceAccountId), no sweep moves it on.
- Accounts opened before brands held their own were balance accounts of the platform's account
  holder with a push sweep to the platform's balance account; their sweeps are still read, and
  `manage.py custody_move` moves what the platform holds for such a brand to its own account.
- An incoming bank transfer is reported by balancePlatform.transfer.created/updated webhooks with
  category bank, direction incoming and type bankTransfer (received -> booked, perhaps returned),
  its balances crediting the account; a sweep by the same webhooks with category internal, type
  internalTransfer, direction outgoing from the brand's balance account. "Incoming" is not "money
  in": Adyen reports a direct debit pulled from the account as an incoming bankDirectDebit whose
  balances go down, so a booking reads the type and the sign, and anything else that moves money
  on a brand's account is for staff to explain.
- GET /transactions lists the booked transactions of a balance account, for reconciliation; GET
  /balanceAccounts/{id} its balance, for the drift check.

Every POST carries an Idempotency-Key derived from our own row, so a retry after a lost answer is
a replay at Adyen, never a second account.
"""

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import parse_qs, urlparse

from django.conf import settings
from django.utils.dateparse import parse_datetime

from payouts.providers.adyen import INTERNAL_DESCRIPTION, refusal
from payouts.psp import PspError, adyen_api_base, adyen_balance_platform_api_base, http_request

NAME = "adyen"


@dataclass(frozen=True)
class OpenedAccount:
    balance_account_id: str = ""
    payment_instrument_id: str = ""
    sweep_id: str = ""
    iban: str = ""
    bic: str = ""


@dataclass(frozen=True)
class IncomingTransfer:
    """A transfer webhook about money arriving on, or swept from, one of our balance accounts."""

    transfer_id: str
    balance_account_id: str
    # "deposit" (a bank transfer in), "sweep" (moved on to the platform's account), "payout" (a
    # bank transfer out with a reference), "unexplained"
    kind: str
    status: str  # received, booked, returned, failed, ...
    amount: int
    currency: str
    sequence: int
    payer_name: str = ""
    reference: str = ""
    reason: str = ""
    type: str = ""  # Adyen's: bankTransfer, bankDirectDebit, internalTransfer, ...
    category: str = ""
    direction: str = ""
    movement: int | None = None  # signed, as the webhook's balances say; None when it has none


@dataclass(frozen=True)
class BookedTransaction:
    transaction_id: str
    transfer_id: str
    balance_account_id: str
    amount: int  # signed: money in is positive
    currency: str
    booked_at: datetime | None


def _headers(extra: dict | None = None) -> dict:
    return {"X-API-Key": settings.ADYEN_API_KEY, **(extra or {})}


def _post(path: str, body: dict, key: str) -> dict:
    response = http_request(
        "POST",
        f"{adyen_balance_platform_api_base()}{path}",
        json=body,
        headers=_headers({"Idempotency-Key": key}),
    )
    if response.status_code not in (200, 201, 202):
        raise refusal(response, f"POST {path}")
    return response.json()


def balance_account_request(
    *, account_holder_id: str, currency: str, reference: str, description: str
) -> dict:
    return {
        "accountHolderId": account_holder_id,
        "defaultCurrencyCode": currency,
        "description": description[:300],
        "reference": reference[:150],
    }


def payment_instrument_request(*, balance_account_id: str, reference: str, description: str) -> dict:
    return {
        "type": "bankAccount",
        "balanceAccountId": balance_account_id,
        "issuingCountryCode": settings.ADYEN_VIRTUAL_IBAN_COUNTRY,
        "bankAccount": {"formFactor": "virtual"},
        "description": description[:300],
        "reference": reference[:150],
    }


def account_open(
    *,
    key: str,
    account_holder_id: str,
    currency: str,
    reference: str,
    description: str,
    opened: OpenedAccount,
) -> OpenedAccount:
    """Open what is still missing of a brand's account under its own account holder: its balance
    account, then its virtual IBAN; no sweep, the money stays. `opened` says what an earlier
    attempt got; `key` (ours, per account) keys each step."""
    balance_account_id = opened.balance_account_id
    if not balance_account_id:
        answer = _post(
            "/balanceAccounts",
            balance_account_request(
                account_holder_id=account_holder_id,
                currency=currency,
                reference=reference,
                description=description,
            ),
            f"{key}-balance-account",
        )
        balance_account_id = answer["id"]
    instrument_id, iban, bic = opened.payment_instrument_id, opened.iban, opened.bic
    if not instrument_id:
        answer = _post(
            "/paymentInstruments",
            payment_instrument_request(
                balance_account_id=balance_account_id, reference=reference, description=description
            ),
            f"{key}-bank-account",
        )
        identification = answer.get("bankAccount") or {}
        if identification.get("type", "iban") != "iban" or not identification.get("iban"):
            raise PspError(f"payment instrument {answer.get('id')} has no IBAN")
        instrument_id, iban = answer["id"], identification["iban"]
        bic = identification.get("bic", "")
    return OpenedAccount(balance_account_id, instrument_id, opened.sweep_id, iban, bic)


def internal_transfer_request(
    *, source: str, destination: str, amount: int, currency: str, reference: str, description: str
) -> dict:
    """TransferService v4: money between two balance accounts of the platform (category internal).
    One side is always the platform's own balance account (its fee in, a custody move out): the
    platform's API key could move money between any two balance accounts of its balance platform,
    so a request between two others (two brands') is never made."""
    if settings.ADYEN_BALANCE_ACCOUNT_ID not in (source, destination) or source == destination:
        raise PspError("an internal transfer goes between the platform's balance account and one brand's")
    return {
        "amount": {"currency": currency, "value": amount},
        "balanceAccountId": source,
        "category": "internal",
        "counterparty": {"balanceAccountId": destination},
        "reference": reference[:80],
        # Adyen takes a description in its own characters only: a brand's name may have others.
        "description": INTERNAL_DESCRIPTION.sub("", description)[:140],
    }


def internal_transfer(*, key: str, **request) -> tuple[str, str]:
    """POST /transfers, category internal; (Adyen's transfer id, its status)."""
    response = http_request(
        "POST",
        f"{adyen_api_base()}/transfers",
        json=internal_transfer_request(**request),
        headers=_headers({"Idempotency-Key": key}),
    )
    if response.status_code not in (200, 202):
        raise refusal(response, "internal transfer")
    answer = response.json()
    return str(answer["id"]), str(answer.get("status") or "")


def balance_get(*, balance_account_id: str, currency: str) -> int:
    """The balance account's balance in `currency` (minor units), as Adyen holds it now."""
    response = http_request(
        "GET",
        f"{adyen_balance_platform_api_base()}/balanceAccounts/{balance_account_id}",
        headers=_headers(),
    )
    if response.status_code != 200:
        raise refusal(response, f"balance account {balance_account_id}")
    for balance in response.json().get("balances", []):
        if balance.get("currency") == currency:
            return int(balance.get("balance", 0))
    return 0


def transactions_list(
    *, balance_account_id: str, since: datetime, until: datetime
) -> list[BookedTransaction]:
    """GET /transactions of one balance account in a window, every page."""
    found = []
    params = {
        "balanceAccountId": balance_account_id,
        "createdSince": since.isoformat(timespec="seconds"),
        "createdUntil": until.isoformat(timespec="seconds"),
        "limit": 100,
    }
    while True:
        response = http_request("GET", f"{adyen_api_base()}/transactions", params=params, headers=_headers())
        if response.status_code != 200:
            raise refusal(response, f"transactions of {balance_account_id}")
        body = response.json()
        for item in body.get("data", []):
            if item.get("status") != "booked":
                continue
            found.append(
                BookedTransaction(
                    transaction_id=item["id"],
                    transfer_id=(item.get("transfer") or {}).get("id", ""),
                    balance_account_id=(item.get("balanceAccount") or {}).get("id", balance_account_id),
                    amount=int(item["amount"]["value"]),
                    currency=item["amount"]["currency"],
                    booked_at=parse_datetime(item.get("bookingDate") or "")
                    if item.get("bookingDate")
                    else None,
                )
            )
        cursor = ((body.get("_links") or {}).get("next") or {}).get("href", "")
        if not cursor:
            return found
        params = {**params, "cursor": _cursor_of(cursor)}


def _cursor_of(href: str) -> str:
    return parse_qs(urlparse(href).query).get("cursor", [""])[0]


# What a transfer did on a balance account, by Adyen's words for it (TransferData.type,
# category, direction) and by the sign of its balances: only a bank transfer that credits the
# account is a deposit, and only an internal transfer out to the platform's account is its sweep.
DEPOSIT_TYPE = "bankTransfer"
SWEEP_TYPE = "internalTransfer"
# A deposit's statuses that take nothing back, and those that say it did not stay.
DEPOSIT_GONE = frozenset({"returned", "failed", "refused", "rejected", "cancelled", "expired", "error"})


def balance_movement(data: dict) -> int | None:
    """What the transfer did to the balance account in its own currency, summed over Adyen's
    registers (balance, received, reserved); None when the webhook carries no balances."""
    currency = (data.get("amount") or {}).get("currency")
    found = [item for item in data.get("balances") or [] if item.get("currency") == currency]
    if not found:
        return None
    registers = ("balance", "received", "reserved")
    return sum(int(item.get(register) or 0) for item in found for register in registers)


def transfer_kind(data: dict) -> str:
    """deposit, sweep (an internal transfer out to the platform's balance account: an old
    account's sweep, or from a brand's own account the platform's fee), custody_move (in from the
    platform's account), payout (a bank transfer out, which is ours only if its reference is one of
    the brand's payouts), or unexplained: any other movement on a brand's balance account (a direct
    debit, a top-up, an incoming bank transfer that took money away)."""
    category, direction, kind = data.get("category"), data.get("direction"), data.get("type")
    if (
        category == "bank"
        and direction == "outgoing"
        and kind in (DEPOSIT_TYPE, None)
        and data.get("reference")
    ):
        return "payout"
    movement = balance_movement(data)
    status = str(data.get("status") or "")
    if category == "bank" and direction == "incoming" and kind == DEPOSIT_TYPE:
        # A return or a failure only ever takes back what was booked; anything that would book
        # must show the credit itself, or it is not booked (a check that cannot tell fails closed).
        if status in DEPOSIT_GONE:
            return "deposit"
        value = int((data.get("amount") or {}).get("value") or 0)
        credits = movement is not None and movement > 0 and (status != "booked" or movement == value)
        return "deposit" if credits else "unexplained"
    counterparty_account = (data.get("counterparty") or {}).get("balanceAccountId")
    from_platform = counterparty_account == settings.ADYEN_BALANCE_ACCOUNT_ID and direction == "incoming"
    if category == "internal" and kind == SWEEP_TYPE and from_platform:
        return "custody_move"  # what the platform held for the brand, moved to its own account
    if category == "internal" and direction == "outgoing" and kind == SWEEP_TYPE:
        counterparty = (data.get("counterparty") or {}).get("balanceAccountId")
        to_platform = counterparty == settings.ADYEN_BALANCE_ACCOUNT_ID
        if to_platform and (status != "booked" or (movement is not None and movement < 0)):
            return "sweep"
    return "unexplained"


def webhook_incoming(payload: dict) -> IncomingTransfer | None:
    """A transfer webhook about a balance account, as what it did there: a bank transfer coming in
    (deposit), the sweep moving money on to the platform's balance account (sweep), or anything
    else (unexplained), which on a brand's account only staff may explain. None when it names no
    balance account or amount."""
    if payload.get("type") not in ("balancePlatform.transfer.created", "balancePlatform.transfer.updated"):
        return None
    data = payload.get("data") or {}
    account = (data.get("balanceAccount") or {}).get("id", "")
    amount = data.get("amount") or {}
    if not (data.get("id") and account and amount.get("currency")):
        return None
    payer = ((data.get("counterparty") or {}).get("bankAccount") or {}).get("accountHolder") or {}
    return IncomingTransfer(
        transfer_id=str(data["id"])[:64],
        balance_account_id=account,
        kind=transfer_kind(data),
        status=str(data.get("status") or ""),
        amount=abs(int(amount.get("value") or 0)),
        currency=str(amount["currency"]),
        sequence=int(data.get("sequenceNumber") or 0),
        payer_name=str(payer.get("fullName") or "")[:140],
        reference=str(data.get("reference") or "")[:80],
        reason=str(data.get("reason") or "")[:60],
        type=str(data.get("type") or "")[:40],
        category=str(data.get("category") or "")[:20],
        direction=str(data.get("direction") or "")[:10],
        movement=balance_movement(data),
    )
