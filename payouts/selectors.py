from django.db.models import Count, Exists, OuterRef, Sum

from joyback.ledger.models import Account, AccountKind
from payouts.models import PayeeAccount
from verification.models import ActionClaim, ClaimStatus, Participant


def payee_current(*, participant: Participant) -> PayeeAccount | None:
    return PayeeAccount.objects.filter(participant=participant, replaced_at__isnull=True).first()


def participant_owed(*, participant: Participant) -> list[Account]:
    """What the ledger owes this person, per currency (approved rewards not yet paid out)."""
    return list(
        Account.objects.filter(
            kind=AccountKind.PARTICIPANT_PAYABLE,
            brand_id=participant.brand_id,
            subject=participant.ledger_subject,
        )
    )


def campaign_payout_readiness(*, campaign) -> dict:
    """Approved rewards of the campaign, split by whether the person has given bank details yet."""
    approved = ActionClaim.objects.filter(campaign=campaign, status=ClaimStatus.APPROVED)
    has_payee = Exists(
        PayeeAccount.objects.filter(participant=OuterRef("participant"), replaced_at__isnull=True)
    )
    totals = {}
    for label, claims in (("ready", approved.filter(has_payee)), ("waiting", approved.exclude(has_payee))):
        found = claims.aggregate(amount=Sum("amount", default=0), people=Count("participant", distinct=True))
        totals[label], totals[f"{label}_people"] = found["amount"], found["people"]
    return {"readiness": totals, "currency": campaign.currency}
