"""WhatsApp re-engagement: a brand sends one of the approved templates (synced from the WhatsApp
Business Management API) to its consented audience at a time. Before it sends it sees the cost per
country at Meta's rates, the messaging tier's remaining daily limit and who is skipped (no consent,
opted out, +1 numbers Meta refuses marketing to, people Meta capped with 131049). Sends go at the
tier's pace through payouts.notifications, each with the person's consent read again as it goes;
the statuses come back by the signed webhook (verification hands them to whatsapp_status_record)."""

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from campaigns.models import ConsentChannel
from joyback.modes import provider_routed_for
from payouts.audience.rates import RATES_DATE, country_of, marketing_rate_micros
from payouts.audience.selectors import tier_used_today
from payouts.models import Broadcast, BroadcastRecipient, Notification, WhatsAppAccount, WhatsAppTemplate
from payouts.models.audience import BroadcastStatus, RecipientStatus
from payouts.notifications import audience_messages_notify
from verification.models import ConsentAction, ConsentRecord, Identity, Provider
from verification.providers import whatsapp
from verification.providers.whatsapp import STATUS_RANK, StatusUpdate
from verification.selectors import consent_in_force

SENDABLE_CATEGORIES = ("MARKETING", "UTILITY")
# The pace: people a minute (the schedule runs every minute), far under the number's 80 messages a
# second, so a large send spreads out and a STOP sent during it is read before the next batch.
BROADCAST_PER_MINUTE = 600
# Meta holds back marketing messages to a person it capped (131049) for a while: not tried again
# within this time.
CAPPED_FOR = timedelta(days=1)
# Template languages at Meta for the languages people consent in.
META_LANGUAGES = {
    "en": ("en", "en_US", "en_GB"),
    "de": ("de",),
    "es": ("es", "es_ES", "es_MX"),
    "zh-hans": ("zh_CN",),
}


class BroadcastRefused(Exception):
    """A send that cannot be made as asked; the message is for the brand member."""


NOT_CONNECTED = gettext_lazy("Connect your WhatsApp Business Account")


def whatsapp_account_for(*, brand) -> WhatsAppAccount | None:
    """The brand's connected WhatsApp Business Account, or None: then it sends nothing."""
    return WhatsAppAccount.objects.filter(brand=brand, disconnected_at__isnull=True).first()


def whatsapp_sender(*, brand_id: int) -> whatsapp.Sender:
    """The brand's own number and token; refused when none is connected (fail closed: never the
    platform's number for a brand's marketing)."""
    account = WhatsAppAccount.objects.filter(brand_id=brand_id, disconnected_at__isnull=True).first()
    if account is None:
        raise BroadcastRefused(str(NOT_CONNECTED))
    return whatsapp.Sender(account.phone_number_id, account.access_token)


def whatsapp_account_connect(*, brand, user, code: str) -> WhatsAppAccount:
    """Embedded Signup's end: the code exchanged for the business's token, the account the token
    was granted and its number read from Meta, our app subscribed to its webhooks; the brand's
    earlier account (if any) disconnected in the same transaction."""
    if not code.strip():
        raise BroadcastRefused(_("WhatsApp gave no signup code: start the signup again."))
    try:
        with provider_routed_for(livemode=brand.livemode):
            token = whatsapp.signup_code_exchange(code=code.strip())
            wabas = whatsapp.token_wabas(token=token)
            if len(wabas) != 1:
                raise BroadcastRefused(_("Choose exactly one WhatsApp Business Account in the signup."))
            numbers = whatsapp.waba_phone_numbers(waba_id=wabas[0], token=token)
            if not numbers:
                raise BroadcastRefused(_("This WhatsApp Business Account has no phone number yet."))
            whatsapp.waba_subscribe(waba_id=wabas[0], token=token)
    except whatsapp.WhatsAppError as error:
        if error.subcode in (36007, 36009):
            raise BroadcastRefused(
                _("The signup code expired or was used: start the signup again.")
            ) from error
        raise BroadcastRefused(_("WhatsApp refused the connection; nothing was saved. Try again.")) from error
    number = numbers[0]
    now = timezone.now()
    with transaction.atomic(durable=True):
        WhatsAppAccount.objects.filter(brand=brand, disconnected_at__isnull=True).update(disconnected_at=now)
        account = WhatsAppAccount.objects.create(
            brand=brand,
            waba_id=wabas[0],
            phone_number_id=number.phone_number_id,
            display_number=number.display_number[:40],
            verified_name=number.verified_name[:200],
            access_token=token,
            connected_by=user,
            connected_at=now,
        )
    return account


def whatsapp_account_disconnect(*, brand) -> None:
    """No more sends from the account: the ones planned wait (refused) until one is connected."""
    WhatsAppAccount.objects.filter(brand=brand, disconnected_at__isnull=True).update(
        disconnected_at=timezone.now()
    )


def templates_sync(*, brand) -> int:
    """The brand's account's templates as Meta lists them now; how many. A template gone from the
    list stays with its last status, so a send made with it still reads its name."""
    account = whatsapp_account_for(brand=brand)
    if account is None:
        raise BroadcastRefused(str(NOT_CONNECTED))
    with provider_routed_for(livemode=brand.livemode):
        listed = whatsapp.templates_list(waba_id=account.waba_id, token=account.access_token)
    now = timezone.now()
    with transaction.atomic(durable=True):
        for template in listed:
            WhatsAppTemplate.objects.update_or_create(
                brand=brand,
                waba_id=account.waba_id,
                name=template.name,
                language=template.language,
                defaults={
                    "template_id": template.template_id,
                    "status": template.status,
                    "category": template.category,
                    "body": template.body,
                    "parameters": template.parameters,
                    "synced_at": now,
                },
            )
    return len(listed)


def templates_sendable(*, brand) -> dict[str, list[WhatsAppTemplate]]:
    """The brand's approved marketing and utility templates of its connected account, by name,
    with their languages; none without an account."""
    account = whatsapp_account_for(brand=brand)
    if account is None:
        return {}
    found: dict[str, list[WhatsAppTemplate]] = {}
    for template in WhatsAppTemplate.objects.filter(
        brand=brand, waba_id=account.waba_id, status="APPROVED", category__in=SENDABLE_CATEGORIES
    ).order_by("name", "language"):
        found.setdefault(template.name, []).append(template)
    return found


@dataclass
class Plan:
    """Who a send reaches and who it skips, what it costs and what the tier leaves."""

    send: list = field(default_factory=list)  # (participant id, identity, country, language, micros)
    skipped: list = field(default_factory=list)  # (participant id, identity, reason)
    by_country: dict = field(default_factory=dict)  # country: [people, micros]
    tier: str = ""
    tier_limit: int | None = None
    tier_remaining: int | None = None

    @property
    def cost_micros(self) -> int:
        return sum(micros for _people, micros in self.by_country.values())

    @property
    def waiting_for_tier(self) -> int:
        if self.tier_remaining is None:
            return 0
        return max(0, len(self.send) - self.tier_remaining)


SKIP_REASONS = {
    "no_consent": gettext_lazy("never agreed to WhatsApp messages"),
    "opted_out": gettext_lazy("stopped the brand's messages"),
    "us_number": gettext_lazy("a +1 number: Meta delivers no marketing templates to US numbers"),
    "capped": gettext_lazy("Meta held back a marketing message to them in the last day (131049)"),
    "erased": gettext_lazy("asked for their data to be erased"),
}


def skip_reason_text(reason: str) -> str:
    return str(SKIP_REASONS.get(reason, reason))


def broadcast_plan(*, brand, template_name: str, campaign_id: int | None = None) -> Plan:
    """Every WhatsApp number of the brand's people (of one campaign, or all), and what becomes of
    each: sent, or skipped and why. Read again when the send is made."""
    sender = whatsapp_sender(brand_id=brand.pk)
    languages = {t.language for t in templates_sendable(brand=brand).get(template_name, [])}
    if not languages:
        raise BroadcastRefused(_("Choose one of the approved templates."))
    plan = Plan()
    with provider_routed_for(livemode=brand.livemode):
        plan.tier, plan.tier_limit = whatsapp.messaging_limit(sender=sender)
    if plan.tier_limit is not None:
        plan.tier_remaining = max(0, plan.tier_limit - tier_used_today(brand_id=brand.pk))
    identities = Identity.objects.filter(brand=brand, provider=Provider.WHATSAPP).order_by("participant_id")
    if campaign_id:
        identities = identities.filter(participant__claims__campaign_id=campaign_id).distinct()
    latest = _latest_consents(brand=brand)
    capped = set(
        BroadcastRecipient.objects.filter(
            brand=brand, error_code=131049, sent_at__gte=timezone.now() - CAPPED_FOR
        ).values_list("participant_id", flat=True)
    )
    for identity in identities:
        consent = latest.get(identity.participant_id)
        reason = _skip_reason(identity=identity, consent=consent, capped=capped)
        if reason:
            plan.skipped.append((identity.participant_id, identity, reason))
            continue
        country = country_of(identity.subject)
        micros = marketing_rate_micros(country)
        language = _template_language(consent[1], languages)
        plan.send.append((identity.participant_id, identity, country, language, micros))
        people, cost = plan.by_country.get(country, (0, 0))
        plan.by_country[country] = (people + 1, cost + micros)
    return plan


def _latest_consents(*, brand) -> dict[int, tuple[str, str]]:
    rows = (
        ConsentRecord.objects.filter(brand=brand, channel=ConsentChannel.WHATSAPP)
        .order_by("participant_id", "-at", "-pk")
        .distinct("participant_id")
        .values_list("participant_id", "action", "language")
    )
    return {participant_id: (action, language) for participant_id, action, language in rows}


def _skip_reason(*, identity, consent, capped) -> str:
    if identity.subject.startswith("erased:"):
        return "erased"
    if consent is None:
        return "no_consent"
    if consent[0] != ConsentAction.GIVEN:
        return "opted_out"
    if identity.subject.startswith("1"):
        return "us_number"
    if identity.participant_id in capped:
        return "capped"
    return ""


def _template_language(consented_in: str, available: set[str]) -> str:
    for code in META_LANGUAGES.get(consented_in or "en", ()):
        if code in available:
            return code
    for code in META_LANGUAGES["en"]:
        if code in available:
            return code
    return sorted(available)[0]


def broadcast_create(
    *, brand, user, template_name: str, parameters: list[str], send_at, campaign_id: int | None = None
) -> Broadcast:
    """The send as planned now, every person's row written (to send, or skipped and why)."""
    whatsapp_sender(brand_id=brand.pk)
    templates = templates_sendable(brand=brand).get(template_name, [])
    if not templates:
        raise BroadcastRefused(_("Choose one of the approved templates."))
    wanted = templates[0].parameters
    parameters = [value.strip() for value in parameters if value.strip()]
    if len(parameters) != wanted:
        raise BroadcastRefused(
            _("This template takes %(wanted)s values, one per line; you gave %(given)s.")
            % {"wanted": wanted, "given": len(parameters)}
        )
    if send_at < timezone.now() - timedelta(minutes=5):
        raise BroadcastRefused(_("Choose a time from now on."))
    plan = broadcast_plan(brand=brand, template_name=template_name, campaign_id=campaign_id)
    if not plan.send:
        raise BroadcastRefused(_("Nobody in this audience may be sent WhatsApp messages now."))
    with transaction.atomic(durable=True):
        broadcast = Broadcast.objects.create(
            brand=brand,
            template_name=template_name,
            campaign_id=campaign_id,
            parameters=parameters,
            send_at=send_at,
            created_by=user,
            estimate={country: [people, micros] for country, (people, micros) in plan.by_country.items()},
            rates_date=RATES_DATE,
            tier=plan.tier,
        )
        BroadcastRecipient.objects.bulk_create(
            [
                BroadcastRecipient(
                    broadcast=broadcast,
                    brand=brand,
                    participant_id=participant_id,
                    identity=identity,
                    country=country,
                    language=language,
                    cost_micros=micros,
                )
                for participant_id, identity, country, language, micros in plan.send
            ]
            + [
                BroadcastRecipient(
                    broadcast=broadcast,
                    brand=brand,
                    participant_id=participant_id,
                    identity=identity,
                    status=RecipientStatus.SKIPPED,
                    skip_reason=reason,
                )
                for participant_id, identity, reason in plan.skipped
            ]
        )
    return broadcast


def broadcast_cancel(*, broadcast: Broadcast) -> None:
    with transaction.atomic(durable=True):
        locked = Broadcast.objects.select_for_update().get(pk=broadcast.pk)
        if locked.status != BroadcastStatus.SCHEDULED:
            raise BroadcastRefused(_("Only a send that has not started can be cancelled."))
        locked.status = BroadcastStatus.CANCELLED
        locked.save(update_fields=["status"])


def broadcasts_send_due(*, now=None) -> int:
    """One pass of the sends due: at most BROADCAST_PER_MINUTE people (the pace) and what the
    tier's 24 hours leave, each with their consent read again now; how many were queued."""
    now = now or timezone.now()
    room = BROADCAST_PER_MINUTE
    queued = 0
    for broadcast in Broadcast.objects.filter(
        status__in=[BroadcastStatus.SCHEDULED, BroadcastStatus.SENDING], send_at__lte=now
    ).order_by("send_at", "pk"):
        try:
            sender = whatsapp_sender(brand_id=broadcast.brand_id)
        except BroadcastRefused:
            # No account of the brand's own (disconnected since it was planned): it waits, sends
            # nothing from anyone else's number.
            continue
        with provider_routed_for(livemode=broadcast.brand.livemode):
            _tier, limit = whatsapp.messaging_limit(sender=sender)
        # Each brand's number has its own tier: the pace's room is shared, the tier's is not.
        batch_room = room
        if limit is not None:
            batch_room = min(room, max(0, limit - tier_used_today(brand_id=broadcast.brand_id, now=now)))
        if batch_room <= 0:
            continue
        sent = _broadcast_batch(broadcast=broadcast, limit=batch_room, now=now)
        queued += sent
        room -= sent
    return queued


def _broadcast_batch(*, broadcast: Broadcast, limit: int, now) -> int:
    with transaction.atomic(durable=True):
        locked = Broadcast.objects.select_for_update().get(pk=broadcast.pk)
        if locked.status not in (BroadcastStatus.SCHEDULED, BroadcastStatus.SENDING):
            return 0
        batch = list(
            BroadcastRecipient.objects.select_for_update(skip_locked=True)
            .filter(broadcast=locked, status=RecipientStatus.PLANNED)
            .order_by("pk")[:limit]
        )
        going = []
        for recipient in batch:
            if consent_in_force(participant_id=recipient.participant_id, channel=ConsentChannel.WHATSAPP):
                going.append(recipient)
            else:
                recipient.status, recipient.skip_reason = RecipientStatus.SKIPPED, "opted_out"
                recipient.save(update_fields=["status", "skip_reason"])
        keys = audience_messages_notify(
            rows=[(r.participant_id, r.brand_id, f"broadcast:{locked.pk}:{r.participant_id}") for r in going]
        )
        for recipient in going:
            recipient.notification_id = keys.get(f"broadcast:{locked.pk}:{recipient.participant_id}")
            recipient.status = RecipientStatus.QUEUED
            recipient.sent_at = now
            recipient.save(update_fields=["notification", "status", "sent_at"])
        more = BroadcastRecipient.objects.filter(broadcast=locked, status=RecipientStatus.PLANNED).exists()
        locked.status = BroadcastStatus.SENDING if more else BroadcastStatus.DONE
        locked.done_at = None if more else now
        locked.save(update_fields=["status", "done_at"])
    return len(going)


def whatsapp_status_record(*, update: StatusUpdate) -> str:
    """A status of a template we sent: the person's row moves forward only (sent < delivered < read;
    failed is final), a billable delivery counts its cost. "" when the message is not a send's."""
    recipient_id = _recipient_for(update)
    if recipient_id is None:
        return ""
    at = _status_time(update.timestamp)
    with transaction.atomic(durable=True):
        recipient = BroadcastRecipient.objects.select_for_update().get(pk=recipient_id)
        fields = []
        if not recipient.wamid:
            recipient.wamid = update.message_id[:100]
            fields.append("wamid")
        if update.billable:
            recipient.billable = True
            fields.append("billable")
        if update.status in ("delivered", "read") and recipient.delivered_at is None:
            recipient.delivered_at = at
            fields.append("delivered_at")
        if update.status == "read" and recipient.read_at is None:
            recipient.read_at = at
            fields.append("read_at")
        if update.status == "failed":
            recipient.error_code = update.error_code
            fields.append("error_code")
        current = STATUS_RANK.get(recipient.status, 0)
        if recipient.status != RecipientStatus.FAILED and STATUS_RANK[update.status] > current:
            recipient.status = update.status
            fields.append("status")
        if fields:
            recipient.save(update_fields=fields)
    return f"broadcast_{update.status}"


def _recipient_for(update: StatusUpdate) -> int | None:
    notification_id = None
    if update.callback.startswith("notification:") and update.callback[13:].isdigit():
        notification_id = int(update.callback[13:])
    else:
        notification_id = (
            Notification.objects.filter(provider_message_id=update.message_id, kind="broadcast")
            .values_list("pk", flat=True)
            .first()
        )
    if notification_id is None:
        return None
    return (
        BroadcastRecipient.objects.filter(notification_id=notification_id)
        .values_list("pk", flat=True)
        .first()
    )


def _status_time(timestamp: str):
    try:
        return datetime.fromtimestamp(int(timestamp), tz=UTC)
    except (TypeError, ValueError, OverflowError):
        return timezone.now()
