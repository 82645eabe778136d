"""The webhook events verification emits about claims, in one shape for every flow."""

from joyback.api.webhooks.delivery import webhook_events_emit
from verification.models import ActionClaim


def claim_event_data(claim: ActionClaim) -> dict:
    purchase = (
        claim.purchase
        if claim.purchase_id
        else claim.referred_purchase
        if getattr(claim, "referred_purchase_id", None)
        else None
    )
    return {
        "claim_id": claim.pk,
        "campaign_id": claim.campaign_id,
        "participant_id": claim.participant_id,
        "trigger": claim.rule.trigger,
        "status": claim.status,
        "reason": claim.reason,
        "amount": claim.amount,
        "currency": claim.currency,
        "order_id": purchase.order_id if purchase else None,
    }


def claim_event_emit(claim: ActionClaim, *types: str, endpoints=None) -> None:
    """Emit each event type about this claim (in the caller's transaction). endpoints: the brand's
    enabled endpoints when the caller knows them already ([] for none), else they are read."""
    webhook_events_emit(
        brand_id=claim.campaign.brand_id, types=list(types), data=claim_event_data(claim), endpoints=endpoints
    )
