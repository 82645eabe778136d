"""Funding through Adyen's balance platform: a virtual IBAN per brand, and what arrives on it.

Built from Adyen's published OpenAPI specifications (BalancePlatformService-v2, TransferService-v4,
BalancePlatformTransferNotification-v4); tests/payouts/adyen/ keeps the parts the contract tests
validate against.

- A brand's account is a balance account of the platform's own account holder
  (POST /balanceAccounts), with a payment instrument of type bankAccount and formFactor virtual
  (POST /paymentInstruments): Adyen issues a local IBAN for it. The brands' money is the platform's
  liability to them, held under the platform's name, so no account holder (and no legal entity to
  verify at Adyen) per brand is needed.
- A push sweep of schedule "balance" (POST /balanceAccounts/{id}/sweeps) moves whatever arrives on
  to the platform's balance account, the one payouts leave from.
- An incoming bank transfer is reported by balancePlatform.transfer.created/updated webhooks with
  category bank and direction incoming (received -> booked, perhaps returned); a sweep by the same
  webhooks with category internal, direction outgoing from the brand's balance account.
- GET /transactions lists the booked transactions of a balance account, for reconciliation; GET
  /balanceAccounts/{id} its balance, for the drift check.

Every POST carries an Idempotency-Key derived from our own row, so a retry after a lost answer is
a replay at Adyen, never a second account.
"""

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.utils.dateparse import parse_datetime

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
    kind: str  # "deposit" (a bank transfer in) or "sweep" (moved on to the platform's account)
    status: str  # received, booked, returned, failed, ...
    amount: int
    currency: str
    sequence: int
    payer_name: str = ""
    reason: str = ""


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
        raise PspError(f"POST {path}: {response.status_code} {response.text[:200]}")
    return response.json()


def balance_account_request(*, currency: str, reference: str, description: str) -> dict:
    return {
        "accountHolderId": settings.ADYEN_ACCOUNT_HOLDER_ID,
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


def sweep_request(*, currency: str, description: str) -> dict:
    return {
        "counterparty": {"balanceAccountId": settings.ADYEN_BALANCE_ACCOUNT_ID},
        "currency": currency,
        "schedule": {"type": "balance"},
        "triggerAmount": {"currency": currency, "value": 1},
        "type": "push",
        "category": "internal",
        "status": "active",
        "description": description[:140],
    }


def account_open(
    *, key: str, currency: str, reference: str, description: str, opened: OpenedAccount
) -> OpenedAccount:
    """Open what is still missing of a brand's account: its balance account, its virtual IBAN, its
    sweep. `opened` says what an earlier attempt got; `key` (ours, per account) keys each step."""
    balance_account_id = opened.balance_account_id
    if not balance_account_id:
        answer = _post(
            "/balanceAccounts",
            balance_account_request(currency=currency, reference=reference, description=description),
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
    sweep_id = opened.sweep_id
    if not sweep_id:
        answer = _post(
            f"/balanceAccounts/{balance_account_id}/sweeps",
            sweep_request(currency=currency, description=f"JoyBack funding {reference}"),
            f"{key}-sweep",
        )
        sweep_id = answer["id"]
    return OpenedAccount(balance_account_id, instrument_id, sweep_id, iban, bic)


def balance_get(*, balance_account_id: str, currency: str) -> int:
    """The balance account's balance in `currency` (minor units), as Adyen holds it now."""
    response = http_request(
        "GET",
        f"{adyen_balance_platform_api_base()}/balanceAccounts/{balance_account_id}",
        headers=_headers(),
    )
    if response.status_code != 200:
        raise PspError(f"balance account {balance_account_id}: {response.status_code} {response.text[:200]}")
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
            raise PspError(
                f"transactions of {balance_account_id}: {response.status_code} {response.text[:200]}"
            )
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
    from urllib.parse import parse_qs, urlparse

    return parse_qs(urlparse(href).query).get("cursor", [""])[0]


def webhook_incoming(payload: dict) -> IncomingTransfer | None:
    """A transfer webhook about a brand's balance account: a bank transfer coming in, or the sweep
    moving money on to the platform's balance account. None for anything else (payouts included)."""
    if payload.get("type") not in ("balancePlatform.transfer.created", "balancePlatform.transfer.updated"):
        return None
    data = payload.get("data") or {}
    category, direction = data.get("category"), data.get("direction")
    if category == "bank" and direction == "incoming":
        kind = "deposit"
    elif category == "internal" and direction == "outgoing":
        if (data.get("counterparty") or {}).get("balanceAccountId") != settings.ADYEN_BALANCE_ACCOUNT_ID:
            return None
        kind = "sweep"
    else:
        return None
    account = (data.get("balanceAccount") or {}).get("id", "")
    amount = data.get("amount") or {}
    if not (data.get("id") and account and amount.get("currency")):
        return None
    payer = ((data.get("counterparty") or {}).get("bankAccount") or {}).get("accountHolder") or {}
    return IncomingTransfer(
        transfer_id=str(data["id"])[:64],
        balance_account_id=account,
        kind=kind,
        status=str(data.get("status") or ""),
        amount=abs(int(amount.get("value") or 0)),
        currency=str(amount["currency"]),
        sequence=int(data.get("sequenceNumber") or 0),
        payer_name=str(payer.get("fullName") or "")[:140],
        reason=str(data.get("reason") or "")[:60],
    )
