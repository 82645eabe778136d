"""Participants: creating them, their identities and ledger accounts, erasure and export, and
flags raised after their claims were made."""

from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from campaigns.models import Brand
from joyback.crypto import fingerprint
from joyback.ledger.models import Account, AccountKind
from joyback.ledger.services import (
    account_get_or_create,
    account_open,
)
from verification.models import (
    ActionClaim,
    ClaimStatus,
    ConsentSource,
    FraudSignal,
    Identity,
    Participant,
    Provider,
    TikTokToken,
)
from verification.services.consent import consents_withdraw_all


def participant_payable_account(*, participant: Participant, currency: str) -> Account:
    return account_get_or_create(
        kind=AccountKind.PARTICIPANT_PAYABLE,
        currency=currency,
        brand_id=participant.brand_id,
        subject=participant.ledger_subject,
        name=f"Rewards owed to participant #{participant.pk}",
    )


def participant_payable_open(*, participant: Participant, currency: str) -> Account:
    """participant_payable_account for a reward about to be posted, which for most people is their
    first: made in one statement when missing (ledger.account_open)."""
    return account_open(
        kind=AccountKind.PARTICIPANT_PAYABLE,
        currency=currency,
        brand_id=participant.brand_id,
        subject=participant.ledger_subject,
        name=f"Rewards owed to participant #{participant.pk}",
    )


def participant_receivable_account(*, participant: Participant, currency: str) -> Account:
    return account_get_or_create(
        kind=AccountKind.PARTICIPANT_RECEIVABLE,
        currency=currency,
        brand_id=participant.brand_id,
        subject=participant.ledger_subject,
        name=f"Clawbacks owed by participant #{participant.pk}",
    )


def participant_create(*, brand: Brand) -> Participant:
    return Participant.objects.create(brand=brand)


def identity_attach(
    *, participant: Participant, provider: str, subject: str, display_name: str = ""
) -> Identity:
    """The verified identity, attached to this participant unless it already belongs to one.

    An identity decides who the person is: the same TikTok account on a second phone is the same
    participant, so the caller continues with identity.participant.
    """
    lookup = {"brand_id": participant.brand_id, "provider": Provider(provider), "subject": subject}
    # An erased person's identity is kept under a pseudonym: the same account still earns once.
    subjects = [subject, identity_pseudonym(provider=provider, subject=subject)]
    existing = (
        Identity.objects.filter(brand_id=participant.brand_id, provider=provider, subject__in=subjects)
        .select_related("participant")
        .first()
    )
    if existing:
        return existing
    try:
        with transaction.atomic():
            return Identity.objects.create(
                participant=participant, display_name=display_name[:120], verified_at=timezone.now(), **lookup
            )
    except IntegrityError:
        return Identity.objects.select_related("participant").get(**lookup)


def identity_pseudonym(*, provider: str, subject: str) -> str:
    return "erased:" + fingerprint(f"{provider}:{subject}")


def participant_identities_erase(*, participant: Participant) -> None:
    """Erasure, verification's part: account ids become pseudonyms (one reward per account still
    holds), names and tokens go, and where the claims came from (address, browser) is forgotten.
    Claims, their amounts and evidence stay: they are the records behind the ledger. Every consent
    ends (a withdrawal row: the consent ledger keeps what was agreed, its contact now a pseudonym)."""
    consents_withdraw_all(participant_id=participant.pk, source=ConsentSource.ERASURE, proof="erasure")
    for identity in Identity.objects.filter(participant=participant).exclude(subject__startswith="erased:"):
        identity.subject = identity_pseudonym(provider=identity.provider, subject=identity.subject)
        identity.display_name = ""
        identity.save(update_fields=["subject", "display_name"])
    TikTokToken.objects.filter(identity__participant=participant).delete()
    ActionClaim.objects.filter(participant=participant).update(client_ip=None, device="")


def participant_evidence_erase(*, participant: Participant) -> None:
    """After the retention period: what was checked (captions, follower counts) goes too."""
    ActionClaim.objects.filter(participant=participant).update(evidence={})


def participant_export_claims(*, participant: Participant) -> list[dict]:
    claims = ActionClaim.objects.filter(participant=participant).select_related(
        "campaign", "rule", "identity"
    )
    return [
        {
            "campaign": claim.campaign.name,
            "action": str(claim.rule),
            "account": {"provider": claim.identity.provider, "id": claim.identity.subject},
            "status": claim.status,
            "amount_minor": claim.amount,
            "currency": claim.currency,
            "created_at": claim.created_at.isoformat(),
            "decided_at": claim.decided_at.isoformat() if claim.decided_at else None,
            "client_ip": claim.client_ip,
            "evidence": claim.evidence,
        }
        for claim in claims.order_by("pk")
    ]


def participant_flag(*, participant: Participant, code: str, detail: str) -> int:
    return participants_flag(flags=[(participant.pk, code, detail)])


def participants_flag(*, flags: list[tuple[int, str, str]]) -> int:
    """Signals found after the claims were made (shared bank details, say), as (participant id,
    code, detail): those participants' claims go back to review; their rewards stay owed but are
    not paid out until a person decides. All claims are locked at once, in id order, so two people
    flagging each other at the same moment cannot deadlock."""
    with transaction.atomic():
        claims = list(
            ActionClaim.objects.select_for_update()
            .filter(
                # A referred sale still in its return window is held too: else it would be paid
                # when the window closes, before anyone looked.
                Q(status__in=[ClaimStatus.APPROVED, ClaimStatus.NEEDS_REVIEW])
                | Q(status=ClaimStatus.PENDING, referred_purchase__isnull=False),
                participant_id__in={participant_id for participant_id, _code, _detail in flags},
            )
            .order_by("pk")
        )
        for claim in claims:
            for participant_id, code, detail in flags:
                if participant_id == claim.participant_id:
                    FraudSignal.objects.get_or_create(
                        claim=claim, code=code, defaults={"detail": detail[:200], "brand_id": claim.brand_id}
                    )
        flagged = {claim.participant_id for claim in claims}
        ActionClaim.objects.filter(
            Q(status=ClaimStatus.APPROVED) | Q(status=ClaimStatus.PENDING, referred_purchase__isnull=False),
            pk__in=[claim.pk for claim in claims if claim.participant_id in flagged],
        ).update(status=ClaimStatus.NEEDS_REVIEW, reason=flags[0][1])
    return len(claims)


def tiktok_tokens_store(*, identity: Identity, tokens: dict) -> TikTokToken:
    token, _ = TikTokToken.objects.update_or_create(
        identity=identity,
        defaults={
            "brand_id": identity.brand_id,
            "access_token": tokens["access_token"],
            "refresh_token": tokens["refresh_token"],
            "scope": tokens.get("scope", ""),
            "access_expires_at": timezone.now() + timedelta(seconds=int(tokens.get("expires_in", 0))),
            "revoked_at": None,
        },
    )
    return token
