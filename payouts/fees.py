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
"""

import logging
import secrets
from collections import defaultdict
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from campaigns.models import Brand, FeeCharge
from payouts.funding.selectors import virtual_account_for_brand
from payouts.models import FeeTransfer
from payouts.models.fees import FeeTransferStatus as Status
from payouts.models.funding import VirtualAccountStatus
from payouts.providers import adyen
from payouts.psp import PspUnknown, routed_for

logger = logging.getLogger(__name__)

GATHER_MOST = 5000
SEND_MOST = 200
# A transfer refused, waiting for an account, or whose answer was lost is asked about again after this.
RETRY_AFTER = timedelta(minutes=15)


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
    """The fees booked and not moved yet, made into one transfer per brand and currency; two
    workers take disjoint charges (SKIP LOCKED)."""
    made = []
    with transaction.atomic(durable=True):
        charges = list(
            FeeCharge.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(transfer_reference="")
            .order_by("pk")[:limit]
        )
        groups = defaultdict(list)
        for charge in charges:
            groups[(charge.brand_id, charge.currency)].append(charge)
        for (brand_id, currency), group in sorted(groups.items()):
            amount = sum(charge.fee for charge in group)
            if amount <= 0:
                continue  # refunds outweigh fees: later fees of the brand take them along
            fee_transfer = FeeTransfer.objects.create(
                brand_id=brand_id, currency=currency, amount=amount, reference=fee_reference_new()
            )
            FeeCharge.objects.filter(pk__in=[charge.pk for charge in group]).update(
                transfer_reference=fee_transfer.reference
            )
            made.append(fee_transfer)
    return made


def fee_transfers_send(*, now=None, limit: int = SEND_MOST) -> dict:
    """Gather, then send every transfer due; what became of each, counted."""
    fee_transfers_gather()
    now = now or timezone.now()
    done = defaultdict(int)
    due = (
        FeeTransfer.objects.exclude(status=Status.SENT)
        .filter(next_attempt_at__lte=now)
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
            .filter(pk=transfer_id)
            .exclude(status=Status.SENT)
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
            reference=fee_transfer.reference,
            description=f"JoyBack fees {fee_transfer.reference}",
        )
        key = adyen.internal_transfer_key(fee_transfer.reference, fee_transfer.refusals)
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
        return _record(fee_transfer, status=Status.REFUSED, reason=str(refused), refused=True)
    if answer.refused:
        return _record(
            fee_transfer,
            status=Status.REFUSED,
            provider_status=answer.status,
            reason=answer.reason,
            refused=True,
            transfer_id=answer.transfer_id,
        )
    return _record(
        fee_transfer, status=Status.SENT, provider_status=answer.status, transfer_id=answer.transfer_id
    )


def _record(
    fee_transfer: FeeTransfer,
    *,
    status: str,
    reason: str = "",
    provider_status: str = "",
    refused: bool = False,
    transfer_id: str = "",
) -> str:
    with transaction.atomic(durable=True):
        locked = FeeTransfer.objects.select_for_update().get(pk=fee_transfer.pk)
        if locked.status == Status.SENT:
            return "sent"
        locked.status, locked.reason = status, reason[:300]
        locked.provider_status = provider_status[:40]
        locked.provider_transfer_id = transfer_id or locked.provider_transfer_id
        if refused:
            locked.refusals += 1
        else:
            locked.sent_at = timezone.now()
        locked.save()
    return status
