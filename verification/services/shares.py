"""Shared videos: the submit, the engagement window's re-check and the disclosure's remediation."""

from dataclasses import asdict
from datetime import UTC, datetime, timedelta

import httpx
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from campaigns.models import ActionRule
from compliance.checker import NEEDS_REVIEW
from compliance.models import CaseStatus
from compliance.selectors import caption_verdict, case_for_claim, unresolved_claim_ids
from compliance.services import caption_check_record, case_open, case_recheck
from joyback.modes import brand_livemode, provider_routed_for
from joyback.queue import task_schedule_once
from verification import content
from verification.events import claim_event_emit
from verification.fraud import engagement_signals
from verification.models import (
    ActionClaim,
    ClaimStatus,
    FraudSignal,
    Identity,
    TikTokPost,
    TikTokToken,
)
from verification.providers import tiktok
from verification.reach import reach_ceiling, reach_first_check, reach_interval, reach_recheck, reach_schedule
from verification.services.participants import tiktok_tokens_store
from verification.services.refusals import ClaimRefused
from verification.services.rewards import (
    POSTS_UNDER_WAY,
    ClaimContext,
    claim_allowed_check,
    claim_hold_release,
    claim_hold_reserve,
    claim_reward_post,
    rule_lock,
    second_accounts_flagged,
)
from verification.services.videos import share_remediation_open, tiktok_video_fetch

# Engagement mode: a share is claimed now and paid when its window closes, if it earned it.


def share_submit(
    *,
    rule: ActionRule,
    identity: Identity,
    video_url: str,
    context: ClaimContext = ClaimContext(),
    label_attested: bool = False,
    language: str = "en",
    licence_accepted: bool = False,
    spark_code: str = "",
    spark_days: int | None = None,
) -> ActionClaim:
    """Claim a shared video: it must be the person's own and live; the reward is held on the
    budget and the video is checked again when the engagement window closes.

    The caption goes through the compliance checker now. A failing disclosure does not lose the
    person their reward: a remediation case tells them what to change and gives them 24 hours;
    a doubtful one goes to the brand's compliance queue. Nothing is paid before a passing check.
    """
    video_id, resolved_url = share_video_id(url=video_url, brand_id=rule.campaign.brand_id)
    if TikTokPost.objects.filter(rule=rule, identity=identity, status__in=POSTS_UNDER_WAY).exists():
        raise ClaimRefused("post_under_way")
    token = TikTokToken.objects.filter(identity=identity, revoked_at__isnull=True).first()
    if token is None:
        raise ClaimRefused("tiktok_reconnect")
    purchases = content.purchase_gate(rule=rule, participant=identity.participant)
    terms = content.licence_terms_for_share(campaign=rule.campaign, accepted=licence_accepted)
    video = tiktok_video_fetch(token=token, video_id=video_id)
    if video is None:
        raise ClaimRefused("video_not_found")
    ad_code = (
        content.spark_code_check(
            code=spark_code, days=spark_days, video_id=video_id, livemode=rule.campaign.brand.livemode
        )
        if spark_code
        else None
    )
    verdict, label_state = share_verdict(campaign=rule.campaign, video=video)
    if label_state == "unknown":
        # TikTok cannot report its paid-partnership label back here: the person's word is the evidence.
        label_state = "attested_on" if label_attested else "not_attested"
    if verdict.passed:
        reason = "awaiting_window"
    else:
        reason = "compliance_review" if verdict.verdict == NEEDS_REVIEW else "disclosure_fix"
    with second_accounts_flagged(), transaction.atomic(durable=True):
        rule = rule_lock(rule)
        claim_allowed_check(rule=rule, identity=identity)
        amount = content.share_reward(rule=rule, purchases=purchases)
        check_at = timezone.now() + timedelta(hours=rule.window_hours)
        next_check_at = None
        if rule.pays_by_reach:
            amount = reach_ceiling(rule=rule, participant=identity.participant, per_video=amount)
            if amount <= 0:
                raise ClaimRefused("reach_cap")
            next_check_at = min(timezone.now() + reach_interval(rule), check_at)
        evidence = {"video": asdict(video), "submitted_url": video_url[:500], "label_state": label_state}
        if resolved_url:
            evidence["resolved_url"] = resolved_url[:500]
        if purchases:
            evidence["purchases"] = [purchase.order_id for purchase in purchases]
        claim = ActionClaim.objects.create(
            campaign=rule.campaign,
            brand_id=rule.campaign.brand_id,
            rule=rule,
            participant=identity.participant,
            identity=identity,
            status=ClaimStatus.PENDING,
            reason=reason,
            amount=amount,
            currency=rule.campaign.currency,
            evidence=evidence,
            check_at=check_at,
            next_check_at=next_check_at,
            client_ip=context.client_ip,
            device=context.device,
        )
        claim_hold_reserve(claim)
        if terms is not None:
            content.licence_grant_record(claim=claim, terms=terms, language=language)
        if ad_code is not None:
            content.spark_code_record(claim=claim, code=spark_code, days=spark_days, answer=ad_code)
        caption_check_record(
            campaign=rule.campaign,
            verdict=verdict,
            caption=video.caption,
            claim_id=claim.pk,
            stage="submit",
            label_state=label_state,
        )
        if not verdict.passed:
            case_open(
                campaign=rule.campaign,
                claim_id=claim.pk,
                participant_id=claim.participant_id,
                verdict=verdict,
                caption=video.caption,
                language=language,
            )
        transaction.on_commit(lambda: engagement_recheck_schedule(claim=claim))
    return claim


def platform_label(*, campaign, video) -> bool | None:
    """The post's "Paid partnership" label as TikTok's Commercial Content API lists it: for
    campaigns whose audience is in the EEA (the API's coverage) and only where JoyBack has that
    access; None where it cannot say (another country, the API unreachable or refusing)."""
    countries = {country.upper() for country in campaign.countries or []}
    if not settings.TIKTOK_COMMERCIAL_CONTENT or not countries & tiktok.EEA:
        return None
    username = tiktok.username_from_url(video.share_url)
    if username is None:
        return None
    published = datetime.fromtimestamp(video.create_time, UTC)
    try:
        with provider_routed_for(livemode=campaign.brand.livemode):
            contents = tiktok.commercial_content_query(
                username=username,
                date_min=(published - timedelta(days=1)).strftime("%Y%m%d"),
                date_max=(published + timedelta(days=1)).strftime("%Y%m%d"),
            )
    except (tiktok.TikTokError, httpx.HTTPError):
        return None
    return any(video.video_id in content.video_ids and content.label for content in contents)


def share_verdict(*, campaign, video):
    """(the caption's verdict with the label as the platform reports it, the label's state). A label
    the platform reports off fails like a missing disclosure: the person is asked to switch it on."""
    label = platform_label(campaign=campaign, video=video)
    verdict = caption_verdict(
        campaign=campaign,
        caption=video.caption,
        platform="tiktok",
        label_on=label,
        label_read=label is not None,
    )
    return verdict, {True: "platform_on", False: "platform_off", None: "unknown"}[label]


def share_video_id(*, url: str, brand_id: int) -> tuple[str, str]:
    """The video id a shared link names, and the canonical link a short one led to ("" for a full
    link). A short link (Share -> Copy link in the app) is asked of TikTok, as the brand's mode
    routes it; a link that names no video is refused with words that say how to get a good one."""
    video_id = tiktok.video_id_from_url(url)
    if video_id is not None:
        return video_id, ""
    if tiktok.short_link_parts(url) is None:
        raise ClaimRefused("video_link")
    with provider_routed_for(livemode=brand_livemode(brand_id)):
        canonical = tiktok.short_link_resolve(url=url)
    if canonical is None:
        raise ClaimRefused("short_link_dead")
    return tiktok.video_id_from_url(canonical), canonical


def tiktok_recent_videos(*, identity: Identity, max_count: int = 6) -> list:
    """The person's own recent videos (video.list), to choose from instead of pasting a link;
    [] when the token lacks the scope or TikTok does not answer (pasting a link still works)."""
    token = TikTokToken.objects.filter(identity=identity, revoked_at__isnull=True).first()
    if token is None or "video.list" not in token.scope.split(","):
        return []
    try:
        with provider_routed_for(livemode=brand_livemode(token.brand_id)):
            if token.access_expires_at <= timezone.now() + timedelta(minutes=1):
                tokens = tiktok.token_refresh(refresh_token=token.refresh_token)
                token = tiktok_tokens_store(identity=token.identity, tokens=tokens)
            return tiktok.videos_list(access_token=token.access_token, max_count=max_count)
    except (tiktok.TikTokError, httpx.HTTPError):
        return []


def engagement_recheck_schedule(*, claim: ActionClaim) -> None:
    if claim.rule.pays_by_reach:
        # Read over the window, not once at its end: the first read is scheduled now.
        (reach_schedule if claim.next_check_at else reach_first_check)(claim=claim)
        return
    task_schedule_once(
        name=f"engagement-recheck-{claim.pk}",
        func="verification.tasks.engagement_recheck_task",
        arg=claim.pk,
        at=claim.check_at,
    )


def engagement_recheck(*, claim_id: int) -> ActionClaim:
    """The window closed: approve the share if the post is still live, disclosed and reached the
    thresholds; reject it (releasing the held budget) if not; ask a person if it looks bought."""
    claim = ActionClaim.objects.select_related("rule", "campaign", "identity").get(pk=claim_id)
    if claim.status != ClaimStatus.PENDING or claim.purchase_id:  # a purchase waits for its return window
        return claim
    if claim.rule.pays_by_reach:
        return reach_recheck(claim_id=claim.pk)
    case = case_for_claim(claim_id=claim.pk)
    if case is not None and case.unresolved:
        return claim  # the remediation path settles the disclosure first, then comes back here
    token = TikTokToken.objects.filter(identity=claim.identity, revoked_at__isnull=True).first()
    video_id = claim.evidence.get("video", {}).get("video_id", "")
    video = tiktok_video_fetch(token=token, video_id=video_id) if token else None
    rule = claim.rule
    signals = []
    verdict = share_verdict(campaign=claim.campaign, video=video)[0] if video else None
    if token is None:
        outcome = (ClaimStatus.REJECTED, "tiktok_disconnected")
    elif video is None:
        outcome = (ClaimStatus.REJECTED, "post_deleted")
    elif not verdict.passed and case is None:
        # Disclosure gone or broken since the submit: the person gets the remediation clock.
        return share_remediation_open(claim=claim, verdict=verdict, caption=video.caption)
    elif not verdict.passed and not (case.status == CaseStatus.CLEARED and video.caption == case.caption):
        # A caption the brand cleared stays cleared while it is unchanged.
        outcome = (ClaimStatus.REJECTED, "disclosure_missing")
    elif (
        video.view_count < rule.min_views
        or video.like_count < rule.min_likes
        or (video.comment_count < rule.min_comments)
    ):
        outcome = (ClaimStatus.REJECTED, "below_threshold")
    else:
        followers = (
            claim.identity.claims.exclude(pk=claim.pk).values_list("evidence", flat=True).first() or {}
        ).get("follower_count")
        signals = engagement_signals(
            views=video.view_count,
            likes=video.like_count,
            comments=video.comment_count,
            followers=followers,
            brand_id=claim.campaign.brand_id,
        )
        outcome = (
            (ClaimStatus.NEEDS_REVIEW, signals[0][0]) if signals else (ClaimStatus.APPROVED, "thresholds_met")
        )
    with transaction.atomic(durable=True):
        # The conditional update claims the decision: a second worker on the same claim finds it done.
        status, reason = outcome
        evidence = {**claim.evidence, "recheck": asdict(video) if video else None}
        decided = ActionClaim.objects.filter(pk=claim.pk, status=ClaimStatus.PENDING).update(
            status=status,
            reason=reason,
            evidence=evidence,
            decided_at=timezone.now() if status != ClaimStatus.NEEDS_REVIEW else None,
        )
        if not decided:
            return ActionClaim.objects.get(pk=claim.pk)
        claim.refresh_from_db()
        if verdict is not None:
            caption_check_record(
                campaign=claim.campaign,
                verdict=verdict,
                caption=video.caption,
                claim_id=claim.pk,
                stage="window_close",
                label_state=claim.evidence.get("label_state", "unknown"),
            )
        if status == ClaimStatus.APPROVED:
            claim_reward_post(claim)
            claim_event_emit(claim, "reward.approved")
        elif status == ClaimStatus.REJECTED:
            claim_hold_release(claim)
            claim_event_emit(claim, "claim.rejected")
        else:
            FraudSignal.objects.bulk_create(
                FraudSignal(claim=claim, brand_id=claim.brand_id, code=c, detail=d) for c, d in signals
            )
    return claim


def engagement_window_close_now(*, claim_id: int) -> ActionClaim:
    """The sandbox's control to move a share's window on: close it now and look at the video, as the
    schedule would when the hours have passed. Never offered outside the sandbox."""
    with transaction.atomic(durable=True):
        ActionClaim.objects.filter(
            pk=claim_id, status=ClaimStatus.PENDING, purchase__isnull=True, check_at__gt=timezone.now()
        ).update(check_at=timezone.now())
    return engagement_recheck(claim_id=claim_id)


def claims_due_recheck(*, now=None) -> list[int]:
    """Pending shares whose window has closed: a safety net behind the one-off schedules."""
    now = now or timezone.now()
    return list(
        ActionClaim.objects.filter(status=ClaimStatus.PENDING, check_at__lte=now, purchase__isnull=True)
        .exclude(pk__in=unresolved_claim_ids())  # each case's own re-check comes back for them
        .values_list("pk", flat=True)[:500]
    )


def remediation_recheck(*, claim_id: int) -> ActionClaim:
    """The person's post looked at again, at the case's deadline (or early, when they say they
    fixed it): fixed -> back to the engagement window (checked at once if it already closed);
    still failing at the deadline -> rejected and the held reward released; doubtful -> the brand."""
    claim = ActionClaim.objects.select_related("campaign", "identity").get(pk=claim_id)
    case = case_for_claim(claim_id=claim.pk)
    if claim.status != ClaimStatus.PENDING or case is None or case.status != CaseStatus.OPEN:
        return claim
    token = TikTokToken.objects.filter(identity=claim.identity, revoked_at__isnull=True).first()
    video_id = claim.evidence.get("video", {}).get("video_id", "")
    video = tiktok_video_fetch(token=token, video_id=video_id) if token else None
    caption = video.caption if video else ""
    verdict = (
        share_verdict(campaign=claim.campaign, video=video)[0]
        if video
        else caption_verdict(campaign=claim.campaign, caption=caption)
    )
    window_closed = False
    with transaction.atomic(durable=True):
        locked = ActionClaim.objects.select_for_update().get(pk=claim.pk)
        if locked.status != ClaimStatus.PENDING:
            return locked
        outcome = case_recheck(
            case=case, verdict=verdict, caption=caption, label_state=locked.evidence.get("label_state", "")
        )
        if outcome == CaseStatus.VOIDED:
            locked.status, locked.reason, locked.decided_at = (
                ClaimStatus.REJECTED,
                "disclosure_not_fixed",
                timezone.now(),
            )
            claim_hold_release(locked)
            claim_event_emit(locked, "claim.rejected")
        elif outcome == CaseStatus.FIXED:
            locked.reason = "awaiting_window"
            window_closed = locked.check_at is not None and locked.check_at <= timezone.now()
        elif outcome == CaseStatus.REVIEW:
            locked.reason = "compliance_review"
        locked.save(update_fields=["status", "reason", "decided_at"])
    if window_closed:
        return engagement_recheck(claim_id=claim.pk)
    return locked
