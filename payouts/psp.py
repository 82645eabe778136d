"""The payment service provider's API: payments by scheme, their status, and Verification of Payee.

One JSON interface for every rail (the shape PSPs give their pain.001/pain.002 mappings): SEPA
Instant, UK Faster Payments, US ACH and SWIFT are single payments; SEPA batch files go up as
pain.001 XML. The sandbox bank (payouts/sandbox/bank.py) answers the same requests in-process.
"""

import threading
from dataclasses import dataclass

import httpx
from django.conf import settings

from joyback.money import to_major

SETTLED = frozenset({"ACSC", "ACCC"})
IN_PROGRESS = frozenset({"RCVD", "ACTC", "ACCP", "ACFC", "ACSP", "ACWC", "PDNG"})


class PspError(Exception):
    """The PSP refused the request itself (bad credentials, malformed): a bug, not an outcome."""


class PspUnknown(Exception):
    """No answer: the payment may or may not exist at the bank. Query before anything else."""


@dataclass(frozen=True)
class PaymentOrder:
    end_to_end_id: str
    scheme: str
    amount: int
    currency: str
    creditor_name: str
    account: dict
    remittance: str = ""


@dataclass(frozen=True)
class PaymentStatus:
    status: str  # ISO 20022 transaction status: ACSC, ACSP, RJCT, ...
    reason_code: str = ""
    bank_reference: str = ""
    returned: bool = False

    @property
    def settled(self) -> bool:
        return self.status in SETTLED and not self.returned

    @property
    def rejected(self) -> bool:
        return self.status == "RJCT"


@dataclass(frozen=True)
class VopAnswer:
    result: str  # MTCH, CMTC, NMTC, NOAP
    name: str = ""


_local = threading.local()


def _client() -> httpx.Client:
    """One client per thread and configuration: building one (its connection pool, its TLS
    context) costs more than the request, and a worker sends many."""
    key = (settings.SANDBOX, settings.PSP_API_BASE, settings.PSP_API_KEY, settings.PSP_TIMEOUT_SECONDS)
    cached = getattr(_local, "clients", {})
    if key not in cached:
        headers = {"Authorization": f"Bearer {settings.PSP_API_KEY}"}
        timeout = settings.PSP_TIMEOUT_SECONDS
        if settings.SANDBOX:
            from payouts.sandbox.transport import SandboxBankTransport

            client = httpx.Client(
                transport=SandboxBankTransport(),
                base_url=settings.PSP_API_BASE,
                headers=headers,
                timeout=timeout,
            )
        else:
            client = httpx.Client(base_url=settings.PSP_API_BASE, headers=headers, timeout=timeout)
        _local.clients = cached = {**cached, key: client}
    return cached[key]


def _request(method: str, path: str, **kwargs) -> httpx.Response:
    try:
        response = _client().request(method, path, **kwargs)
    except (httpx.TimeoutException, httpx.TransportError) as error:
        raise PspUnknown(f"{method} {path}: {type(error).__name__}") from None
    if response.status_code >= 500:
        raise PspUnknown(f"{method} {path}: HTTP {response.status_code}")
    return response


def _status(data: dict) -> PaymentStatus:
    return PaymentStatus(
        status=data["transactionStatus"],
        reason_code=data.get("statusReasonCode") or "",
        bank_reference=data.get("paymentId") or "",
        returned=bool(data.get("returned")),
    )


def payment_submit(order: PaymentOrder) -> PaymentStatus:
    """Send one payment. Raises PspUnknown when the answer is lost: the caller must then query."""
    body = {
        "endToEndId": order.end_to_end_id,
        "scheme": order.scheme,
        "instructedAmount": {
            "currency": order.currency,
            "amount": str(to_major(order.amount, order.currency)),
        },
        "creditorName": order.creditor_name,
        "creditorAccount": order.account,
        "remittanceInformationUnstructured": order.remittance,
    }
    response = _request("POST", "/v1/payments", json=body)
    if response.status_code not in (200, 201):
        raise PspError(f"payment {order.end_to_end_id} refused: {response.status_code} {response.text[:200]}")
    return _status(response.json())


def payment_status(end_to_end_id: str) -> PaymentStatus | None:
    """What the bank knows of a payment; None when it never received it."""
    response = _request("GET", f"/v1/payments/{end_to_end_id}")
    if response.status_code == 404:
        return None
    if response.status_code != 200:
        raise PspError(f"status of {end_to_end_id}: {response.status_code} {response.text[:200]}")
    return _status(response.json())


def payee_verify(*, iban: str, name: str) -> VopAnswer:
    """Verification of Payee; a bank that cannot answer in time counts as "not possible"."""
    try:
        response = _request("POST", "/v1/payee-verifications", json={"iban": iban, "name": name})
    except PspUnknown:
        return VopAnswer(result="NOAP")
    if response.status_code != 200:
        return VopAnswer(result="NOAP")
    data = response.json()
    return VopAnswer(result=data["result"], name=data.get("matchedName") or "")


def payment_file_send(*, xml: bytes) -> bytes:
    """Upload a pain.001 file; the answer is the bank's pain.002 acknowledgement."""
    response = _request("POST", "/v1/payment-files", content=xml, headers={"Content-Type": "application/xml"})
    if response.status_code not in (200, 202):
        raise PspError(f"payment file refused: {response.status_code} {response.text[:300]}")
    return response.content


@dataclass(frozen=True)
class PaymentEvent:
    number: int
    kind: str  # payment.settled, payment.rejected, payment.returned
    end_to_end_id: str
    reason_code: str = ""


def events_fetch(*, after: int) -> list[PaymentEvent]:
    """The PSP's feed of what happened to payments after event number `after`, oldest first."""
    response = _request("GET", "/v1/events", params={"after": after})
    if response.status_code != 200:
        raise PspError(f"events: {response.status_code}")
    return [
        PaymentEvent(
            number=item["id"],
            kind=item["type"],
            end_to_end_id=item["endToEndId"],
            reason_code=item["reasonCode"] or "",
        )
        for item in response.json()["events"]
    ]
