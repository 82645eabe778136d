import hashlib
import json
import logging
import re
import secrets
from dataclasses import asdict, dataclass
from datetime import timedelta

from django.db import IntegrityError, connection, transaction
from django.db.models import Sum
from django.utils import timezone
from django.utils.translation import gettext_lazy

from campaigns.models import ActionRule, Brand, Campaign, Trigger
from campaigns.selectors import campaign_claimability
from campaigns.services import campaign_budget_account
from joyback.ledger.models import Account, AccountKind, Hold, Transaction
from joyback.ledger.services import (
    InsufficientFunds,
    account_get_or_create,
    hold_commit,
    hold_reserve,
    hold_void,
    transaction_reverse,
    transfer_post,
)
from verification.fraud import engagement_signals, fraud_signals_at_claim
from verification.models import (
    ActionClaim,
    ClaimStatus,
    FraudSignal,
    Identity,
    OptinCode,
    Participant,
    Provider,
    ProviderEvent,
    ReviewDecision,
    TikTokToken,
)
from verification.providers import tiktok
from verification.providers.whatsapp import InboundMessage

logger = logging.getLogger(__name__)

# What a person is told about an action that earned nothing, by refusal code. Codes are stored
# (an opt-in's outcome), the words are chosen when shown, in the reader's language.
REFUSALS = {
    "already_claimed": gettext_lazy("This account has already claimed this reward."),
    "number_taken": gettext_lazy("This WhatsApp number already belongs to another claim."),
    "fully_claimed": gettext_lazy(
        "This campaign is fully claimed: every reward has found its person. Thank you!"
    ),
    "rule_cap": gettext_lazy("All rewards for this action have been claimed."),
    "period_cap": gettext_lazy("You have reached this campaign's limit for now."),
    "allowance": gettext_lazy("You have reached the most this brand rewards one person."),
    "prerequisite": gettext_lazy("Do the step before this one first."),
    "paused": gettext_lazy("This campaign is paused for the moment. Please come back later."),
    "ended": gettext_lazy("This campaign has ended. Thank you for your interest!"),
    "draft": gettext_lazy("This campaign has not started yet."),
    "not_started": gettext_lazy("This campaign has not started yet."),
    "video_link": gettext_lazy(
        "Paste the link of your TikTok video, like https://www.tiktok.com/@you/video/123…"
    ),
    "tiktok_reconnect": gettext_lazy("Please connect TikTok again, then share your video."),
    "video_not_found": gettext_lazy("We could not find this video on your TikTok account. Is it public?"),
    "disclosure_missing": gettext_lazy("Your caption must start with the disclosure shown above."),
    "review_decision": gettext_lazy("Choose approve or reject."),
    "review_reason": gettext_lazy("Give a reason for the decision."),
    "review_done": gettext_lazy("This claim has already been decided."),
}


def refusal_text(code: str) -> str:
    return str(REFUSALS.get(code, ""))


class ClaimRefused(Exception):
    """An action that earns nothing; `message` is for the person, in their language."""

    def __init__(self, code: str):
        super().__init__(code)
        self.code = code

    @property
    def message(self) -> str:
        return refusal_text(self.code)


def participant_payable_account(*, participant: Participant, currency: str) -> Account:
    return account_get_or_create(
        kind=AccountKind.PARTICIPANT_PAYABLE,
        currency=currency,
        brand_id=participant.brand_id,
        subject=participant.ledger_subject,
        name=f"Rewards owed to participant #{participant.pk}",
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
    existing = Identity.objects.filter(**lookup).select_related("participant").first()
    if existing:
        return existing
    try:
        with transaction.atomic():
            return Identity.objects.create(
                participant=participant, display_name=display_name[:120], verified_at=timezone.now(), **lookup
            )
    except IntegrityError:
        return Identity.objects.select_related("participant").get(**lookup)


def _caps_check(*, rule: ActionRule, identity: Identity) -> None:
    campaign = rule.campaign
    counted = [ClaimStatus.APPROVED, ClaimStatus.PENDING, ClaimStatus.NEEDS_REVIEW]
    if (
        rule.total_cap is not None
        and ActionClaim.objects.filter(rule=rule, status__in=counted).count() >= rule.total_cap
    ):
        raise ClaimRefused("rule_cap")
    if campaign.per_identity_period_cap:
        since = timezone.now() - timezone.timedelta(days=campaign.per_identity_period_days)
        recent = ActionClaim.objects.filter(
            campaign=campaign, participant=identity.participant, status__in=counted, created_at__gte=since
        ).count()
        if recent >= campaign.per_identity_period_cap:
            raise ClaimRefused("period_cap")
    allowance = campaign.brand.person_allowance
    if allowance is not None:
        earned = (
            ActionClaim.objects.filter(
                participant=identity.participant, status__in=counted, currency=campaign.currency
            ).aggregate(total=Sum("amount"))["total"]
            or 0
        )
        if earned + rule.reward_amount > allowance:
            raise ClaimRefused("allowance")


@dataclass(frozen=True)
class ClaimContext:
    """Where a claim came from: the network address and a hash of the browser's traits."""

    client_ip: str | None = None
    device: str = ""


def _rule_lock(rule: ActionRule) -> ActionRule:
    # One lock per rule serialises its caps; the unique constraint still guards the one reward.
    return ActionRule.objects.select_for_update().select_related("campaign__brand").get(pk=rule.pk)


def _claim_checks(*, rule: ActionRule, identity: Identity) -> None:
    claimability = campaign_claimability(campaign=rule.campaign)
    if not claimability.open:
        raise ClaimRefused(claimability.reason)
    if ActionClaim.objects.filter(rule=rule, identity=identity).exists():
        raise ClaimRefused("already_claimed")
    if (
        rule.prerequisite_id
        and not ActionClaim.objects.filter(
            rule_id=rule.prerequisite_id, participant=identity.participant, status=ClaimStatus.APPROVED
        ).exists()
    ):
        raise ClaimRefused("prerequisite")
    _caps_check(rule=rule, identity=identity)


def action_reward(
    *,
    rule: ActionRule,
    identity: Identity,
    context: ClaimContext = ClaimContext(),
    evidence: dict | None = None,
) -> ActionClaim:
    """Instant verification: a verified identity's action is approved and paid at once, unless a
    fraud signal sends it to the review queue with its reward held on the budget."""
    # Made before the lock: creating the person's account would otherwise queue every claimer.
    participant_payable_account(participant=identity.participant, currency=rule.campaign.currency)
    with transaction.atomic(durable=True):
        rule = _rule_lock(rule)
        _claim_checks(rule=rule, identity=identity)
        signals = fraud_signals_at_claim(
            rule=rule, identity=identity, context=context, evidence=evidence or {}
        )
        claim = ActionClaim.objects.create(
            campaign=rule.campaign,
            rule=rule,
            participant=identity.participant,
            identity=identity,
            status=ClaimStatus.NEEDS_REVIEW if signals else ClaimStatus.APPROVED,
            reason=signals[0][0] if signals else "verified_identity",
            amount=rule.reward_amount,
            currency=rule.campaign.currency,
            evidence=evidence or {},
            client_ip=context.client_ip,
            device=context.device,
            decided_at=None if signals else timezone.now(),
        )
        if signals:
            _hold_for(claim)
            FraudSignal.objects.bulk_create(FraudSignal(claim=claim, code=c, detail=d) for c, d in signals)
        else:
            _reward_post(claim)
    return claim


def _payable(claim: ActionClaim) -> Account:
    return participant_payable_account(participant=claim.participant, currency=claim.currency)


def _reward_post(claim: ActionClaim) -> None:
    """Budget -> the person's payable: committed from the claim's hold if it has one."""
    description = f"{claim.rule.get_trigger_display()} reward, {claim.campaign.name}"
    try:
        if claim.hold_id:
            reward = hold_commit(
                hold=Hold.objects.get(pk=claim.hold_id),
                destination=_payable(claim),
                reason="reward",
                reference=f"claim:{claim.pk}",
                description=description,
            )
        else:
            reward = transfer_post(
                source=campaign_budget_account(campaign=claim.campaign),
                destination=_payable(claim),
                amount=claim.amount,
                reason="reward",
                idempotency_key=f"reward:{claim.pk}",
                reference=f"claim:{claim.pk}",
                description=description,
            )
    except InsufficientFunds:
        raise ClaimRefused("fully_claimed") from None
    ActionClaim.objects.filter(pk=claim.pk).update(ledger_transaction_id=reward.pk)
    claim.ledger_transaction_id = reward.pk


def _hold_for(claim: ActionClaim) -> None:
    """Reserve the reward on the budget while the claim waits, so the budget is never oversold."""
    try:
        hold = hold_reserve(
            account=campaign_budget_account(campaign=claim.campaign),
            amount=claim.amount,
            idempotency_key=f"claim-hold:{claim.pk}",
            reference=f"claim:{claim.pk}",
        )
    except InsufficientFunds:
        raise ClaimRefused("fully_claimed") from None
    ActionClaim.objects.filter(pk=claim.pk).update(hold_id=hold.pk)
    claim.hold_id = hold.pk


def _hold_release(claim: ActionClaim) -> None:
    if claim.hold_id:
        hold = Hold.objects.get(pk=claim.hold_id)
        if hold.status == "reserved":
            hold_void(hold=hold)


def tiktok_login_complete(
    *,
    campaign: Campaign,
    participant: Participant,
    user,
    context: ClaimContext = ClaimContext(),
) -> tuple[Identity, ClaimRefused | None]:
    """A completed TikTok login: the identity, its tokens kept for later checks, and the login reward."""
    identity = identity_attach(
        participant=participant,
        provider=Provider.TIKTOK,
        subject=user.open_id,
        display_name=user.display_name,
    )
    tiktok_tokens_store(identity=identity, tokens=user.tokens)
    rule = campaign.rules.filter(trigger=Trigger.TIKTOK_LOGIN).first()
    if rule is None:
        return identity, None
    evidence = {"follower_count": user.follower_count, "video_count": user.video_count}
    try:
        action_reward(rule=rule, identity=identity, context=context, evidence=evidence)
    except ClaimRefused as refusal:
        return identity, refusal
    return identity, None


def tiktok_tokens_store(*, identity: Identity, tokens: dict) -> TikTokToken:
    token, _ = TikTokToken.objects.update_or_create(
        identity=identity,
        defaults={
            "access_token": tokens["access_token"],
            "refresh_token": tokens["refresh_token"],
            "scope": tokens.get("scope", ""),
            "access_expires_at": timezone.now() + timedelta(seconds=int(tokens.get("expires_in", 0))),
            "revoked_at": None,
        },
    )
    return token


OPTIN_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O or 1/I: people type these codes
OPTIN_PATTERN = re.compile(r"\bJOY[\s-]?([A-Z2-9]{6})\b", re.IGNORECASE)


def optin_code_get_or_create(*, campaign: Campaign, participant: Participant) -> OptinCode:
    existing = OptinCode.objects.filter(campaign=campaign, participant=participant).first()
    if existing:
        return existing
    for _attempt in range(5):
        code = "".join(secrets.choice(OPTIN_ALPHABET) for _ in range(6))
        try:
            with transaction.atomic():
                return OptinCode.objects.create(code=code, campaign=campaign, participant=participant)
        except IntegrityError:
            continue
    raise RuntimeError("could not find a free opt-in code")


def whatsapp_messages_store(*, messages: list[InboundMessage]) -> list[int]:
    """Store each inbound message once, by its wamid; returns the new events to process.

    Meta delivers at least once and retries for days, so a redelivery is stored never and
    answered 200 all the same.
    """
    new = [
        provider_event_store(provider=Provider.WHATSAPP, event_id=message.message_id, payload=asdict(message))
        for message in messages
    ]
    return [event_id for event_id in new if event_id is not None]


def provider_event_store(*, provider: str, event_id: str, payload: dict) -> int | None:
    """Insert the event unless (provider, event_id) is already stored; its id, or None for a
    redelivery. One statement: no savepoint, no exception on the (common) duplicate."""
    payload_param = "%s::jsonb" if connection.vendor == "postgresql" else "%s"
    statement = (
        "INSERT INTO verification_providerevent (provider, event_id, payload, received_at) "  # noqa: S608
        f"VALUES (%s, %s, {payload_param}, %s) ON CONFLICT (provider, event_id) DO NOTHING RETURNING id"
    )
    with connection.cursor() as cursor:
        cursor.execute(statement, [provider, event_id, json.dumps(payload), timezone.now()])
        row = cursor.fetchone()
    return row[0] if row else None


def whatsapp_event_process(*, event_id: int) -> str:
    """An inbound message carrying a campaign's opt-in code becomes an opt-in of its sender."""
    event = ProviderEvent.objects.get(pk=event_id, provider=Provider.WHATSAPP)
    message = InboundMessage(**event.payload)
    match = OPTIN_PATTERN.search(message.text)
    optin = (
        OptinCode.objects.filter(code=match.group(1).upper()).select_related("campaign").first()
        if match
        else None
    )
    if optin is None:
        outcome = "unknown_code" if match else "no_code"
    elif optin.used_at:
        outcome = "code_used"
    else:
        outcome = _whatsapp_optin(optin=optin, message=message)
    logger.info("whatsapp message %s: %s", message.message_id, outcome)
    return outcome


def whatsapp_messages_record(*, messages: list[InboundMessage]) -> int:
    """Store and process at once (the sandbox phone and tests); the webhook enqueues instead."""
    new = whatsapp_messages_store(messages=messages)
    for event_id in new:
        whatsapp_event_process(event_id=event_id)
    return len(new)


def _whatsapp_optin(*, optin: OptinCode, message: InboundMessage) -> str:
    identity = identity_attach(
        participant=optin.participant,
        provider=Provider.WHATSAPP,
        subject=message.wa_id,
        display_name=message.profile_name,
    )
    outcome = "rewarded"
    rule = optin.campaign.rules.filter(trigger=Trigger.WHATSAPP_OPTIN).first()
    if identity.participant_id != optin.participant_id:
        outcome = "number_taken"
    elif rule is not None:
        try:
            action_reward(rule=rule, identity=identity)
        except ClaimRefused as refusal:
            outcome = refusal.code
    OptinCode.objects.filter(pk=optin.pk, used_at__isnull=True).update(
        used_at=timezone.now(), outcome=outcome
    )
    return outcome


def tiktok_event_store(*, body: bytes, payload: dict) -> int | None:
    """Store a verified TikTok webhook once; a replay of the same bytes is not stored again."""
    return provider_event_store(
        provider=Provider.TIKTOK, event_id=hashlib.sha256(body).hexdigest(), payload=payload
    )


def tiktok_event_process(*, event_id: int) -> str:
    """authorization.removed: the person took back JoyBack's access; their tokens are dead."""
    event = ProviderEvent.objects.get(pk=event_id, provider=Provider.TIKTOK)
    if event.payload.get("event") != "authorization.removed":
        return "ignored"
    revoked = TikTokToken.objects.filter(
        identity__provider=Provider.TIKTOK,
        identity__subject=event.payload.get("user_openid", ""),
        revoked_at__isnull=True,
    ).update(revoked_at=timezone.now())
    return f"revoked {revoked}"


# Engagement mode: a share is claimed now and paid when its window closes, if it earned it.


def share_submit(
    *,
    rule: ActionRule,
    identity: Identity,
    video_url: str,
    context: ClaimContext = ClaimContext(),
) -> ActionClaim:
    """Claim a shared video: it must be the person's own, live and disclosed; the reward is held
    on the budget and the video is checked again when the engagement window closes."""
    video_id = tiktok.video_id_from_url(video_url)
    if video_id is None:
        raise ClaimRefused("video_link")
    token = TikTokToken.objects.filter(identity=identity, revoked_at__isnull=True).first()
    if token is None:
        raise ClaimRefused("tiktok_reconnect")
    video = _video_fetch(token=token, video_id=video_id)
    if video is None:
        raise ClaimRefused("video_not_found")
    if not disclosure_present(caption=video.caption, campaign=rule.campaign):
        raise ClaimRefused("disclosure_missing")
    with transaction.atomic(durable=True):
        rule = _rule_lock(rule)
        _claim_checks(rule=rule, identity=identity)
        claim = ActionClaim.objects.create(
            campaign=rule.campaign,
            rule=rule,
            participant=identity.participant,
            identity=identity,
            status=ClaimStatus.PENDING,
            reason="awaiting_window",
            amount=rule.reward_amount,
            currency=rule.campaign.currency,
            evidence={"video": asdict(video), "submitted_url": video_url[:500]},
            check_at=timezone.now() + timedelta(hours=rule.window_hours),
            client_ip=context.client_ip,
            device=context.device,
        )
        _hold_for(claim)
        transaction.on_commit(lambda: engagement_recheck_schedule(claim=claim))
    return claim


def disclosure_present(*, caption: str, campaign: Campaign) -> bool:
    """The caption opens with a disclosure. The compliance app's caption checker will take over
    this question; until then the campaign's wording or a plain ad label must come first."""
    head = (caption or "").strip().casefold()[:120]
    wordings = [campaign.disclosure_text, *AD_LABELS] if campaign.disclosure_text else AD_LABELS
    return any(head.startswith(wording.casefold()) for wording in wordings if wording)


AD_LABELS = ["ad", "#ad", "anzeige", "werbung", "#werbung", "publicidad", "#publicidad", "广告", "sponsored"]


def _video_fetch(*, token: TikTokToken, video_id: str):
    """The video through the person's own token, refreshing the token when it has expired."""
    if token.access_expires_at <= timezone.now() + timedelta(minutes=1):
        tokens = tiktok.token_refresh(refresh_token=token.refresh_token)
        token = tiktok_tokens_store(identity=token.identity, tokens=tokens)
    return tiktok.videos_query(access_token=token.access_token, video_ids=[video_id]).get(video_id)


def engagement_recheck_schedule(*, claim: ActionClaim) -> None:
    from django_q.models import Schedule

    Schedule.objects.create(
        name=f"engagement-recheck-{claim.pk}",
        func="verification.tasks.engagement_recheck_task",
        args=str(claim.pk),
        schedule_type=Schedule.ONCE,
        next_run=claim.check_at,
        repeats=1,
    )


def engagement_recheck(*, claim_id: int) -> ActionClaim:
    """The window closed: approve the share if the post is still live, disclosed and reached the
    thresholds; reject it (releasing the held budget) if not; ask a person if it looks bought."""
    claim = ActionClaim.objects.select_related("rule", "campaign", "identity").get(pk=claim_id)
    if claim.status != ClaimStatus.PENDING:
        return claim
    token = TikTokToken.objects.filter(identity=claim.identity, revoked_at__isnull=True).first()
    video_id = claim.evidence.get("video", {}).get("video_id", "")
    video = _video_fetch(token=token, video_id=video_id) if token else None
    rule = claim.rule
    signals = []
    if token is None:
        outcome = (ClaimStatus.REJECTED, "tiktok_disconnected")
    elif video is None:
        outcome = (ClaimStatus.REJECTED, "post_deleted")
    elif not disclosure_present(caption=video.caption, campaign=claim.campaign):
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
            views=video.view_count, likes=video.like_count, comments=video.comment_count, followers=followers
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
        if status == ClaimStatus.APPROVED:
            _reward_post(claim)
        elif status == ClaimStatus.REJECTED:
            _hold_release(claim)
        else:
            FraudSignal.objects.bulk_create(FraudSignal(claim=claim, code=c, detail=d) for c, d in signals)
    return claim


def claims_due_recheck(*, now=None) -> list[int]:
    """Pending shares whose window has closed: a safety net behind the one-off schedules."""
    now = now or timezone.now()
    return list(
        ActionClaim.objects.filter(status=ClaimStatus.PENDING, check_at__lte=now).values_list(
            "pk", flat=True
        )[:500]
    )


# The review queue: a person decides what the signals could not.


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
            claim=locked, decided_by=decided_by, decision=decision, reason=reason[:300]
        )
        if decision == "approve":
            if not locked.ledger_transaction_id:
                _reward_post(locked)
            locked.status, locked.reason = ClaimStatus.APPROVED, "review_approved"
        else:
            _hold_release(locked)
            if locked.ledger_transaction_id:
                transaction_reverse(
                    original=Transaction.objects.get(pk=locked.ledger_transaction_id),
                    reason="clawback",
                    idempotency_key=f"review-clawback:{locked.pk}",
                    description=f"Review rejected claim #{locked.pk}",
                )
            locked.status, locked.reason = ClaimStatus.REJECTED, "review_rejected"
        locked.decided_at = timezone.now()
        locked.save(update_fields=["status", "reason", "decided_at"])
    return locked


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
                participant_id__in={participant_id for participant_id, _code, _detail in flags},
                status__in=[ClaimStatus.APPROVED, ClaimStatus.NEEDS_REVIEW],
            )
            .order_by("pk")
        )
        for claim in claims:
            for participant_id, code, detail in flags:
                if participant_id == claim.participant_id:
                    FraudSignal.objects.get_or_create(
                        claim=claim, code=code, defaults={"detail": detail[:200]}
                    )
        flagged = {claim.participant_id for claim in claims}
        ActionClaim.objects.filter(
            pk__in=[claim.pk for claim in claims if claim.participant_id in flagged],
            status=ClaimStatus.APPROVED,
        ).update(status=ClaimStatus.NEEDS_REVIEW, reason=flags[0][1])
    return len(claims)
