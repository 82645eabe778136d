from dataclasses import dataclass

from django.db.models import Count, Exists, OuterRef, Q

from campaigns.models import Campaign, Trigger
from verification.models import ActionClaim, ClaimStatus, OptinCode, Participant, ReviewDecision


def participant_get_by_token(*, token: str) -> Participant | None:
    return Participant.objects.filter(token=token).select_related("brand").first()


def participant_get(*, participant_id, brand_id) -> Participant | None:
    """The participant, with `has_claims` (any action at all) in the same query."""
    if not participant_id:
        return None
    return (
        Participant.objects.filter(pk=participant_id, brand_id=brand_id)
        .annotate(has_claims=Exists(ActionClaim.objects.filter(participant=OuterRef("pk"))))
        .first()
    )


def participant_claims(*, participant: Participant, campaign: Campaign | None = None):
    claims = ActionClaim.objects.filter(participant=participant).select_related(
        "rule", "campaign", "identity"
    )
    if campaign is not None:
        claims = claims.filter(campaign=campaign)
    return claims.order_by("created_at")


@dataclass(frozen=True)
class Step:
    rule: object
    claim: ActionClaim | None
    locked: bool

    @property
    def state(self) -> str:
        if self.claim is not None:
            return self.claim.status
        return "locked" if self.locked else "todo"


def campaign_steps(*, campaign: Campaign, participant: Participant | None) -> list[Step]:
    claims = {}
    if participant is not None:
        claims = {
            claim.rule_id: claim for claim in participant_claims(participant=participant, campaign=campaign)
        }
    steps = []
    for rule in campaign.rules.all():
        done = rule.prerequisite_id is None or (
            rule.prerequisite_id in claims and claims[rule.prerequisite_id].status == ClaimStatus.APPROVED
        )
        steps.append(Step(rule=rule, claim=claims.get(rule.pk), locked=not done))
    return steps


def optin_pending(*, campaign: Campaign, participant: Participant | None) -> OptinCode | None:
    if participant is None or not campaign.rules.filter(trigger=Trigger.WHATSAPP_OPTIN).exists():
        return None
    return OptinCode.objects.filter(campaign=campaign, participant=participant).first()


def campaign_funnel(*, campaign: Campaign) -> dict:
    counts = ActionClaim.objects.filter(campaign=campaign).aggregate(
        actions=Count("pk"),
        verified=Count("pk", filter=Q(status=ClaimStatus.APPROVED)),
        pending=Count("pk", filter=Q(status__in=[ClaimStatus.PENDING, ClaimStatus.NEEDS_REVIEW])),
        rejected=Count("pk", filter=Q(status=ClaimStatus.REJECTED)),
    )
    counts["people"] = ActionClaim.objects.filter(campaign=campaign).values("participant").distinct().count()
    return counts


def campaign_recent_claims(*, campaign: Campaign, limit: int = 15):
    return (
        ActionClaim.objects.filter(campaign=campaign)
        .select_related("rule", "identity")
        .order_by("-created_at")[:limit]
    )


def review_queue_for_brand(*, brand):
    return (
        ActionClaim.objects.filter(campaign__brand=brand, status=ClaimStatus.NEEDS_REVIEW)
        .select_related("campaign", "rule", "identity")
        .prefetch_related("signals")
        .order_by("created_at")
    )


def review_decisions_for_brand(*, brand, limit: int = 20):
    return (
        ReviewDecision.objects.filter(claim__campaign__brand=brand)
        .select_related("claim__rule", "claim__identity", "decided_by")
        .order_by("-created_at")[:limit]
    )


def claim_get_for_brand(*, brand, claim_id: int) -> ActionClaim | None:
    return ActionClaim.objects.filter(campaign__brand=brand, pk=claim_id).first()
