"""Sending a payout to the payment provider, and applying what the provider says about it."""

import json
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from joyback.modes import brand_livemode
from payouts import psp
from payouts.funding.selectors import brand_balance_account_id, brands_custody_blocked
from payouts.models import Payout
from payouts.models.payouts import PayoutStatus
from payouts.submission.crash import crash_point
from payouts.submission.outcomes import (
    payout_reject,
    payout_return,
    payout_settle,
    payouts_to_replaced_details_cancel,
)
from payouts.submission.states import SENT, payout_transition
from payouts.vop import payout_creditor_name, payout_payee_verify, vop_current
from verification.models import Participant


def payout_payment_order(payout: Payout) -> psp.PaymentOrder:
    livemode = brand_livemode(payout.brand_id)
    return psp.PaymentOrder(
        end_to_end_id=payout.end_to_end_id,
        scheme=payout.scheme,
        amount=payout.amount,
        currency=payout.currency,
        creditor_name=payout_creditor_name(payout, vop_current(payee=payout.payee)),
        account=payout.payee.account,
        remittance=f"JoyBack reward {payout.end_to_end_id}",
        beneficiary_reference=payout.beneficiary_reference or "",
        address=json.loads(payout.payee.address) if payout.payee.address else None,
        livemode=livemode,
        # The brand's own balance account: the provider pays the person from the brand's money.
        balance_account_id=brand_balance_account_id(brand=payout.brand_id, currency=payout.currency)
        if livemode
        else "",
    )


def payout_submit(*, payout_id: int) -> Payout:
    """Take a payout as far as it can go now: payee verified, then sent to the PSP exactly once."""
    payout = Payout.objects.select_related("payee").get(pk=payout_id)
    if payout.payee.replaced_at is not None and payout.open:
        # The person replaced these details after the payout was made: it never goes to them.
        with transaction.atomic(durable=True):
            Participant.objects.select_for_update().filter(pk=payout.participant_id).first()
            payouts_to_replaced_details_cancel(participant_id=payout.participant_id)
        return Payout.objects.get(pk=payout.pk)
    if payout.status == PayoutStatus.CREATED and not payout_payee_verify(payout):
        return payout
    if payout.status != PayoutStatus.PAYEE_VERIFIED:
        return payout
    if brands_custody_blocked(brand_ids=[payout.brand_id]):
        # The brand's own account at the provider is not allowed to pay, or drifted from its ledger
        # account: nothing of this brand's leaves until that is cleared (other brands' payouts go
        # on, and so do they while the platform's own account drifts: nothing is paid from it); the
        # sweep comes back for this payout.
        Payout.objects.filter(pk=payout.pk).update(
            next_check_at=timezone.now() + timedelta(seconds=settings.PAYOUT_STALE_SECONDS)
        )
        return payout
    crash_point("before_claim")
    # The claim is committed before anything leaves: from here on the payout is "sent" as far as
    # every other worker knows, and only a status query may decide it was not.
    with transaction.atomic(durable=True):
        claimed = payout_transition(
            payout,
            "submit",
            submissions=F("submissions") + 1,
            submitted_at=timezone.now(),
            next_check_at=timezone.now() + timedelta(seconds=settings.PAYOUT_STALE_SECONDS),
        )
    if not claimed:
        return Payout.objects.get(pk=payout.pk)
    return payout_send(payout)


def payout_send(payout: Payout) -> Payout:
    """The one call that moves money, for a payout already claimed (committed as submitted)."""
    crash_point("after_claim")
    try:
        status = psp.payment_submit(payout_payment_order(payout))
    except psp.PspUnknown as error:
        crash_point("after_send")
        with transaction.atomic(durable=True):
            payout_transition(
                payout,
                "answer_lost",
                detail=str(error),
                next_check_at=timezone.now() + timedelta(seconds=2 * settings.PSP_TIMEOUT_SECONDS),
            )
        return payout
    crash_point("after_send")
    return payout_status_apply(payout=payout, status=status)


def payout_status_apply(*, payout: Payout, status: psp.PaymentStatus) -> Payout:
    """What the bank said of a payout, applied once whatever order the answers come in."""
    if status.returned:
        return payout_return(payout=payout, reason_code=status.reason_code or "MS03")
    if status.settled:
        return payout_settle(payout=payout, bank_reference=status.bank_reference)
    if status.rejected:
        return payout_reject(
            payout=payout, reason_code=status.reason_code or "MS03", detail=status.provider_status
        )
    with transaction.atomic(durable=True):
        payout_transition(
            payout,
            "accept",
            reason_code="",
            detail=f"bank status {status.provider_status or status.status}",
            psp_reference=status.bank_reference or payout.psp_reference,
            next_check_at=timezone.now() + timedelta(seconds=settings.PAYOUT_STALE_SECONDS),
        )
    return payout


def payout_status_check(*, payout_id: int) -> Payout:
    """A payout sent with no final answer: ask the bank, and resend only if it never got it."""
    payout = Payout.objects.select_related("payee").get(pk=payout_id)
    if payout.status not in SENT:
        return payout
    status = psp.payment_status(payout.end_to_end_id)
    if status is not None:
        return payout_status_apply(payout=payout, status=status)
    if payout.status == PayoutStatus.ACCEPTED:
        return payout
    # The provider has no transfer with this reference (the crash or timeout came before the
    # request got there): the same request goes again with the same Idempotency-Key, so were the
    # first copy to arrive late after all, the provider answers the retry as a replay of it.
    with transaction.atomic(durable=True):
        reopened = payout_transition(
            payout,
            "resend",
            detail="not received by the bank; sending again",
        )
    return payout_submit(payout_id=payout.pk) if reopened else payout
