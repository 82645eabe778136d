import hashlib
import logging
import re
import secrets
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import timedelta
from functools import partial

from django.db import IntegrityError, transaction
from django.db.models import Sum, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext_lazy

from campaigns.models import ActionRule, Brand, Campaign, Trigger
from campaigns.selectors import campaign_claimability
from campaigns.services import campaign_budget_account
from compliance.checker import NEEDS_REVIEW
from compliance.models import CaseStatus
from compliance.selectors import caption_verdict, case_for_claim, unresolved_claim_ids
from compliance.services import caption_check_record, case_open, case_recheck
from joyback.crypto import fingerprint
from joyback.ledger.models import Account, AccountKind, Hold
from joyback.ledger.services import (
    InsufficientFunds,
    Posting,
    account_get_or_create,
    accounts_lock,
    hold_commit,
    hold_reserve,
    hold_void,
    posting_post,
    transfer_post,
)
from joyback.queue import claim_and_process, standing_work_soon, task_schedule_once
from verification import sql
from verification.events import claim_event_emit
from verification.fraud import engagement_signals, fraud_signals_at_claim
from verification.models import (
    ActionClaim,
    ClaimStatus,
    FraudSignal,
    Identity,
    OptinCode,
    Participant,
    PostStatus,
    Provider,
    ProviderEvent,
    ReviewDecision,
    TikTokPost,
    TikTokToken,
)
from verification.providers import tiktok
from verification.providers.whatsapp import InboundMessage
from verification.selectors import provider_events_unfinished

logger = logging.getLogger(__name__)

# What a person is told about an action that earned nothing, by refusal code. Codes are stored
# (an opt-in's outcome), the words are chosen when shown, in the reader's language.
REFUSALS = {
    "already_claimed": gettext_lazy("This account has already claimed this reward."),
    "one_per_person": gettext_lazy(
        "You have already earned this reward with another account. Each person earns it once."
    ),
    "number_taken": gettext_lazy("This WhatsApp number already belongs to another claim."),
    "fully_claimed": gettext_lazy(
        "This campaign is fully claimed: every reward has found its person. Thank you!"
    ),
    "rule_cap": gettext_lazy("All rewards for this action have been claimed."),
    "period_cap": gettext_lazy("You have reached this campaign's limit for now."),
    "allowance": gettext_lazy("You have reached the most this brand rewards one person."),
    "prerequisite": gettext_lazy("Do the step before this one first."),
    "prerequisite_in_review": gettext_lazy(
        "Your earlier step is being checked by the brand. You can go on once it is confirmed."
    ),
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
    "post_under_way": gettext_lazy(
        "Your video is on its way to TikTok through JoyBack; it counts for this step once it is public."
    ),
    "review_decision": gettext_lazy("Choose approve or reject."),
    "review_reason": gettext_lazy("Give a reason for the decision."),
    "review_done": gettext_lazy("This claim has already been decided."),
    "licence_required": gettext_lazy("Read the licence above and agree to it to share your video."),
    "spark_code": gettext_lazy(
        "This Spark Ads code does not work for this video. Generate it in TikTok for the video you "
        "shared and paste it exactly as shown."
    ),
    "spark_days": gettext_lazy("Choose how long the Spark Ads code is valid, as you chose it in TikTok."),
    "purchase_required": gettext_lazy(
        "Only buyers can earn this reward: buy from the brand's shop first. This step opens once "
        "your purchase is confirmed."
    ),
    "purchase_pending": gettext_lazy(
        "Your purchase is still in its return window. This step opens once it is confirmed."
    ),
    "reach_cap": gettext_lazy("The reach rewards of this campaign are used up for you. Thank you!"),
    "licence_revoked": gettext_lazy("This licence was already taken back."),
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


class SecondAccount(ClaimRefused):
    """The same person came back with another account of the same provider: one person earns an
    action once, so it earns nothing, and their earlier claims go to review with the reason."""

    def __init__(self, *, first: ActionClaim, identity: Identity):
        super().__init__("one_per_person")
        self.participant_id = identity.participant_id
        self.detail = (
            f'second {identity.get_provider_display()} account {identity} for "{first.rule}", '
            f"already claimed by {first.identity} (claim #{first.pk})"
        )[:200]


def participant_payable_account(*, participant: Participant, currency: str) -> Account:
    return account_get_or_create(
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


def claim_clawback(*, claim: ActionClaim, reason: str) -> ActionClaim:
    """Take a reward back (a refunded purchase, a deleted post). Undecided: its hold is released.
    Approved: the money returns to the campaign budget from what the person is still owed, and
    whatever was already paid out becomes a debt netted against their next payout."""
    with transaction.atomic(durable=True):
        locked = ActionClaim.objects.select_for_update().select_related("campaign").get(pk=claim.pk)
        if locked.status in (ClaimStatus.REJECTED, ClaimStatus.CLAWED_BACK):
            return locked
        if locked.reach_paid and locked.status != ClaimStatus.APPROVED:
            # A reach share still counting: its hold goes back, and what its top-ups paid.
            _hold_release(locked)
            locked.amount = locked.reach_paid
            ActionClaim.objects.filter(pk=locked.pk).update(amount=locked.amount, next_check_at=None)
        if locked.ledger_transaction_id:
            _reward_take_back(locked, reason=reason, idempotency_key=f"clawback:{locked.pk}")
            ActionClaim.objects.filter(pk=locked.pk).update(
                status=ClaimStatus.CLAWED_BACK, reason=reason[:40]
            )
        else:
            _hold_release(locked)
            ActionClaim.objects.filter(pk=locked.pk).update(
                status=ClaimStatus.REJECTED, reason=reason[:40], decided_at=timezone.now()
            )
    claim.refresh_from_db()
    return claim


def _reward_take_back(claim: ActionClaim, *, reason: str, idempotency_key: str) -> None:
    """A posted reward back to its budget: from the person's payable while it is still there,
    the rest (already paid out) as a debt on their receivable."""
    payable = participant_payable_account(participant=claim.participant, currency=claim.currency)
    receivable = participant_receivable_account(participant=claim.participant, currency=claim.currency)
    accounts = accounts_lock(account_ids=[payable.pk, receivable.pk])
    from_payable = min(max(accounts[payable.pk].balance, 0), claim.amount)
    legs = [(campaign_budget_account(campaign=claim.campaign), -claim.amount)]
    if from_payable:
        legs.append((accounts[payable.pk], from_payable))
    if claim.amount - from_payable:
        legs.append((accounts[receivable.pk], claim.amount - from_payable))
    posting_post(
        posting=Posting(
            reason="clawback",
            legs=tuple(legs),
            idempotency_key=idempotency_key,
            reference=f"claim:{claim.pk}",
            description=f"Clawback: {reason}"[:200],
        )
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


# A video on its way to TikTok through JoyBack: its reward is held and its claim comes once it is
# public, so it counts against the caps as a claim would.
POSTS_UNDER_WAY = [PostStatus.STORED, PostStatus.UPLOADING, PostStatus.PROCESSING, PostStatus.PUBLISHED]


def identity_pseudonym(*, provider: str, subject: str) -> str:
    return "erased:" + fingerprint(f"{provider}:{subject}")


def participant_identities_erase(*, participant: Participant) -> None:
    """Erasure, verification's part: account ids become pseudonyms (one reward per account still
    holds), names and tokens go, and where the claims came from (address, browser) is forgotten.
    Claims, their amounts and evidence stay: they are the records behind the ledger."""
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


def _caps_check(*, rule: ActionRule, identity: Identity) -> None:
    campaign = rule.campaign
    counted = [ClaimStatus.APPROVED, ClaimStatus.PENDING, ClaimStatus.NEEDS_REVIEW]
    posts = TikTokPost.objects.filter(status__in=POSTS_UNDER_WAY)
    if rule.total_cap is not None and (
        ActionClaim.objects.filter(rule=rule, status__in=counted).count() + posts.filter(rule=rule).count()
        >= rule.total_cap
    ):
        raise ClaimRefused("rule_cap")
    if campaign.per_identity_period_cap:
        since = timezone.now() - timezone.timedelta(days=campaign.per_identity_period_days)
        recent = ActionClaim.objects.filter(
            campaign=campaign, participant=identity.participant, status__in=counted, created_at__gte=since
        ).count()
        recent += posts.filter(campaign=campaign, participant=identity.participant).count()
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
        earned += (
            posts.filter(participant=identity.participant, campaign__currency=campaign.currency).aggregate(
                total=Sum("rule__reward_amount")
            )["total"]
            or 0
        )
        if earned + rule.reward_amount > allowance:
            raise ClaimRefused("allowance")


@dataclass(frozen=True)
class ClaimContext:
    """Where a claim came from: the network address and a hash of the browser's traits."""

    client_ip: str | None = None
    device: str = ""


@contextmanager
def _second_accounts_flagged():
    """Put outside the claim's transaction: the refused claim rolls back first, then the person's
    earlier claims are flagged in a transaction of their own."""
    try:
        yield
    except SecondAccount as second:
        participants_flag(flags=[(second.participant_id, "second_account", second.detail)])
        raise


def _rule_lock(rule: ActionRule) -> ActionRule:
    # One lock per rule serialises its caps; the unique constraint still guards the one reward.
    # Only the rule's row: FOR UPDATE would otherwise lock the joined campaign and brand rows too,
    # and every instant reward of the brand would wait on every other.
    return (
        ActionRule.objects.select_for_update(of=("self",)).select_related("campaign__brand").get(pk=rule.pk)
    )


def _claim_checks(*, rule: ActionRule, identity: Identity) -> None:
    claimability = campaign_claimability(campaign=rule.campaign)
    if not claimability.open:
        raise ClaimRefused(claimability.reason)
    if ActionClaim.objects.filter(rule=rule, identity=identity).exists():
        raise ClaimRefused("already_claimed")
    earlier = ActionClaim.objects.filter(rule=rule, participant=identity.participant, purchase__isnull=True)
    first = earlier.exclude(identity=identity).select_related("identity").first()
    if first is not None:
        raise SecondAccount(first=first, identity=identity)
    if rule.prerequisite_id:
        before = set(
            ActionClaim.objects.filter(
                rule_id=rule.prerequisite_id, participant=identity.participant
            ).values_list("status", flat=True)
        )
        if ClaimStatus.APPROVED not in before:
            # A step done but held for review (a second account, a shared bank account) is not a
            # step left undone: say that it is being checked, not "do it first".
            raise ClaimRefused(
                "prerequisite_in_review" if ClaimStatus.NEEDS_REVIEW in before else "prerequisite"
            )
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
    with _second_accounts_flagged(), transaction.atomic(durable=True):
        rule = _rule_lock(rule)
        _claim_checks(rule=rule, identity=identity)
        signals = fraud_signals_at_claim(
            rule=rule, identity=identity, context=context, evidence=evidence or {}
        )
        claim = ActionClaim.objects.create(
            campaign=rule.campaign,
            brand_id=rule.campaign.brand_id,
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
            FraudSignal.objects.bulk_create(
                FraudSignal(claim=claim, brand_id=claim.brand_id, code=c, detail=d) for c, d in signals
            )
            claim_event_emit(claim, "action.verified")
        else:
            _reward_post(claim, due_now=True)
            claim_event_emit(claim, "action.verified", "reward.approved")
    return claim


def _payable(claim: ActionClaim) -> Account:
    return participant_payable_account(participant=claim.participant, currency=claim.currency)


def _reward_post(claim: ActionClaim, *, due_now: bool = False) -> None:
    """Budget -> the person's payable: committed from the claim's hold if it has one.

    due_now: the caller holds no lock that comes after the person's in the lock order (a claim's),
    so the person is marked due for a payout in this transaction, before the ledger's locks."""
    if due_now:
        participant_payout_due(participant_id=claim.participant_id)
    else:
        transaction.on_commit(partial(participant_payout_due, participant_id=claim.participant_id))
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


PAYOUTS_DUE = "payouts due"  # the standing work the payouts app (to the right) registers


def participant_payout_due(*, participant_id: int) -> None:
    """Money is owed to the person: the payout pipeline takes them in its next batch. One statement
    on the person's row (in the caller's transaction, or on its own), not a queued task per reward;
    an earlier mark not yet taken is kept, so the oldest wait is what the pipeline sees.

    Always a write, never skipped when a mark is there: a batch that holds the person and has
    cleared their mark is waited for, so this reward is marked again rather than left to the sweep."""
    Participant.objects.filter(pk=participant_id).update(
        payout_due_at=Coalesce("payout_due_at", Value(timezone.now()))
    )
    standing_work_soon(PAYOUTS_DUE)


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
            "brand_id": identity.brand_id,
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
                return OptinCode.objects.create(
                    code=code, campaign=campaign, brand_id=campaign.brand_id, participant=participant
                )
        except IntegrityError:
            continue
    raise RuntimeError("could not find a free opt-in code")


def whatsapp_messages_store(*, messages: list[InboundMessage]) -> list[int]:
    """Store each inbound message once, by its wamid; returns the new events to process.

    Meta delivers at least once and retries for days, so a redelivery is stored never and
    answered 200 all the same.
    """
    return provider_events_store(
        provider=Provider.WHATSAPP, events=[(message.message_id, vars(message)) for message in messages]
    )


def provider_event_store(*, provider: str, event_id: str, payload: dict) -> int | None:
    """Insert the event unless (provider, event_id) is already stored; its id, or None for a
    redelivery."""
    new = provider_events_store(provider=provider, events=[(event_id, payload)])
    return new[0] if new else None


def provider_events_store(*, provider: str, events: list[tuple[str, dict]]) -> list[int]:
    """Insert each (event_id, payload) unless already stored; the ids of the new ones. One statement,
    so one commit for a whole delivery: no savepoint, no exception on the (common) duplicate. Nothing
    is queued: the standing worker finds them (provider_events_process)."""
    if not events:
        return []
    return sql.provider_events_insert(provider=provider, events=events, now=timezone.now())


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
    """Store and process at once (the sandbox phone and tests); the webhook only stores."""
    new = whatsapp_messages_store(messages=messages)
    return provider_events_process(ids=new) if new else 0


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
    """authorization.removed: the person took back JoyBack's access; their tokens are dead.
    post.publish.*: TikTok's word on a video JoyBack posted (verification.posting)."""
    event = ProviderEvent.objects.get(pk=event_id, provider=Provider.TIKTOK)
    if str(event.payload.get("event", "")).startswith("post.publish."):
        from verification.posting import tiktok_post_event  # posting builds on this module

        return tiktok_post_event(payload=event.payload)
    if event.payload.get("event") != "authorization.removed":
        return "ignored"
    revoked = TikTokToken.objects.filter(
        identity__provider=Provider.TIKTOK,
        identity__subject=event.payload.get("user_openid", ""),
        revoked_at__isnull=True,
    ).update(revoked_at=timezone.now())
    return f"revoked {revoked}"


# Stored events are processed by a standing worker, not by a task queued per delivery: the intake is
# one statement and one commit, and an event committed just before a crash is still processed.
EVENT_PROCESSORS = {Provider.WHATSAPP: whatsapp_event_process, Provider.TIKTOK: tiktok_event_process}
EVENT_LEASE = timedelta(minutes=5)  # a worker that dies mid-event gives it back after this
EVENT_MAX_ATTEMPTS = 5  # then it waits in the admin for a person, instead of failing forever


def provider_events_process(*, limit: int = 100, ids: list[int] | None = None) -> int:
    """Claim up to `limit` unprocessed events (or these ids), oldest first, and process each; how many
    were claimed. Each processor is safe to repeat (one reward per rule and identity, a code used
    once), as an event whose processing failed is claimed again after its lease."""
    return claim_and_process(
        provider_events_unfinished().filter(attempts__lt=EVENT_MAX_ATTEMPTS),
        process=_provider_event_run,
        limit=limit,
        lease=EVENT_LEASE,
        order_by="pk",
        ids=ids,
    )


def _provider_event_run(event_id: int) -> None:
    provider = ProviderEvent.objects.values_list("provider", flat=True).get(pk=event_id)
    provider_event_processed(event_id=event_id, outcome=EVENT_PROCESSORS[provider](event_id=event_id))


def provider_event_processed(*, event_id: int, outcome: str) -> None:
    ProviderEvent.objects.filter(pk=event_id, processed_at__isnull=True).update(
        processed_at=timezone.now(), outcome=outcome[:40], claimed_until=None
    )


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
    video_id = tiktok.video_id_from_url(video_url)
    if video_id is None:
        raise ClaimRefused("video_link")
    if TikTokPost.objects.filter(rule=rule, identity=identity, status__in=POSTS_UNDER_WAY).exists():
        raise ClaimRefused("post_under_way")
    token = TikTokToken.objects.filter(identity=identity, revoked_at__isnull=True).first()
    if token is None:
        raise ClaimRefused("tiktok_reconnect")
    from verification import content  # builds on this module

    purchases = content.purchase_gate(rule=rule, participant=identity.participant)
    terms = content.licence_terms_for_share(campaign=rule.campaign, accepted=licence_accepted)
    video = _video_fetch(token=token, video_id=video_id)
    if video is None:
        raise ClaimRefused("video_not_found")
    ad_code = (
        content.spark_code_check(code=spark_code, days=spark_days, video_id=video_id) if spark_code else None
    )
    verdict = caption_verdict(campaign=rule.campaign, caption=video.caption, platform="tiktok")
    # TikTok cannot report its paid-partnership label back: the person's word is the evidence.
    label_state = "attested_on" if label_attested else "not_attested"
    if verdict.passed:
        reason = "awaiting_window"
    else:
        reason = "compliance_review" if verdict.verdict == NEEDS_REVIEW else "disclosure_fix"
    with _second_accounts_flagged(), transaction.atomic(durable=True):
        rule = _rule_lock(rule)
        _claim_checks(rule=rule, identity=identity)
        amount = content.share_reward(rule=rule, purchases=purchases)
        check_at = timezone.now() + timedelta(hours=rule.window_hours)
        next_check_at = None
        if rule.pays_by_reach:
            from verification.reach import reach_ceiling, reach_interval

            amount = reach_ceiling(rule=rule, participant=identity.participant, per_video=amount)
            if amount <= 0:
                raise ClaimRefused("reach_cap")
            next_check_at = min(timezone.now() + reach_interval(rule), check_at)
        evidence = {"video": asdict(video), "submitted_url": video_url[:500], "label_state": label_state}
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
        _hold_for(claim)
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


def _video_fetch(*, token: TikTokToken, video_id: str):
    """The video through the person's own token, refreshing the token when it has expired."""
    if token.access_expires_at <= timezone.now() + timedelta(minutes=1):
        tokens = tiktok.token_refresh(refresh_token=token.refresh_token)
        token = tiktok_tokens_store(identity=token.identity, tokens=tokens)
    return tiktok.videos_query(access_token=token.access_token, video_ids=[video_id]).get(video_id)


def engagement_recheck_schedule(*, claim: ActionClaim) -> None:
    if claim.rule.pays_by_reach:
        from verification.reach import reach_first_check, reach_schedule

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
        from verification.reach import reach_recheck

        return reach_recheck(claim_id=claim.pk)
    case = case_for_claim(claim_id=claim.pk)
    if case is not None and case.unresolved:
        return claim  # the remediation path settles the disclosure first, then comes back here
    token = TikTokToken.objects.filter(identity=claim.identity, revoked_at__isnull=True).first()
    video_id = claim.evidence.get("video", {}).get("video_id", "")
    video = _video_fetch(token=token, video_id=video_id) if token else None
    rule = claim.rule
    signals = []
    verdict = caption_verdict(campaign=claim.campaign, caption=video.caption) if video else None
    if token is None:
        outcome = (ClaimStatus.REJECTED, "tiktok_disconnected")
    elif video is None:
        outcome = (ClaimStatus.REJECTED, "post_deleted")
    elif not verdict.passed and case is None:
        # Disclosure gone or broken since the submit: the person gets the remediation clock.
        return _share_remediation_open(claim=claim, verdict=verdict, caption=video.caption)
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
            _reward_post(claim)
            claim_event_emit(claim, "reward.approved")
        elif status == ClaimStatus.REJECTED:
            _hold_release(claim)
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


def _share_remediation_open(*, claim: ActionClaim, verdict, caption: str) -> ActionClaim:
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
    video = _video_fetch(token=token, video_id=video_id) if token else None
    caption = video.caption if video else ""
    verdict = caption_verdict(campaign=claim.campaign, caption=caption)
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
            _hold_release(locked)
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


def compliance_cleared(*, claim_id: int) -> ActionClaim:
    """The brand cleared a doubtful disclosure: the share waits for its window, or is checked now."""
    with transaction.atomic(durable=True):
        ActionClaim.objects.filter(pk=claim_id, status=ClaimStatus.PENDING).update(reason="awaiting_window")
    claim = ActionClaim.objects.get(pk=claim_id)
    if claim.status == ClaimStatus.PENDING and claim.check_at and claim.check_at <= timezone.now():
        return engagement_recheck(claim_id=claim_id)
    return claim


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
            from verification.reach import reach_review_decide

            reach_review_decide(locked=locked, decision=decision)
            return locked
        if decision == "approve":
            if not locked.ledger_transaction_id:
                _reward_post(locked)
            else:
                # Flagged after it was posted: its payout waited for this decision. Marked after the
                # commit: the claim's lock comes after the person's in the lock order.
                transaction.on_commit(partial(participant_payout_due, participant_id=locked.participant_id))
            locked.status, locked.reason = ClaimStatus.APPROVED, "review_approved"
        else:
            _hold_release(locked)
            if locked.ledger_transaction_id:
                _reward_take_back(
                    locked,
                    reason=f"review rejected claim #{locked.pk}",
                    idempotency_key=f"review-clawback:{locked.pk}",
                )
            locked.status, locked.reason = ClaimStatus.REJECTED, "review_rejected"
        locked.decided_at = timezone.now()
        locked.save(update_fields=["status", "reason", "decided_at"])
        claim_event_emit(locked, "reward.approved" if decision == "approve" else "claim.rejected")
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
                        claim=claim, code=code, defaults={"detail": detail[:200], "brand_id": claim.brand_id}
                    )
        flagged = {claim.participant_id for claim in claims}
        ActionClaim.objects.filter(
            pk__in=[claim.pk for claim in claims if claim.participant_id in flagged],
            status=ClaimStatus.APPROVED,
        ).update(status=ClaimStatus.NEEDS_REVIEW, reason=flags[0][1])
    return len(claims)
