import re
import secrets

from django.db import IntegrityError, transaction
from django.db.models import Sum
from django.utils import timezone
from django.utils.translation import gettext_lazy

from campaigns.models import ActionRule, Brand, Campaign, Trigger
from campaigns.selectors import campaign_claimability
from campaigns.services import campaign_budget_account
from joyback.ledger.models import Account, AccountKind
from joyback.ledger.services import InsufficientFunds, account_get_or_create, transfer_post
from verification.models import (
    ActionClaim,
    ClaimStatus,
    Identity,
    OptinCode,
    Participant,
    Provider,
    ProviderEvent,
)
from verification.providers.whatsapp import InboundMessage

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


def action_reward(*, rule: ActionRule, identity: Identity) -> ActionClaim:
    """Instant verification: the identity is verified, so the action is approved and paid at once."""
    with transaction.atomic(durable=True):
        # One lock per rule serialises its caps; the unique constraint still guards the one reward.
        rule = ActionRule.objects.select_for_update().select_related("campaign__brand").get(pk=rule.pk)
        campaign = rule.campaign
        claimability = campaign_claimability(campaign=campaign)
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
        claim = ActionClaim.objects.create(
            campaign=campaign,
            rule=rule,
            participant=identity.participant,
            identity=identity,
            status=ClaimStatus.APPROVED,
            reason="verified_identity",
            amount=rule.reward_amount,
            currency=campaign.currency,
            decided_at=timezone.now(),
        )
        try:
            reward = transfer_post(
                source=campaign_budget_account(campaign=campaign),
                destination=participant_payable_account(
                    participant=identity.participant, currency=campaign.currency
                ),
                amount=rule.reward_amount,
                reason="reward",
                idempotency_key=f"reward:{claim.pk}",
                reference=f"claim:{claim.pk}",
                description=f"{rule.get_trigger_display()} reward, {campaign.name}",
            )
        except InsufficientFunds:
            raise ClaimRefused("fully_claimed") from None
        claim.ledger_transaction_id = reward.pk
        claim.save(update_fields=["ledger_transaction_id"])
    return claim


def tiktok_login_complete(
    *, campaign: Campaign, participant: Participant, open_id: str, display_name: str
) -> tuple[Identity, ClaimRefused | None]:
    identity = identity_attach(
        participant=participant, provider=Provider.TIKTOK, subject=open_id, display_name=display_name
    )
    rule = campaign.rules.filter(trigger=Trigger.TIKTOK_LOGIN).first()
    if rule is None:
        return identity, None
    try:
        action_reward(rule=rule, identity=identity)
    except ClaimRefused as refusal:
        return identity, refusal
    return identity, None


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


def whatsapp_messages_record(*, payload: dict, messages: list[InboundMessage]) -> int:
    """Store each inbound message once (by its wamid) and turn opt-in codes into rewards."""
    handled = 0
    for message in messages:
        try:
            with transaction.atomic():
                ProviderEvent.objects.create(
                    provider=Provider.WHATSAPP, event_id=message.message_id, payload=payload
                )
        except IntegrityError:
            continue  # a redelivery of a message we already have
        handled += 1
        match = OPTIN_PATTERN.search(message.text)
        optin = (
            OptinCode.objects.filter(code=match.group(1).upper()).select_related("campaign").first()
            if match
            else None
        )
        if optin is None or optin.used_at:
            continue
        _whatsapp_optin(optin=optin, message=message)
    return handled


def _whatsapp_optin(*, optin: OptinCode, message: InboundMessage) -> None:
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
