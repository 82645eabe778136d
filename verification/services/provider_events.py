"""What the providers send: the TikTok login and its tokens, WhatsApp opt-in codes, and the stored
webhook events the standing worker processes."""

import hashlib
import logging
import re
import secrets

from django.db import IntegrityError, transaction
from django.utils import timezone

from campaigns.models import Campaign, Trigger
from joyback.queue import claim_and_process
from verification import sql
from verification.models import (
    Identity,
    OptinCode,
    Participant,
    Provider,
    ProviderEvent,
    TikTokToken,
)
from verification.posting import tiktok_post_event
from verification.providers.whatsapp import InboundMessage
from verification.selectors import provider_events_unfinished
from verification.services.participants import identity_attach, tiktok_tokens_store
from verification.services.refusals import ClaimRefused
from verification.services.rewards import ClaimContext, action_reward

logger = logging.getLogger(__name__)


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
EVENT_MAX_ATTEMPTS = 5  # then it waits in the admin for a person, instead of failing forever


def provider_events_process(*, limit: int = 100, ids: list[int] | None = None) -> int:
    """Claim up to `limit` unprocessed events (or these ids), oldest first, and process each; how many
    were claimed. Each processor is safe to repeat (one reward per rule and identity, a code used
    once), as an event whose processing failed is claimed again after its lease."""
    return claim_and_process(
        provider_events_unfinished().filter(attempts__lt=EVENT_MAX_ATTEMPTS),
        process=_provider_event_run,
        limit=limit,
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
