"""What the providers send: the TikTok login and its tokens, WhatsApp opt-in codes, and the stored
webhook events the standing worker processes."""

import hashlib
import logging
import re
import secrets
from datetime import UTC, datetime

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.module_loading import import_string

from campaigns.consent import standard_wording, wording_current
from campaigns.models import Campaign, ConsentChannel, Trigger
from joyback.queue import claim_and_process
from verification import sql
from verification.models import (
    ConsentSource,
    Identity,
    OptinCode,
    Participant,
    Provider,
    ProviderEvent,
    TikTokToken,
)
from verification.posting import tiktok_post_event
from verification.providers.whatsapp import InboundMessage, StatusUpdate
from verification.selectors import provider_events_unfinished
from verification.services.consent import consent_record_give, opt_out_word, whatsapp_number_opt_out
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


def optin_code_get_or_create(
    *, campaign: Campaign, participant: Participant, language: str = "en"
) -> OptinCode:
    """The person's code for the campaign, with the consent wording they are shown beside it (the
    brand's latest in their language, else the standard one): sending the code agrees to it."""
    existing = OptinCode.objects.filter(campaign=campaign, participant=participant).first()
    if existing:
        return existing
    wording = wording_current(campaign=campaign, channel=ConsentChannel.WHATSAPP, language=language)
    text = (
        wording.text
        if wording
        else standard_wording(
            brand_name=campaign.brand.name, channel=ConsentChannel.WHATSAPP, language=language
        )
    )
    for _attempt in range(5):
        code = "".join(secrets.choice(OPTIN_ALPHABET) for _ in range(6))
        try:
            with transaction.atomic():
                return OptinCode.objects.create(
                    code=code,
                    campaign=campaign,
                    brand_id=campaign.brand_id,
                    participant=participant,
                    consent_text=text,
                    consent_language=wording.language if wording else language,
                    consent_wording=wording,
                )
        except IntegrityError:
            continue
    raise RuntimeError("could not find a free opt-in code")


def whatsapp_messages_store(
    *, messages: list[InboundMessage], statuses: list[StatusUpdate] | None = None
) -> list[int]:
    """Store each inbound message once, by its wamid, and each status once, by (wamid, status);
    returns the new events to process.

    Meta delivers at least once and retries for days, so a redelivery is stored never and
    answered 200 all the same.
    """
    events = [(message.message_id, vars(message)) for message in messages]
    events += [(f"status:{update.message_id}:{update.status}", vars(update)) for update in statuses or []]
    return provider_events_store(provider=Provider.WHATSAPP, events=events)


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
    """An inbound message carrying a campaign's opt-in code becomes an opt-in of its sender; a stop
    word, Meta's stop button or the person's marketing preference ends their WhatsApp consents; a
    status is handed to the receivers of sent messages (settings.WHATSAPP_STATUS_RECEIVERS)."""
    event = ProviderEvent.objects.get(pk=event_id, provider=Provider.WHATSAPP)
    if "status" in event.payload:
        return _whatsapp_status(StatusUpdate(**event.payload))
    message = InboundMessage(**event.payload)
    stop = _stop_source(message)
    if stop:
        ended = whatsapp_number_opt_out(wa_id=message.wa_id, source=stop, proof=message.message_id)
        logger.info("whatsapp message %s: opted out of %s", message.message_id, ended)
        return "opted_out"
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


def _stop_source(message: InboundMessage) -> str:
    if message.kind == "preference":
        return ConsentSource.WHATSAPP_PREFERENCE
    if not opt_out_word(message.text):
        return ""
    return (
        ConsentSource.WHATSAPP_BUTTON
        if message.kind in ("button", "interactive")
        else ConsentSource.WHATSAPP_STOP
    )


def _whatsapp_status(update: StatusUpdate) -> str:
    """What became of a message we sent: each receiver (the audience's sends) records it."""
    outcomes = [import_string(path)(update=update) for path in settings.WHATSAPP_STATUS_RECEIVERS]
    return next((outcome for outcome in outcomes if outcome), "status_unknown_message")


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
    if identity.participant_id == optin.participant_id and optin.consent_text:
        # Sending the code was agreeing to the words shown beside it: the message is the proof.
        # Recorded whatever the reward's outcome (a refused reward is no refused consent); a code
        # handed out before any words were shown beside it records none (fails closed).
        with transaction.atomic(durable=True):
            consent_record_give(
                identity=identity,
                channel=ConsentChannel.WHATSAPP,
                campaign=optin.campaign,
                text=optin.consent_text,
                language=optin.consent_language or "en",
                wording=optin.consent_wording,
                source=ConsentSource.WHATSAPP_MESSAGE,
                proof=message.message_id,
                at=_message_time(message),
            )
    OptinCode.objects.filter(pk=optin.pk, used_at__isnull=True).update(
        used_at=timezone.now(), outcome=outcome
    )
    return outcome


def _message_time(message: InboundMessage):
    """When the person sent it, by Meta's timestamp (Unix seconds as a string); now if unreadable."""
    try:
        return datetime.fromtimestamp(int(message.timestamp), tz=UTC)
    except (TypeError, ValueError, OverflowError):
        return timezone.now()


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
