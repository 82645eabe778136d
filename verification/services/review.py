"""Decisions on a claim from outside the checks: the brand's compliance clearance and the review queue."""

from functools import partial

from django.db import transaction
from django.utils import timezone

from verification.events import claim_event_emit
from verification.models import (
    ActionClaim,
    ClaimStatus,
    Purchase,
    PurchaseStatus,
    ReviewDecision,
)
from verification.reach import reach_review_decide
from verification.services.refusals import ClaimRefused
from verification.services.rewards import (
    claim_hold_release,
    claim_reward_post,
    claim_reward_take_back,
    participant_payout_due,
)
from verification.services.shares import engagement_recheck


def compliance_cleared(*, claim_id: int) -> ActionClaim:
    """The brand cleared a doubtful disclosure: the share waits for its window, or is checked now."""
    with transaction.atomic(durable=True):
        ActionClaim.objects.filter(pk=claim_id, status=ClaimStatus.PENDING).update(reason="awaiting_window")
    claim = ActionClaim.objects.get(pk=claim_id)
    if claim.status == ClaimStatus.PENDING and claim.check_at and claim.check_at <= timezone.now():
        return engagement_recheck(claim_id=claim_id)
    return claim


# The review queue: a person decides what the signals could not.


def _waits_for_return_window(claim: ActionClaim) -> bool:
    if not claim.referred_purchase_id or claim.ledger_transaction_id:
        return False
    return Purchase.objects.filter(pk=claim.referred_purchase_id, status=PurchaseStatus.PENDING).exists()


def claim_review(*, claim: ActionClaim, decided_by, decision: str, reason: str) -> ActionClaim:
    """Approve (pay the held reward) or reject (release it, or take back a reward already posted)."""
    if decision not in ("approve", "reject"):
        raise ClaimRefused("review_decision")
    if not reason.strip():
        raise ClaimRefused("review_reason")
    with transaction.atomic(durable=True):
        locked = ActionClaim.objects.select_for_update().select_related("rule", "campaign").get(pk=claim.pk)
        if locked.status != ClaimStatus.NEEDS_REVIEW:
            raise ClaimRefused("review_done")
        ReviewDecision.objects.create(
            claim=locked,
            brand_id=locked.brand_id,
            decided_by=decided_by,
            decision=decision,
            reason=reason[:300],
        )
        if (
            locked.rule.pays_by_reach
            and not locked.purchase_id
            and (locked.reach_paid or locked.metrics.exists())
        ):
            # A share paid by reach (its views were read): the decision is on the reading it stopped.

            reach_review_decide(locked=locked, decision=decision)
            return locked
        if decision == "approve" and _waits_for_return_window(locked):
            # A referred sale approved while its order may still come back: it waits, held, for
            # the return window like any other, and is confirmed with its purchase.
            locked.status, locked.reason = ClaimStatus.PENDING, "return_window"
            locked.save(update_fields=["status", "reason"])
            return locked
        if decision == "approve":
            if not locked.ledger_transaction_id:
                claim_reward_post(locked)
            else:
                # Flagged after it was posted: its payout waited for this decision. Marked after the
                # commit: the claim's lock comes after the person's in the lock order.
                transaction.on_commit(partial(participant_payout_due, participant_id=locked.participant_id))
            locked.status, locked.reason = ClaimStatus.APPROVED, "review_approved"
        else:
            claim_hold_release(locked)
            if locked.ledger_transaction_id:
                claim_reward_take_back(
                    locked,
                    reason=f"review rejected claim #{locked.pk}",
                    idempotency_key=f"review-clawback:{locked.pk}",
                )
            locked.status, locked.reason = ClaimStatus.REJECTED, "review_rejected"
        locked.decided_at = timezone.now()
        locked.save(update_fields=["status", "reason", "decided_at"])
        claim_event_emit(locked, "reward.approved" if decision == "approve" else "claim.rejected")
    return locked
