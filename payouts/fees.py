"""The platform's fees at the payment provider: what the ledger booked with each reward (campaigns'
FeeCharge rows, brand's budget -> platform's fees) moves from the brand's balance account to the
platform's as an internal transfer (Adyen's TransferService v4, category internal).

Sent after the rewards' commits, never inside them: the schedule `payouts-fee-transfers` (every
minute) gathers the charges not moved yet into one transfer per brand and currency (a viral
campaign's thousands of rewards a second are not thousands of transfers), each with a unique
reference, then sends the transfers due. A transfer is committed before its request leaves, and its
Idempotency-Key is its reference and the number of refusals so far: a lost answer is asked again
with the same key (a replay at the provider, never a second transfer), a refusal (the brand's
account short, `notEnoughBalance`) waits and is asked again with the next key. A batch whose
refunds (rewards taken back) outweigh its fees is not sent: later fees of the brand take it with
them.

An invoice's VAT, taken from the brand's funds when the invoice is issued (campaigns.services.
invoices), moves the same way: the next transfer of the brand and currency gathers it with the
fees (`Invoice.vat_transfer_reference`), and the invoice says it is paid (`vat_moved_at`) when that
transfer is booked. An invoice whose VAT the brand's funds could not cover is taken again each run
and named to staff (and on the brand's finance page) once.

Taken is not moved: the ledger books the move (the platform's balance account <- the brand's) only
on the provider's word that it is booked, its answer or its signed transfer webhook
(balancePlatform.transfer.created/updated), whichever comes first, once per transfer under a unique
key. A transfer the provider refuses or fails later (notEnoughBalance) is asked for again after a
backoff that doubles with each refusal; from REFUSALS_ALERT refusals on it is an open exception for
staff (and the brand's finance page) until it is booked. Each attempt carries its number in the
reference, so a late webhook about an earlier attempt never fails the one under way.
"""

import logging
import secrets
from collections import defaultdict
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns.models import Brand, FeeCharge, Invoice
from campaigns.services.invoices import invoices_vat_take
from joyback.ledger.services import LedgerError, brand_balance_account, platform_bank, transfer_post
from payouts.funding.selectors import virtual_account_for_brand
from payouts.models import FeeTransfer, ReconciliationException
from payouts.models.fees import FEE_TRANSFER_DUE
from payouts.models.fees import FeeTransferStatus as Status
from payouts.models.funding import VirtualAccountStatus
from payouts.models.reconciliation import ExceptionReason
from payouts.providers import adyen
from payouts.psp import PspUnknown, routed_for

logger = logging.getLogger(__name__)

GATHER_MOST = 5000
SEND_MOST = 200
# A transfer waiting for an account, or whose answer was lost, is asked about again after this; a
# refused one after this doubled per refusal (a brand short of money is not asked every minute), at
# most RETRY_MOST apart.
RETRY_AFTER = timedelta(minutes=15)
RETRY_MOST = timedelta(hours=12)
REFUSALS_ALERT = 3
ATTEMPT_MARK = "-R"


def fee_retry_after(*, refusals: int) -> timedelta:
    return min(RETRY_AFTER * 2 ** max(refusals - 1, 0), RETRY_MOST)


def fee_attempt_reference(reference: str, refusals: int) -> str:
    """The reference the provider gets for an attempt: the transfer's own, then with its number."""
    return reference if refusals == 0 else f"{reference}{ATTEMPT_MARK}{refusals}"


def fee_attempt_of(provider_reference: str) -> tuple[str, int]:
    reference, _mark, number = provider_reference.partition(ATTEMPT_MARK)
    return reference, int(number) if number.isdigit() else 0


def fee_ledger_key(reference: str) -> str:
    """The ledger's unique key of a fee transfer's booking: whatever attempt the provider booked,
    the fee moves in the ledger once."""
    return f"fee-transfer:{reference}"


def fee_balance_account_for(*, brand: Brand, currency: str) -> str | None:
    """The brand's balance account at the provider its fees leave from, None while it has none open.
    The one place that says which account that is."""
    account = virtual_account_for_brand(brand=brand, currency=currency)
    if account is None or account.status != VirtualAccountStatus.OPEN or not account.balance_account_id:
        return None
    return account.balance_account_id


def fee_reference_new() -> str:
    return "JBFEE" + secrets.token_hex(8).upper()


def fee_transfers_gather(*, limit: int = GATHER_MOST) -> list[FeeTransfer]:
    """The fees booked and not moved yet, and the VAT of invoices taken and not moved yet, made
    into one transfer per brand and currency; two workers take disjoint rows (SKIP LOCKED)."""
    invoices_vat_take()
    _vat_short_alert()
    made = []
    with transaction.atomic(durable=True):
        charges = list(
            FeeCharge.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(transfer_reference="")
            .order_by("pk")[:limit]
        )
        invoices = list(
            Invoice.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(vat__gt=0, vat_ledger_transaction_id__isnull=False, vat_transfer_reference="")
            .order_by("pk")[:limit]
        )
        groups = defaultdict(lambda: ([], []))
        for charge in charges:
            groups[(charge.brand_id, charge.currency)][0].append(charge)
        for invoice in invoices:
            groups[(invoice.brand_id, invoice.currency)][1].append(invoice)
        for (brand_id, currency), (group, vats) in sorted(groups.items()):
            amount = sum(charge.fee for charge in group) + sum(invoice.vat for invoice in vats)
            if amount <= 0:
                continue  # refunds outweigh fees: later fees of the brand take them along
            fee_transfer = FeeTransfer.objects.create(
                brand_id=brand_id, currency=currency, amount=amount, reference=fee_reference_new()
            )
            FeeCharge.objects.filter(pk__in=[charge.pk for charge in group]).update(
                transfer_reference=fee_transfer.reference
            )
            Invoice.objects.filter(pk__in=[invoice.pk for invoice in vats]).update(
                vat_transfer_reference=fee_transfer.reference
            )
            made.append(fee_transfer)
    return made


def _vat_short_alert() -> None:
    """Each invoice whose VAT the brand's funds could not cover, named to staff once (and so on
    the brand's finance page), under the invoice's lock."""
    short = Invoice.objects.filter(
        vat__gt=0, vat_ledger_transaction_id__isnull=True, vat_short_at__isnull=False
    )
    for invoice_id in list(short.values_list("pk", flat=True)):
        with transaction.atomic(durable=True):
            invoice = (
                Invoice.objects.select_for_update(skip_locked=True)
                .filter(pk=invoice_id, vat_ledger_transaction_id__isnull=True)
                .first()
            )
            if invoice is None:
                continue
            told = ReconciliationException.objects.filter(
                brand_id=invoice.brand_id, reason=ExceptionReason.FEE_REFUSED, detail__contains=invoice.number
            )
            if told.exists():
                continue
            detail = _(
                "The VAT of invoice %(number)s could not be taken: the brand's funds do not cover "
                "it. It is taken as soon as they do."
            ) % {"number": invoice.number}
            ReconciliationException.objects.create(
                brand_id=invoice.brand_id,
                reason=ExceptionReason.FEE_REFUSED,
                detail=detail[:300],
                amount=-invoice.vat,
                currency=invoice.currency,
            )


def fee_transfers_send(*, now=None, limit: int = SEND_MOST) -> dict:
    """Gather, then send every transfer due; what became of each, counted."""
    fee_transfers_gather()
    now = now or timezone.now()
    done = defaultdict(int)
    due = (
        FeeTransfer.objects.filter(status__in=FEE_TRANSFER_DUE, next_attempt_at__lte=now)
        .order_by("next_attempt_at", "pk")
        .values_list("pk", flat=True)[:limit]
    )
    for transfer_id in list(due):
        done[fee_transfer_send(transfer_id=transfer_id, now=now)] += 1
    return dict(done)


def fee_transfer_send(*, transfer_id: int, now=None) -> str:
    """Send one transfer: claimed and committed first (the next attempt set, so a crash is retried
    with the same key), then asked of the provider outside any lock, then its answer recorded."""
    now = now or timezone.now()
    with transaction.atomic(durable=True):
        fee_transfer = (
            FeeTransfer.objects.select_for_update(skip_locked=True)
            .select_related("brand")
            .filter(pk=transfer_id, status__in=FEE_TRANSFER_DUE)
            .first()
        )
        if fee_transfer is None:
            return "busy"
        source = fee_balance_account_for(brand=fee_transfer.brand, currency=fee_transfer.currency)
        fee_transfer.next_attempt_at = now + RETRY_AFTER
        if source is None:
            fee_transfer.status = Status.WAITING
            fee_transfer.save(update_fields=["status", "next_attempt_at"])
            return "waiting"
        fee_transfer.attempts += 1
        fee_transfer.save(update_fields=["attempts", "next_attempt_at"])
        request = adyen.internal_transfer_request(
            source=source,
            destination=settings.ADYEN_BALANCE_ACCOUNT_ID,
            amount=fee_transfer.amount,
            currency=fee_transfer.currency,
            reference=fee_attempt_reference(fee_transfer.reference, fee_transfer.refusals),
            description=f"JoyBack fees {fee_transfer.reference}",
        )
        key = adyen.internal_transfer_key(fee_transfer.reference, fee_transfer.refusals)
        attempt = fee_transfer.refusals
    try:
        with routed_for(livemode=True):
            answer = adyen.internal_transfer_submit(request=request, key=key)
    except PspUnknown:
        return "unknown"  # asked again with the same key: a replay, never a second transfer
    except adyen.AdyenRateLimited:
        return "rate_limited"
    except adyen.AdyenRefused as refused:
        if refused.status in (401, 403):
            logger.error("fee transfer %s: %s", fee_transfer.reference, refused)
            return "error"  # our key or permissions: for the operators, the same request later
        return fee_transfer_outcome(
            reference=fee_transfer.reference,
            attempt=attempt,
            status="refused",
            reason=str(refused),
            message=f"the provider's {refused.status} answer to POST /transfers",
        )
    return fee_transfer_outcome(
        reference=fee_transfer.reference,
        attempt=attempt,
        status=answer.status,
        message=f"the provider's answer to POST /transfers ({answer.transfer_id})",
        reason=answer.reason,
        transfer_id=answer.transfer_id,
    )


def fee_transfer_outcome(
    *, reference: str, attempt: int, status: str, message: str, reason: str = "", transfer_id: str = ""
) -> str:
    """The provider's word on one attempt (its answer, a webhook, or its answer to the poll),
    applied under the transfer's lock: the one path every word takes. Booked books the move in the
    ledger once, whichever attempt it was and whichever word came first, naming `message` (the
    provider's message it rests on); refused or failed counts a refusal of the attempt under way
    only (a late word about an earlier attempt, or the same word again, changes nothing) and sets
    its next attempt; anything else says it is taken."""
    with transaction.atomic(durable=True):
        locked = FeeTransfer.objects.select_for_update().select_related("brand").get(reference=reference)
        if status == "booked":
            return _book(locked, transfer_id=transfer_id, message=message)
        if locked.status == Status.BOOKED or attempt != locked.refusals:
            return f"kept {locked.status}"
        locked.provider_status = status[:40]
        locked.provider_transfer_id = transfer_id or locked.provider_transfer_id
        if status in adyen.FAILED:
            locked.status, locked.reason = Status.REFUSED, reason[:300]
            locked.refusals += 1
            locked.next_attempt_at = timezone.now() + fee_retry_after(refusals=locked.refusals)
            if locked.refusals == REFUSALS_ALERT:
                _alert(locked)
        elif locked.status != Status.SENT:
            locked.status, locked.sent_at = Status.SENT, timezone.now()
        locked.save()
    return locked.status


def _book(locked: FeeTransfer, *, transfer_id: str, message: str) -> str:
    if locked.status == Status.BOOKED:
        if transfer_id and locked.provider_transfer_id and transfer_id != locked.provider_transfer_id:
            # Two attempts both booked at the provider: the ledger's key keeps the second out, and
            # staff ask the provider for it back.
            _alert(locked, twice=transfer_id)
            return "booked_twice"
        return "kept booked"
    try:
        posted = transfer_post(
            source=platform_bank(currency=locked.currency),
            destination=brand_balance_account(brand_id=locked.brand_id, currency=locked.currency),
            amount=locked.amount,
            reason="platform_fee_moved",
            idempotency_key=fee_ledger_key(locked.reference),
            reference=f"brand:{locked.brand_id}",
            description=f"JoyBack fees {locked.reference} to the platform's account: {message}"[:200],
        )
    except LedgerError as error:
        # The ledger says the brand's account cannot have paid it: a drift for staff, told once,
        # and never asked of the provider again (it moved the money).
        logger.error("fee transfer %s booked by the provider, not bookable: %s", locked.reference, error)
        if locked.provider_status != "booked":
            _alert(locked, unbookable=True)
        locked.status, locked.provider_status = Status.SENT, "booked"
        locked.provider_transfer_id = transfer_id or locked.provider_transfer_id
        locked.save()
        return "unbookable"
    locked.status, locked.booked_at, locked.ledger_transaction_id = Status.BOOKED, timezone.now(), posted.pk
    locked.booked_on = message[:120]
    Invoice.objects.filter(vat_transfer_reference=locked.reference, vat_moved_at__isnull=True).update(
        vat_moved_at=locked.booked_at
    )
    locked.provider_status = "booked"
    locked.provider_transfer_id = transfer_id or locked.provider_transfer_id
    locked.sent_at = locked.sent_at or locked.booked_at
    locked.save()
    return Status.BOOKED


def _alert(locked: FeeTransfer, *, twice: str = "", unbookable: bool = False) -> None:
    """One exception for staff, shown on the brand's finance page too."""
    if twice:
        reason = ExceptionReason.DUPLICATE
        detail = _("The provider booked the platform's fee %(reference)s twice (%(id)s); ask it back.")
    elif unbookable:
        reason = ExceptionReason.PROVIDER_AMOUNT
        detail = _("The provider booked the platform's fee %(reference)s; the ledger cannot book it.")
    else:
        reason = ExceptionReason.FEE_REFUSED
        detail = _(
            "The provider refused the platform's fee %(reference)s %(count)s times (%(why)s); "
            "it is asked for again until it is booked."
        )
    ReconciliationException.objects.create(
        brand_id=locked.brand_id,
        reason=reason,
        detail=(
            detail
            % {"reference": locked.reference, "id": twice, "count": locked.refusals, "why": locked.reason}
        )[:300],
        amount=-locked.amount,
        currency=locked.currency,
    )


def fee_transfer_webhook_apply(payload: dict, *, event_id: int | None = None) -> str | None:
    """A signed transfer webhook about one of the platform's fee transfers (either balance account's
    side of it), applied; None when it is about anything else."""
    if payload.get("type") not in adyen.WEBHOOK_TYPES:
        return None
    data = payload.get("data") or {}
    if data.get("category") != "internal" or not data.get("reference"):
        return None
    reference, attempt = fee_attempt_of(str(data["reference"]))
    if not FeeTransfer.objects.filter(reference=reference).exists():
        return None
    outcome = fee_transfer_outcome(
        reference=reference,
        attempt=attempt,
        status=str(data.get("status") or ""),
        reason=str(data.get("reason") or ""),
        transfer_id=str(data.get("id") or "")[:64],
        message=(
            f"the provider's signed {payload['type']} webhook {data.get('id', '')}"
            f" #{data.get('sequenceNumber', '')}" + (f" (event {event_id})" if event_id else "")
        ),
    )
    return f"fee {outcome}"


# The poll: a transfer the provider took (received, authorised) and never said more of. Its
# webhooks may be lost or delayed; after POLL_AFTER the provider is asked (GET /transfers/{id}) at
# most every POLL_EVERY, and its answer goes through fee_transfer_outcome as a webhook would. A
# transfer still not booked after STUCK_AFTER is named to staff once (and so on the brand's pages).
POLL_AFTER = timedelta(hours=1)
POLL_EVERY = timedelta(minutes=30)
STUCK_AFTER = timedelta(hours=24)
POLL_MOST = 200


def fee_transfers_poll(*, now=None, limit: int = POLL_MOST) -> dict:
    """Ask the provider about each fee transfer taken more than POLL_AFTER ago and not booked nor
    failed since; what became of each, counted."""
    now = now or timezone.now()
    done = defaultdict(int)
    taken = (
        FeeTransfer.objects.filter(status=Status.SENT, sent_at__lte=now - POLL_AFTER)
        .filter(Q(polled_at__isnull=True) | Q(polled_at__lte=now - POLL_EVERY))
        # booked at the provider and refused by the ledger: already staff's (PROVIDER_AMOUNT)
        .exclude(provider_status="booked")
        .order_by("sent_at", "pk")
        .values_list("pk", flat=True)[:limit]
    )
    for transfer_id in list(taken):
        done[fee_transfer_poll(transfer_id=transfer_id, now=now)] += 1
    return dict(done)


def fee_transfer_poll(*, transfer_id: int, now=None) -> str:
    """One transfer: marked polled (so two workers do not both ask), asked about outside any lock,
    its answer applied by the one function every word of the provider goes through."""
    now = now or timezone.now()
    with transaction.atomic(durable=True):
        fee_transfer = (
            FeeTransfer.objects.select_for_update(skip_locked=True)
            .filter(pk=transfer_id, status=Status.SENT)
            .first()
        )
        if fee_transfer is None:
            return "busy"
        fee_transfer.polled_at = now
        fee_transfer.save(update_fields=["polled_at"])
    outcome = "unknown"
    if fee_transfer.provider_transfer_id:
        try:
            with routed_for(livemode=True):
                answer = adyen.transfer_get(transfer_id=fee_transfer.provider_transfer_id)
        except (PspUnknown, adyen.AdyenRefused) as error:
            logger.warning("fee transfer %s: the poll got no answer: %s", fee_transfer.reference, error)
            answer = None
            outcome = "no_answer"
        else:
            if answer is None:
                outcome = "not_found"
        if answer is not None:
            reference, attempt = fee_attempt_of(answer.reference or fee_transfer.reference)
            if reference != fee_transfer.reference:
                logger.error(
                    "fee transfer %s: the provider's %s is %s", reference, answer.transfer_id, reference
                )
                outcome = "mismatch"
            else:
                outcome = fee_transfer_outcome(
                    reference=reference,
                    attempt=attempt,
                    status=answer.status,
                    reason=answer.reason,
                    transfer_id=answer.transfer_id,
                    message=f"the provider's answer to GET /transfers/{answer.transfer_id} "
                    f"at {now.isoformat(timespec='seconds')}",
                )
    _stuck_alert(transfer_id=transfer_id, now=now, why=outcome)
    return outcome


def _stuck_alert(*, transfer_id: int, now, why: str) -> None:
    with transaction.atomic(durable=True):
        locked = (
            FeeTransfer.objects.select_for_update()
            .filter(
                pk=transfer_id,
                status=Status.SENT,
                stuck_alerted_at__isnull=True,
                sent_at__lte=now - STUCK_AFTER,
            )
            .first()
        )
        if locked is None:
            return
        words = {
            "not_found": _("the provider knows no transfer with its id"),
            "no_answer": _("the provider did not answer"),
            "mismatch": _("the provider's transfer names another reference"),
            "unknown": _("no transfer id was given by the provider"),
        }
        detail = _(
            "The provider took the platform's fee %(reference)s (%(id)s) on %(sent)s and has not "
            "booked or failed it (%(status)s). Ask the provider about it."
        ) % {
            "reference": locked.reference,
            "id": locked.provider_transfer_id or "-",
            "sent": locked.sent_at.date().isoformat(),
            "status": words.get(why, locked.provider_status or "-"),
        }
        ReconciliationException.objects.create(
            brand_id=locked.brand_id,
            reason=ExceptionReason.FEE_STUCK,
            detail=detail[:300],
            amount=-locked.amount,
            currency=locked.currency,
        )
        locked.stuck_alerted_at = now
        locked.save(update_fields=["stuck_alerted_at"])
