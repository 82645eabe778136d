"""CRM sync: the brand connects its Klaviyo, HubSpot or Mailchimp account with its API key (its owner, with a
second factor and the password asked again, as for shops and API keys); its consented audience is
pushed with each consent's time and source, and unsubscribes made in the CRM come back as
withdrawals. A failure is retried on a backoff and shown on the page; a refused key waits for a
person. Mailchimp signs no webhook: its address carries a secret, and each unsubscribe it posts is
confirmed by reading the member back."""

import hmac
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns.models import ConsentChannel
from joyback.modes import provider_routed_for
from payouts.models import CrmConnection
from payouts.models.audience import CrmKind
from payouts.providers import hubspot, klaviyo, mailchimp
from verification.models import ConsentSource, Identity, Provider
from verification.selectors import consents_current
from verification.services.consent import consent_withdraw

# Each CRM's adapter, and how its keys begin (Klaviyo's private keys, HubSpot's private app tokens;
# a Mailchimp key is 32 hex digits and its datacenter, checked by the adapter).
ADAPTERS = {CrmKind.KLAVIYO: klaviyo, CrmKind.HUBSPOT: hubspot, CrmKind.MAILCHIMP: mailchimp}
KEY_PREFIXES = {CrmKind.KLAVIYO: "pk_", CrmKind.HUBSPOT: "pat-", CrmKind.MAILCHIMP: ""}
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
    if kind == CrmKind.MAILCHIMP and not list_id.isalnum():
        raise CrmRefused(_("Give the id of your Mailchimp audience as the list id."))
    try:
        with provider_routed_for(livemode=brand.livemode):
            if kind == CrmKind.MAILCHIMP:
                mailchimp.key_check(api_key=api_key, list_id=list_id)
            else:
                ADAPTERS[kind].key_check(api_key=api_key)
    except klaviyo.KlaviyoError as error:
        raise CrmRefused(_("%(crm)s refused the key: %(error)s") % {**names, "error": error}) from None
    now = timezone.now()
    with transaction.atomic(durable=True):
        CrmConnection.objects.filter(brand=brand, kind=kind, disconnected_at__isnull=True).update(
            disconnected_at=now
        )
        secret = secrets.token_urlsafe(32) if kind == CrmKind.MAILCHIMP else ""
        connection = CrmConnection.objects.create(
            brand=brand, kind=kind, api_key=api_key, list_id=list_id, connected_by=user, connected_at=now,
            next_attempt_at=now, webhook_secret=secret,
        )  # fmt: skip
    if kind == CrmKind.MAILCHIMP:
        _mailchimp_webhook_register(connection)
    return connection


def crm_webhook_url(connection: CrmConnection) -> str:
    return settings.SITE_URL.rstrip("/") + reverse(
        "payouts:mailchimp_webhook", args=[connection.pk, connection.webhook_secret]
    )


def _mailchimp_webhook_register(connection: CrmConnection) -> None:
    """Mailchimp posts unsubscribes at once; without its webhook the periodic read still finds them,
    so a refusal is shown, not fatal."""
    try:
        with provider_routed_for(livemode=connection.brand.livemode):
            mailchimp.webhook_create(
                api_key=connection.api_key, list_id=connection.list_id, url=crm_webhook_url(connection)
            )
    except mailchimp.CrmError as error:
        CrmConnection.objects.filter(pk=connection.pk).update(last_error=f"webhook: {error}"[:300])


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
    if connection.kind == CrmKind.MAILCHIMP:
        return mailchimp.unsubscribed_since(
            api_key=connection.api_key, list_id=connection.list_id, since=connection.pulled_until
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


def mailchimp_webhook_receive(*, connection_id: int, secret: str, data: dict) -> str:
    """An unsubscribe (or a clean: the address bounces) Mailchimp posted: the secret in the address
    must be the connection's, the audience its own, and Mailchimp, asked again, must not say the
    member is subscribed. A member it cannot be asked about is taken as stopped (fail closed: a
    message too few, never one too many). The outcome."""
    connection = (
        CrmConnection.objects.select_related("brand")
        .filter(pk=connection_id, kind=CrmKind.MAILCHIMP, disconnected_at__isnull=True)
        .first()
    )
    if connection is None or not hmac.compare_digest(connection.webhook_secret.encode(), secret.encode()):
        return "unknown"
    if data.get("type") not in ("unsubscribe", "cleaned"):
        return "ignored"
    email = str(data.get("data[email]") or "").strip().lower()
    if not email or data.get("data[list_id]") != connection.list_id:
        return "ignored"
    try:
        with provider_routed_for(livemode=connection.brand.livemode):
            status = mailchimp.member_status(
                api_key=connection.api_key, list_id=connection.list_id, email=email
            )
    except mailchimp.CrmError:
        status = "unknown"
    if status == "subscribed":
        return "still_subscribed"
    ended = _unsubscribes_apply(connection=connection, unsubscribed=[("email", email)], at=timezone.now())
    if ended:
        CrmConnection.objects.filter(pk=connection.pk).update(
            pulled_unsubscribes=connection.pulled_unsubscribes + ended
        )
    return "withdrawn" if ended else "nothing_to_end"
