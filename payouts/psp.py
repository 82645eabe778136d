"""The payment provider behind the payouts, as the payouts see it: the port its adapters implement.

Single payments (SEPA Instant, UK Faster Payments, US ACH, cross-border) go through the provider
chosen by PAYOUT_PROVIDER among the adapters registered here (payouts/providers/: Adyen's Transfers
API), whose signed webhooks tell what became of them. An adapter imports this module, never the
reverse: payouts.apps registers each at start-up (payouts.providers.providers_register).
SEPA batch files go up as ISO 20022 pain.001 on the bank's file channel, and Verification of Payee
keeps its own small interface (payee_verify): Adyen's guides describe a counterparty name check
(POST /verifyCounterpartyName, a role its support enables), but its published OpenAPI specifications
carry no schema for it, so there is no documented request to build and contract-test against.
In the sandbox every one of these is answered in-process by the sandbox bank (payouts/sandbox/).
"""

import threading
from dataclasses import dataclass
from typing import Protocol

import httpx
from django.conf import settings

from joyback.modes import provider_routed_for, provider_sandboxed, provider_test_routed
from payouts.bank_accounts import BankAccount

SETTLED = frozenset({"ACSC", "ACCC"})


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
    account: BankAccount
    remittance: str = ""
    # The payout's short reference for rails that take no EndToEndId-long one (Payout's).
    beneficiary_reference: str = ""
    # The payee's address where the rail needs one: line1, line2, city, postalCode, stateOrProvince,
    # country (Adyen's Address).
    address: dict | None = None
    # The payout's brand's mode when the caller knows it (saves a read per payment); None: read it.
    livemode: bool | None = None
    # The brand's own balance account at the provider the money leaves from (its custody); empty
    # only for a brand with none (test data, and brands from before they held their own).
    balance_account_id: str = ""


@dataclass(frozen=True)
class PaymentStatus:
    status: str  # ISO 20022 transaction status: ACSC, ACSP, RJCT, ...
    reason_code: str = ""
    bank_reference: str = ""
    returned: bool = False
    provider_status: str = ""  # the provider's own word for an unfinished one (received, authorised)

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


class PayoutProvider(Protocol):
    """What a payment provider's adapter offers the payouts (a module of these functions will do)."""

    def transfer_submit(self, order: PaymentOrder) -> PaymentStatus:
        """Send one payment; PspUnknown when the answer is lost, PspError when refused."""

    def transfer_find(self, end_to_end_id: str, *, balance_account_id: str = "") -> PaymentStatus | None:
        """What the provider knows of a payment; None when it never received it."""

    def webhook_verify(self, body: bytes, headers) -> bool:
        """Whether a webhook is signed with one of our keys."""

    def webhook_event_id(self, payload: dict) -> str:
        """The same for every delivery of one webhook."""

    def webhook_transfer(self, payload: dict) -> tuple[str, PaymentStatus] | None:
        """(EndToEndId, status) of a payout's transfer webhook; None for any other."""


_providers: dict[str, PayoutProvider] = {}
# The provider whose API the sandbox bank speaks: a test brand's payouts go through its adapter,
# whatever PAYOUT_PROVIDER says.
SANDBOX_PROVIDER = "adyen"


def provider_register(*, name: str, adapter: PayoutProvider) -> None:
    _providers[name] = adapter


def provider(name: str | None = None) -> PayoutProvider:
    """The adapter registered under `name`, by default PAYOUT_PROVIDER's."""
    name = name or settings.PAYOUT_PROVIDER
    try:
        return _providers[name]
    except KeyError:
        raise LookupError(f"no payout provider {name!r} registered (payouts.providers)") from None


_local = threading.local()


# Where the sandbox bank answers Adyen's Transfers API, its balance platform and the bank's own
# channel, in-process: a test brand's calls go here on every deployment (joyback.modes).
SANDBOX_ADYEN_API_BASE = "http://sandbox.localhost/sandbox/bank/btl/v4"
SANDBOX_ADYEN_BALANCE_PLATFORM_API_BASE = "http://sandbox.localhost/sandbox/bank/bcl/v2"
SANDBOX_ADYEN_LEGAL_ENTITY_API_BASE = "http://sandbox.localhost/sandbox/bank/lem/v4"
SANDBOX_PSP_API_BASE = "http://sandbox.localhost/sandbox/bank"

# The one routing point, under the name the payouts know it by.
routed_for = provider_routed_for


def sandbox_routed() -> bool:
    return provider_sandboxed()


def adyen_api_base() -> str:
    return SANDBOX_ADYEN_API_BASE if provider_test_routed() else settings.ADYEN_API_BASE


def adyen_balance_platform_api_base() -> str:
    if provider_test_routed():
        return SANDBOX_ADYEN_BALANCE_PLATFORM_API_BASE
    return settings.ADYEN_BALANCE_PLATFORM_API_BASE


def adyen_legal_entity_api_base() -> str:
    if provider_test_routed():
        return SANDBOX_ADYEN_LEGAL_ENTITY_API_BASE
    return settings.ADYEN_LEGAL_ENTITY_API_BASE


def psp_api_base() -> str:
    return SANDBOX_PSP_API_BASE if provider_test_routed() else settings.PSP_API_BASE


def psp_client() -> httpx.Client:
    """One client per thread and configuration: building one (its connection pool, its TLS
    context) costs more than the request, and a worker sends many."""
    key = (sandbox_routed(), settings.PSP_TIMEOUT_SECONDS)
    cached = getattr(_local, "clients", {})
    if key not in cached:
        timeout = settings.PSP_TIMEOUT_SECONDS
        if key[0]:
            from payouts.sandbox.transport import TestModeBankTransport  # deferred: only when routed to it

            client = httpx.Client(transport=TestModeBankTransport(), timeout=timeout)
        else:
            client = httpx.Client(timeout=timeout)
        _local.clients = cached = {**cached, key: client}
    return cached[key]


def http_request(method: str, url: str, **kwargs) -> httpx.Response:
    """One request to a provider; a lost or failed answer is PspUnknown, never a guess."""
    try:
        response = psp_client().request(method, url, **kwargs)
    except (httpx.TimeoutException, httpx.TransportError) as error:
        raise PspUnknown(f"{method} {httpx.URL(url).path}: {type(error).__name__}") from None
    if response.status_code >= 500:
        raise PspUnknown(f"{method} {httpx.URL(url).path}: HTTP {response.status_code}")
    return response


def _provider() -> PayoutProvider:
    return provider(SANDBOX_PROVIDER if provider_test_routed() else None)


def _payout_livemode(end_to_end_id: str) -> bool:
    from payouts.models import Payout  # deferred: no cycle; left to the port's rework

    return not Payout.objects.filter(end_to_end_id=end_to_end_id, brand__livemode=False).exists()


def _payout_balance_account(end_to_end_id: str) -> str:
    """The brand's own balance account a payout left from (payouts.funding.selectors)."""
    from payouts.funding.selectors import (
        brand_balance_account_id,
    )  # deferred: funding reads load models the port must not
    from payouts.models import Payout  # deferred: no cycle; left to the port's rework

    payout = Payout.objects.filter(end_to_end_id=end_to_end_id).select_related("brand").first()
    if payout is None:
        return ""
    return brand_balance_account_id(brand=payout.brand, currency=payout.currency)


def payment_submit(order: PaymentOrder) -> PaymentStatus:
    """Send one payment. Raises PspUnknown when the answer is lost: the caller must then query.

    A provider that refuses the payment for what it says (an account, a name, an address it will
    not take) made nothing and would refuse the same request again: that is the payment's answer,
    rejected with the refusal's ISO 20022 reason, so every path that sends (one payout or a batch)
    rejects it once, gives the money back to the person and tells them, and never sends it again. A
    refusal about us instead (credentials) stays an error for the operators; one that asks us to
    wait (rate limit) is a request that made nothing, sent again later with the same key."""
    livemode = order.livemode if order.livemode is not None else _payout_livemode(order.end_to_end_id)
    with routed_for(livemode=livemode):
        try:
            return _provider().transfer_submit(order)
        except PspError as refused:
            if getattr(refused, "retry_after", False) is not False:
                raise PspUnknown(f"not made, to send again later: {refused}") from None
            reason_code = getattr(refused, "payment_reason_code", None)
            if reason_code is None:
                raise
            return PaymentStatus(status="RJCT", reason_code=reason_code, provider_status=str(refused)[:200])


def payment_status(end_to_end_id: str) -> PaymentStatus | None:
    """What the provider knows of a payment; None when it never received it."""
    livemode = _payout_livemode(end_to_end_id)
    with routed_for(livemode=livemode):
        return _provider().transfer_find(
            end_to_end_id, balance_account_id=_payout_balance_account(end_to_end_id) if livemode else ""
        )


def _bank_headers() -> dict:
    return {"Authorization": f"Bearer {settings.PSP_API_KEY}"}


def payee_verify(*, iban: str, name: str, livemode: bool = True) -> VopAnswer:
    """Verification of Payee; a bank that cannot answer in time counts as "not possible". A test
    payee is asked of the sandbox bank."""
    with routed_for(livemode=livemode):
        return _payee_verify(iban=iban, name=name)


def _payee_verify(*, iban: str, name: str) -> VopAnswer:
    try:
        response = http_request(
            "POST",
            f"{psp_api_base()}/v1/payee-verifications",
            json={"iban": iban, "name": name},
            headers=_bank_headers(),
        )
    except PspUnknown:
        return VopAnswer(result="NOAP")
    if response.status_code != 200:
        return VopAnswer(result="NOAP")
    data = response.json()
    return VopAnswer(result=data["result"], name=data.get("matchedName") or "")


def payment_file_send(*, xml: bytes) -> bytes:
    """Upload a pain.001 file; the answer is the bank's pain.002 acknowledgement."""
    response = http_request(
        "POST",
        f"{psp_api_base()}/v1/payment-files",
        content=xml,
        headers={**_bank_headers(), "Content-Type": "application/xml"},
    )
    if response.status_code not in (200, 202):
        raise PspError(f"payment file refused: {response.status_code} {response.text[:300]}")
    return response.content
