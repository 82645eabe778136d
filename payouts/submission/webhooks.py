"""The payment provider's transfer webhooks: stored by the request, applied by the standing worker."""

import json

from django.conf import settings
from django.utils import timezone

from joyback.queue import claim_and_process, standing_work_inline
from payouts import sql
from payouts.models import Payout, TransferEvent
from payouts.psp import provider
from payouts.submission.submit import payout_status_apply


class TransferWebhookRefused(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


TRANSFER_EVENT_MAX_ATTEMPTS = 10


def transfer_webhook_receive(*, body: bytes, headers) -> int | None:
    """A provider's transfer webhook: refused unless signed with one of our keys, else stored in one
    statement (a redelivery is a no-op); the standing worker applies it. The new row's id, or None."""
    adapter = provider()
    if not adapter.webhook_verify(body, headers):
        raise TransferWebhookRefused(401, "signature missing or wrong")
    try:
        payload = json.loads(body)
        event_id = adapter.webhook_event_id(payload)
    except (ValueError, KeyError, TypeError):
        raise TransferWebhookRefused(400, "not a transfer webhook") from None
    rows = sql.transfer_event_insert(
        [settings.PAYOUT_PROVIDER, event_id, json.dumps(payload), timezone.now()]
    )
    if not rows:
        return None
    standing_work_inline(transfer_events_process, ids=[rows[0][0]])
    return rows[0][0]


def transfer_events_process(*, limit: int = 200, ids: list[int] | None = None) -> int:
    """Apply stored transfer webhooks, oldest first; each is safe to apply again, and one that comes
    out of order never moves a payout back (every transition names the states it may leave)."""
    return claim_and_process(
        TransferEvent.objects.filter(processed_at__isnull=True, attempts__lt=TRANSFER_EVENT_MAX_ATTEMPTS),
        process=_transfer_event_apply,
        limit=limit,
        order_by="pk",
        ids=ids,
    )


def _transfer_event_apply(event_id: int) -> None:
    # deferred: left to the lifecycle rework
    from payouts.fees import fee_transfer_webhook_apply
    from payouts.funding.onboarding import account_holder_webhook_apply
    from payouts.funding.services import provider_transfer_apply

    event = TransferEvent.objects.get(pk=event_id)
    # A brand's account holder at the provider (its capabilities, its verification) first; then
    # whatever moves on a brand's virtual account is funding's to book or to report, before any
    # reading of it as a payout: a transfer out of a brand's account is a payout of ours only when
    # its reference is one of that brand's payouts. The platform's fee moving between a brand's
    # account and the platform's is the fees' to book, on either account's webhook.
    outcome = (
        account_holder_webhook_apply(event.payload)
        or fee_transfer_webhook_apply(event.payload, event_id=event.pk)
        or provider_transfer_apply(event.payload)
        or _payout_apply(event.payload)
    )
    TransferEvent.objects.filter(pk=event_id, processed_at__isnull=True).update(
        processed_at=timezone.now(), outcome=outcome[:40], claimed_until=None
    )


def _payout_apply(payload: dict) -> str:
    found = provider().webhook_transfer(payload)
    if found is None:
        data = payload.get("data") or {}
        moved_in = data.get("direction") == "incoming" or data.get("category") == "internal"
        return "not_a_virtual_account" if moved_in else "not_a_payout"
    reference, status = found
    payout = Payout.objects.filter(end_to_end_id=reference).first()
    if payout is None:
        return "not_a_payout"
    before = payout.status
    payout = payout_status_apply(payout=payout, status=status)
    return f"{before}->{payout.status}" if payout.status != before else f"kept {payout.status}"
