"""CRM sync: the brand connects its Klaviyo account with a private API key (its owner, with a
second factor and the password asked again, as for shops and API keys); its consented audience is
pushed with each consent's time and source, and unsubscribes made in the CRM come back as
withdrawals. A failure is retried on a backoff and shown on the page; a refused key waits for a
person."""

from datetime import timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns.models import ConsentChannel
from joyback.modes import provider_routed_for
from payouts.models import CrmConnection
from payouts.models.audience import CrmKind
from payouts.providers import hubspot, klaviyo
from verification.models import ConsentSource, Identity, Provider
from verification.selectors import consents_current
from verification.services.consent import consent_withdraw

# Each CRM's adapter, and how its keys begin (Klaviyo's private keys, HubSpot's private app tokens).
ADAPTERS = {CrmKind.KLAVIYO: klaviyo, CrmKind.HUBSPOT: hubspot}
KEY_PREFIXES = {CrmKind.KLAVIYO: "pk_", CrmKind.HUBSPOT: "pat-"}
SYNC_EVERY = timedelta(minutes=15)
SYNC_ATTEMPTS = 6


class CrmRefused(Exception):
    """A connection that cannot be made; the message is for the brand's owner."""


def crm_backoff(attempts: int) -> timedelta:
    """2, 4, 8, 16, 32 minutes: a CRM back within the hour loses nothing."""
    return timedelta(minutes=2 ** max(attempts, 1))


def crm_connect(*, brand, user, kind: str, api_key: str, list_id: str = "") -> CrmConnection:
    """The brand's CRM account, once the CRM accepts the key; a connection of the same kind before
    it is ended."""
    api_key, list_id = api_key.strip(), list_id.strip()
    if kind not in CrmKind.values:
        raise CrmRefused(_("Choose a CRM."))
    names = {"crm": CrmKind(kind).label, "prefix": KEY_PREFIXES[kind]}
    if not api_key.startswith(KEY_PREFIXES[kind]) or len(api_key) > 200:
        raise CrmRefused(_("Paste a %(crm)s private key: it starts with %(prefix)s.") % names)
    if len(list_id) > 64:
        raise CrmRefused(_("The list id is longer than Klaviyo's."))
    if kind == CrmKind.HUBSPOT and not list_id.isdigit():
        raise CrmRefused(_("Give the id of your HubSpot subscription type (a number) as the list id."))
    try:
        with provider_routed_for(livemode=brand.livemode):
            ADAPTERS[kind].key_check(api_key=api_key)
    except klaviyo.KlaviyoError as error:
        raise CrmRefused(_("%(crm)s refused the key: %(error)s") % {**names, "error": error}) from None
    now = timezone.now()
    with transaction.atomic(durable=True):
        CrmConnection.objects.filter(brand=brand, kind=kind, disconnected_at__isnull=True).update(
            disconnected_at=now
        )
        return CrmConnection.objects.create(
            brand=brand, kind=kind, api_key=api_key, list_id=list_id, connected_by=user, connected_at=now,
            next_attempt_at=now,
        )  # fmt: skip


def crm_disconnect(*, connection: CrmConnection) -> None:
    CrmConnection.objects.filter(pk=connection.pk, disconnected_at__isnull=True).update(
        disconnected_at=timezone.now()
    )


def _subscribers(brand, *, since) -> list[klaviyo.Subscriber]:
    """The people in force whose consent is newer than the last push: a person who unsubscribed in
    the CRM is never subscribed there again by a push of an old consent (Klaviyo's bulk subscribe
    lifts an unsubscribe)."""
    rows = consents_current(brand=brand).select_related("identity", "campaign").order_by("pk")
    if since is not None:
        rows = rows.filter(at__gt=since)
    found = []
    for row in rows:
        subject = row.identity.subject
        contact = "+" + subject if row.channel == ConsentChannel.WHATSAPP else subject
        source = f"JoyBack: {row.campaign.name}" if row.campaign else "JoyBack"
        found.append(
            klaviyo.Subscriber(channel=row.channel, contact=contact, consented_at=row.at, source=source)
        )
    return found


def crm_sync(*, connection_id: int) -> str:
    """Pull the unsubscribes made in the CRM since the last pull (each a withdrawal here), then push
    the consents given since the last push; the outcome, kept on the connection for the page."""
    connection = CrmConnection.objects.select_related("brand").get(pk=connection_id)
    if connection.disconnected_at is not None:
        return "disconnected"
    started = timezone.now()
    try:
        with provider_routed_for(livemode=connection.brand.livemode):
            unsubscribed = _unsubscribed(connection)
            pulled = _unsubscribes_apply(connection=connection, unsubscribed=unsubscribed, at=started)
            pushed = ADAPTERS[connection.kind].subscribers_push(
                api_key=connection.api_key,
                subscribers=_subscribers(connection.brand, since=connection.synced_at),
                list_id=connection.list_id,
            )
    except klaviyo.KlaviyoError as error:
        attempts = connection.attempts + 1
        retry = error.retry and attempts < SYNC_ATTEMPTS
        wait = timedelta(seconds=error.after) if error.after else crm_backoff(attempts)
        CrmConnection.objects.filter(pk=connection.pk).update(
            last_error=str(error)[:300], attempts=attempts, next_attempt_at=started + wait if retry else None
        )
        return "retry" if retry else "failed"
    CrmConnection.objects.filter(pk=connection.pk).update(
        synced_at=started,
        pushed=connection.pushed + pushed,
        pulled_unsubscribes=connection.pulled_unsubscribes + pulled,
        pulled_until=started,
        last_error="",
        attempts=0,
        next_attempt_at=started + SYNC_EVERY,
    )
    return "synced"


def _unsubscribed(connection) -> list[tuple[str, str]]:
    """Klaviyo lists the profiles changed since the last pull; HubSpot is asked about the people
    in force."""
    if connection.kind == CrmKind.HUBSPOT:
        contacts = [(s.channel, s.contact) for s in _subscribers(connection.brand, since=None)]
        return hubspot.unsubscribed_of(
            api_key=connection.api_key, contacts=contacts, list_id=connection.list_id
        )
    return klaviyo.unsubscribed_since(api_key=connection.api_key, since=connection.pulled_until)


def _unsubscribes_apply(*, connection, unsubscribed: list[tuple[str, str]], at) -> int:
    ended = 0
    for channel, contact in unsubscribed:
        provider = Provider.WHATSAPP if channel == "whatsapp" else Provider.EMAIL
        subject = contact.lstrip("+") if channel == "whatsapp" else contact.lower()
        for participant_id in Identity.objects.filter(
            brand=connection.brand, provider=provider, subject=subject
        ).values_list("participant_id", flat=True):
            if consent_withdraw(
                participant_id=participant_id,
                channel=channel,
                source=ConsentSource.CRM,
                proof=f"{connection.kind}:{connection.pk}:{at.isoformat()}",
            ):
                ended += 1
    return ended


def crm_syncs_due(*, now=None) -> int:
    """Every connection whose next sync (or retry) is due; how many ran."""
    now = now or timezone.now()
    due = CrmConnection.objects.filter(disconnected_at__isnull=True, next_attempt_at__lte=now).values_list(
        "pk", flat=True
    )
    return sum(1 for pk in list(due) if crm_sync(connection_id=pk))
