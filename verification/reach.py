"""Shares paid by reach: the video's views are read with the person's own token at re-checks over
the engagement window, and each re-check tops up what the share was paid before.

The claim's row is the lock: a re-check, a review decision and the window's end all take it, read
what was paid so far (`reach_paid`) and post only the difference, with a ReachTopUp row per level
(unique per claim and level), so a tier is never paid twice. A video whose views drop is paid
nothing and loses nothing. The budget holds what the video can still earn (its ceiling less what
it was paid), re-reserved at each top-up and released when the window ends.
"""

from datetime import timedelta
from functools import partial

from django.db import transaction
from django.db.models import Max, Q, Sum
from django.utils import timezone

from campaigns.fees import BPS, fee_plan_for
from campaigns.limits import limit_value
from campaigns.models import ActionRule, LimitKind
from campaigns.reach import reach_value
from campaigns.services.fees import reward_fee_charge
from campaigns.services.funding import campaign_budget_account
from campaigns.tax import campaign_reward_judge
from compliance.models import CaseStatus
from compliance.selectors import caption_verdict, case_for_claim, unresolved_claim_ids
from joyback.ledger.models import Hold
from joyback.ledger.services import hold_commit, hold_reserve
from joyback.queue import task_schedule_once
from verification.events import claim_event_emit
from verification.fraud import engagement_signals
from verification.models import (
    ActionClaim,
    ClaimStatus,
    FraudSignal,
    Participant,
    ReachTopUp,
    TikTokPost,
    TikTokToken,
    VideoMetric,
)
from verification.services.rewards import (
    claim_hold_release,
    claim_payable_account,
    claim_reward_take_back,
    participant_payout_due,
)
from verification.services.videos import share_remediation_open, tiktok_video_fetch

COUNTED = [ClaimStatus.PENDING, ClaimStatus.APPROVED, ClaimStatus.NEEDS_REVIEW]
# A video on its way to TikTok through JoyBack (verification.services.rewards.POSTS_UNDER_WAY).
POSTS_UNDER_WAY = ["stored", "uploading", "processing", "published"]


def reach_interval(rule: ActionRule) -> timedelta:
    """Time between two reads of a video's views: the rule's, else a quarter of the window."""
    return timedelta(hours=rule.recheck_hours or max(1, rule.window_hours // 4))


def reach_ceiling(*, rule: ActionRule, participant: Participant, per_video: int) -> int:
    """The most a new reach share of this person may come to: the per-video cap, and what the
    person's and the rule's campaign caps leave (every undecided share counts at its most).
    Called under the rule's lock, so two shares cannot take the same room."""
    ceiling = per_video
    reach = Q(rule__reach_per_thousand__isnull=False) | ~Q(rule__reach_tiers=[])
    if rule.reach_person_cap is not None:
        claims = ActionClaim.objects.filter(
            campaign_id=rule.campaign_id, participant=participant, status__in=COUNTED
        ).filter(reach)
        posts = TikTokPost.objects.filter(campaign_id=rule.campaign_id, participant=participant).filter(reach)
        ceiling = min(ceiling, rule.reach_person_cap - _taken(claims, posts))
    if rule.reach_campaign_cap is not None:
        claims = ActionClaim.objects.filter(rule=rule, status__in=COUNTED)
        ceiling = min(ceiling, rule.reach_campaign_cap - _taken(claims, TikTokPost.objects.filter(rule=rule)))
    return max(ceiling, 0)


def _taken(claims, posts) -> int:
    """What shares take of a cap: each claim at its amount, each video on its way through JoyBack
    (no claim yet) at what its post holds."""
    on_the_way = posts.filter(status__in=POSTS_UNDER_WAY, claim__isnull=True).values("hold_id")
    held = Hold.objects.filter(pk__in=on_the_way).aggregate(total=Sum("amount"))["total"] or 0
    return (claims.aggregate(total=Sum("amount"))["total"] or 0) + held


def reach_schedule(*, claim: ActionClaim) -> None:
    """The next read of the video's views; the window's end is always one."""
    if claim.next_check_at is None:
        return
    task_schedule_once(
        name=f"reach-recheck-{claim.pk}-{int(claim.next_check_at.timestamp())}",
        func="verification.tasks.engagement_recheck_task",
        arg=claim.pk,
        at=claim.next_check_at,
    )


def reach_first_check(*, claim: ActionClaim) -> None:
    """A share claimed elsewhere (posted through JoyBack): its first read, then one per interval."""
    next_at = min(timezone.now() + reach_interval(claim.rule), claim.check_at)
    ActionClaim.objects.filter(pk=claim.pk, next_check_at__isnull=True).update(next_check_at=next_at)
    claim.next_check_at = next_at
    reach_schedule(claim=claim)


def reach_claims_due(*, now=None) -> list[int]:
    """Pending reach shares whose next read is due: a safety net behind the one-off schedules."""
    now = now or timezone.now()
    return list(
        ActionClaim.objects.filter(status=ClaimStatus.PENDING, next_check_at__lte=now, purchase__isnull=True)
        .exclude(pk__in=unresolved_claim_ids())
        .values_list("pk", flat=True)[:500]
    )


def _video_read(claim: ActionClaim):
    token = TikTokToken.objects.filter(identity=claim.identity, revoked_at__isnull=True).first()
    video_id = claim.evidence.get("video", {}).get("video_id", "")
    return token, (tiktok_video_fetch(token=token, video_id=video_id) if token else None)


def _velocity(claim: ActionClaim, views: int, now) -> tuple[str, str] | None:
    last = claim.metrics.filter(found=True).order_by("-at", "-pk").first()
    if last is None:
        start, before = claim.created_at, claim.evidence.get("video", {}).get("view_count", 0) or 0
    else:
        start, before = last.at, last.views
    hours = max((now - start).total_seconds() / 3600, 1 / 60)
    gained = views - before
    per_hour = limit_value(kind=LimitKind.FRAUD_MAX_VIEWS_PER_HOUR, brand_id=claim.campaign.brand_id)
    if gained > per_hour * max(hours, 1):
        return ("view_velocity", f"{gained} views in {hours:.1f} h")
    return None


def reach_recheck(*, claim_id: int) -> ActionClaim:
    """Read the video's views now: top up to what its best reading earned, or send it to review
    when the engagement looks bought; at the window's end, settle it."""
    claim = ActionClaim.objects.select_related("rule", "campaign", "identity", "participant").get(pk=claim_id)
    if claim.status != ClaimStatus.PENDING:
        return claim
    case = case_for_claim(claim_id=claim.pk)
    if case is not None and case.unresolved:
        return claim  # the remediation path settles the disclosure first, then comes back here
    token, video = _video_read(claim)
    now = timezone.now()
    final = claim.check_at is not None and claim.check_at <= now
    signals = []
    outcome = "counted"
    if video is not None:
        verdict = caption_verdict(campaign=claim.campaign, caption=video.caption)
        cleared = case is not None and case.status == CaseStatus.CLEARED and video.caption == case.caption
        if not verdict.passed and not cleared:
            if case is None:
                return share_remediation_open(claim=claim, verdict=verdict, caption=video.caption)
            video, outcome = None, "disclosure_missing"
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
            velocity = _velocity(claim, video.view_count, now)
            if velocity:
                signals.append(velocity)
    else:
        outcome = "tiktok_disconnected" if token is None else "post_deleted"
    with transaction.atomic(durable=True):
        locked = (
            ActionClaim.objects.select_for_update(of=("self",))
            .select_related("rule", "campaign")
            .get(pk=claim.pk)
        )
        if locked.status != ClaimStatus.PENDING:
            return locked
        metric = VideoMetric(claim=locked, brand_id=locked.brand_id, at=now, found=video is not None)
        if video is not None:
            metric.views, metric.likes = video.view_count, video.like_count
            metric.comments, metric.shares = video.comment_count, video.share_count
        if signals:
            locked.status, locked.reason = ClaimStatus.NEEDS_REVIEW, signals[0][0]
            locked.evidence = {**locked.evidence, "review_views": metric.views}
            locked.next_check_at = None
            for code, detail in signals:
                FraudSignal.objects.get_or_create(
                    claim=locked, code=code, defaults={"detail": detail[:200], "brand_id": locked.brand_id}
                )
            metric.outcome = "held_for_review"
            locked.save(update_fields=["status", "reason", "evidence", "next_check_at"])
        else:
            if video is not None:
                best = max(metric.views, _best_views(locked))
                paid = _reach_top_up(locked, views=best)
                metric.outcome = "topped_up" if paid else outcome
            else:
                metric.outcome = outcome
            if final:
                _reach_settle(locked, reason_if_nothing=outcome if video is None else "below_threshold")
            else:
                locked.next_check_at = min(now + reach_interval(locked.rule), locked.check_at)
                locked.save(update_fields=["next_check_at"])
                claim_for_schedule = locked
                transaction.on_commit(lambda: reach_schedule(claim=claim_for_schedule))
        metric.paid_after = locked.reach_paid
        metric.save()
    return locked


def _best_views(claim: ActionClaim) -> int:
    """The most views any accepted reading saw: a later, lower count takes nothing back."""
    return (
        claim.metrics.filter(found=True).exclude(outcome="held_for_review").aggregate(top=Max("views"))["top"]
        or 0
    )


def _reach_top_up(claim: ActionClaim, *, views: int) -> int:
    """Under the claim's lock: pay the difference between what `views` earned (within the claim's
    ceiling) and what was paid, from the hold; reserve what the video can still earn."""
    target = min(reach_value(rule=claim.rule, views=views), claim.amount)
    top_up = target - claim.reach_paid
    if top_up <= 0:
        return 0
    hold = Hold.objects.get(pk=claim.hold_id)
    posted = hold_commit(
        hold=hold,
        destination=claim_payable_account(claim),
        amount=top_up,
        reason="reward",
        reference=f"claim:{claim.pk}",
        description=f"Reach reward, {views} views, {claim.campaign.name}"[:200],
    )
    # The platform's fee on this top-up, in the same transaction (the hold's rest covered it).
    reward_fee_charge(claim_id=claim.pk, campaign=claim.campaign, amount=top_up, reward=posted)
    ReachTopUp.objects.create(
        claim=claim,
        brand_id=claim.brand_id,
        level=target,
        amount=top_up,
        views=views,
        ledger_transaction_id=posted.pk,
    )
    rest = claim.amount - target
    claim.hold_id = (
        hold_reserve(
            account=campaign_budget_account(campaign=claim.campaign),
            amount=rest
            + rest * fee_plan_for(brand=claim.campaign.brand, currency=claim.currency).payout_bps // BPS,
            idempotency_key=f"reach-hold:{claim.pk}:{target}",
            reference=f"claim:{claim.pk}",
        ).pk
        if rest
        else None
    )
    claim.reach_paid = target
    claim.ledger_transaction_id = claim.ledger_transaction_id or posted.pk
    if not claim.tax_class:
        # The share's first top-up books it: its tax class is recorded now (campaigns.tax).
        tax = campaign_reward_judge(campaign=claim.campaign, trigger=claim.rule.trigger)
        claim.tax_class, claim.tax_country, claim.tax_table = tax.tax_class, tax.country, tax.version
    claim.save(
        update_fields=[
            "hold_id",
            "reach_paid",
            "ledger_transaction_id",
            "tax_class",
            "tax_country",
            "tax_table",
        ]
    )
    # Marked after the commit: the claim's lock comes after the person's in the lock order.
    transaction.on_commit(partial(participant_payout_due, participant_id=claim.participant_id))
    return top_up


def _reach_settle(claim: ActionClaim, *, reason_if_nothing: str) -> None:
    """The window's end: the hold goes back to the budget, the claim comes to what it was paid."""
    claim_hold_release(claim)
    claim.next_check_at = None
    claim.decided_at = timezone.now()
    if claim.reach_paid:
        claim.status, claim.reason, claim.amount = ClaimStatus.APPROVED, "reach_paid", claim.reach_paid
        claim.save(update_fields=["status", "reason", "amount", "next_check_at", "decided_at"])
        claim_event_emit(claim, "reward.approved")
    else:
        claim.status, claim.reason = ClaimStatus.REJECTED, reason_if_nothing
        claim.save(update_fields=["status", "reason", "next_check_at", "decided_at"])
        claim_event_emit(claim, "claim.rejected")


def reach_review_decide(*, locked: ActionClaim, decision: str) -> None:
    """A person decided a reach share the signals stopped (inside claim_review's transaction, the
    claim locked). Approved: the stopped reading is paid and re-checks go on (or it settles, if
    the window closed). Rejected: the hold is released and what top-ups paid goes back."""
    if decision == "approve":
        views = max(int(locked.evidence.get("review_views") or 0), _best_views(locked))
        locked.status, locked.reason = ClaimStatus.PENDING, "review_approved"
        locked.save(update_fields=["status", "reason"])
        _reach_top_up(locked, views=views)
        if locked.check_at and locked.check_at <= timezone.now():
            _reach_settle(locked, reason_if_nothing="below_threshold")
            if locked.status == ClaimStatus.APPROVED:
                locked.reason = "review_approved"
                locked.save(update_fields=["reason"])
        else:
            locked.next_check_at = min(timezone.now() + reach_interval(locked.rule), locked.check_at)
            locked.save(update_fields=["next_check_at"])
            transaction.on_commit(lambda: reach_schedule(claim=locked))
        return
    claim_hold_release(locked)
    if locked.reach_paid:
        locked.amount = locked.reach_paid
        claim_reward_take_back(
            locked,
            reason=f"review rejected claim #{locked.pk}",
            idempotency_key=f"review-clawback:{locked.pk}",
        )
    locked.status, locked.reason = ClaimStatus.REJECTED, "review_rejected"
    locked.decided_at, locked.next_check_at = timezone.now(), None
    locked.save(update_fields=["status", "reason", "decided_at", "next_check_at", "amount"])
    claim_event_emit(locked, "claim.rejected")
