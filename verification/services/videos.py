"""A shared video as TikTok reports it now, and the remediation case its failing caption opens: what
the engagement window (verification.services.shares) and the reach reads (verification.reach) both
build on, so that neither has to import the other to look at a video."""

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from compliance.checker import NEEDS_REVIEW
from compliance.services import caption_check_record, case_open
from joyback.modes import brand_livemode, provider_routed_for
from verification.models import ActionClaim, ClaimStatus, TikTokToken
from verification.providers import tiktok
from verification.services.participants import tiktok_tokens_store


def tiktok_video_fetch(*, token: TikTokToken, video_id: str):
    """The video through the person's own token, refreshing the token when it has expired."""
    with provider_routed_for(livemode=brand_livemode(token.brand_id)):
        if token.access_expires_at <= timezone.now() + timedelta(minutes=1):
            tokens = tiktok.token_refresh(refresh_token=token.refresh_token)
            token = tiktok_tokens_store(identity=token.identity, tokens=tokens)
        return tiktok.videos_query(access_token=token.access_token, video_ids=[video_id]).get(video_id)


def share_remediation_open(*, claim: ActionClaim, verdict, caption: str) -> ActionClaim:
    with transaction.atomic(durable=True):
        reason = "compliance_review" if verdict.verdict == NEEDS_REVIEW else "disclosure_fix"
        if not ActionClaim.objects.filter(pk=claim.pk, status=ClaimStatus.PENDING).update(reason=reason):
            return ActionClaim.objects.get(pk=claim.pk)
        caption_check_record(
            campaign=claim.campaign,
            verdict=verdict,
            caption=caption,
            claim_id=claim.pk,
            stage="window_close",
            label_state=claim.evidence.get("label_state", "unknown"),
        )
        case_open(
            campaign=claim.campaign,
            claim_id=claim.pk,
            participant_id=claim.participant_id,
            verdict=verdict,
            caption=caption,
        )
    claim.refresh_from_db()
    return claim
