"""A person's data: a copy for them, and its erasure (GDPR articles 15, 17 and 20).

Asked for from the private status page and confirmed through a link sent to the email or WhatsApp
number on file, or done by staff in the admin. Erasure removes at once what nothing requires us to
keep (contacts, account names, tokens, addresses, browser hashes) and pseudonymises the accounts'
ids; the records bookkeeping and anti-money-laundering law require (the ledger, payouts with the
account they went to and the holder's name, claims and their compliance evidence) are kept for
PRIVACY_RETENTION_DAYS and then pseudonymised by the daily retention job. Tax details (payouts.tax)
are kept for the tax retention of the person's country after their last reported reward, and
erased at once when nothing of theirs was reported. Ledger entries carry no
personal data and are never changed; nor are the append-only, hash-chained compliance decisions,
whose evidence is a caption snapshot (no name or contact).
"""

import json
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy

from compliance.services import participant_cases_erase
from payouts.models import Notification, PayeeAccount, PayeeSubmission, Payout, PrivacyRequest, VopCheck
from payouts.models.payouts import OPEN_STATUSES
from payouts.models.privacy import PrivacyKind
from payouts.models.tax import TaxProfile
from payouts.notifications import person_notify
from payouts.tax.selectors import tax_identity_read
from payouts.tax.services import tax_profiles_retain, tax_profiles_retention_enforce
from verification.models import Participant, ProviderEvent
from verification.services.participants import (
    participant_evidence_erase,
    participant_export_claims,
    participant_identities_erase,
)

ERASED = "erased"
REFUSALS = {
    "no_contact": gettext_lazy(
        "We have no email address or WhatsApp number of yours to confirm this with. Please write to "
        "the brand's support instead."
    ),
    "payout_open": gettext_lazy("A payout to you is still on its way. Please ask again once it has arrived."),
    "expired": gettext_lazy("This confirmation link has expired. Please ask again from your status page."),
    "erased": gettext_lazy("Your data has already been erased."),
    "too_many": gettext_lazy(
        "We have sent you several confirmation links already. Please use the latest one."
    ),
}
# A leaked status link must not become a way to flood the person's inbox.
REQUESTS_PER_HOUR = 3


class PrivacyRefused(Exception):
    def __init__(self, code: str):
        super().__init__(code)
        self.code = code

    @property
    def message(self) -> str:
        return str(REFUSALS[self.code])


def _contact(participant: Participant) -> PayeeAccount | None:
    return PayeeAccount.objects.filter(participant=participant).order_by("replaced_at", "-pk").first()


def _erased(participant: Participant) -> bool:
    return PrivacyRequest.objects.filter(
        participant=participant, kind=PrivacyKind.ERASE, done_at__isnull=False
    ).exists()


def privacy_request_start(*, participant: Participant, kind: str, confirm_url_for) -> PrivacyRequest:
    """A request from the status page: a confirmation link goes to the person's email (else their
    WhatsApp number) after commit. `confirm_url_for(token)` makes the link's absolute address."""
    if _erased(participant):
        raise PrivacyRefused("erased")
    payee = _contact(participant)
    if payee is None or not (payee.email or payee.phone):
        raise PrivacyRefused("no_contact")
    now = timezone.now()
    recent = PrivacyRequest.objects.filter(participant=participant, created_at__gte=now - timedelta(hours=1))
    if recent.count() >= REQUESTS_PER_HOUR:
        raise PrivacyRefused("too_many")
    with transaction.atomic(durable=True):
        request = PrivacyRequest.objects.create(
            participant=participant,
            brand_id=participant.brand_id,
            kind=PrivacyKind(kind),
            channel="email" if payee.email else "whatsapp",
            created_at=now,
            expires_at=now + timedelta(hours=24),
        )
        url = confirm_url_for(request.token)
        transaction.on_commit(lambda: privacy_confirmation_send(request_id=request.pk, url=url))
    return request


def privacy_confirmation_send(*, request_id: int, url: str) -> None:
    """The confirmation link, as a message to the person (payouts.notifications), by the channel
    the request chose."""
    request = PrivacyRequest.objects.select_related("participant").get(pk=request_id)
    payee = _contact(request.participant)
    with transaction.atomic():
        person_notify(
            payee=payee,
            kind=f"privacy_{request.kind}",
            key=f"privacy:{request.pk}",
            context={"url": url},
        )
        PrivacyRequest.objects.filter(pk=request_id).update(sent_at=timezone.now())


def privacy_request_get(*, token: str) -> PrivacyRequest | None:
    return PrivacyRequest.objects.select_related("participant").filter(token=token).first()


def privacy_request_confirm(*, request: PrivacyRequest) -> dict | None:
    """The person followed the link and confirmed: their data (export), or the erasure done."""
    if request.expires_at < timezone.now():
        raise PrivacyRefused("expired")
    PrivacyRequest.objects.filter(pk=request.pk, confirmed_at__isnull=True).update(
        confirmed_at=timezone.now()
    )
    if request.kind == PrivacyKind.EXPORT:
        return participant_export(participant=request.participant)
    participant_erase(participant=request.participant, request=request)
    return None


def participant_export(*, participant: Participant) -> dict:
    """Everything we hold about the person, readable (their own bank details in full)."""
    payees = PayeeAccount.objects.filter(participant=participant).order_by("pk")
    payouts = Payout.objects.filter(participant=participant).order_by("pk")
    return {
        "participant": {"id": participant.pk, "created_at": participant.created_at.isoformat()},
        "identities": [
            {
                "provider": i.provider,
                "id": i.subject,
                "name": i.display_name,
                "verified_at": i.verified_at.isoformat(),
            }
            for i in participant.identities.order_by("pk")
        ],
        "claims": participant_export_claims(participant=participant),
        "bank_details": [
            {
                "holder_name": p.holder_name,
                "holder_name_latin": p.holder_name_latin,
                "address": json.loads(p.address) if p.address else None,
                "email": p.email,
                "phone": p.phone,
                "account": p.account.details if p.account is not None else {ERASED: True},
                "rail": p.rail,
                "currency": p.currency,
                "consent_at": p.consent_at.isoformat(),
                "consent_version": p.consent_version,
                "created_at": p.created_at.isoformat(),
                "replaced_at": p.replaced_at.isoformat() if p.replaced_at else None,
            }
            for p in payees
        ],
        "payouts": [
            {
                "amount_minor": p.amount,
                "currency": p.currency,
                "status": p.status,
                "end_to_end_id": p.end_to_end_id,
                "created_at": p.created_at.isoformat(),
                "settled_at": p.settled_at.isoformat() if p.settled_at else None,
            }
            for p in payouts
        ],
        "tax_details": [
            {
                "legal_name": identity.legal_name,
                "tin": identity.tin,
                "tin_kind": identity.tin_kind,
                "tin_country": identity.tin_country,
                "birth_date": identity.birth_date.isoformat() if identity.birth_date else None,
                "address": identity.address,
                "residence_country": identity.residence_country,
                "us_status": identity.us_status,
                "certified_at": identity.certified_at.isoformat(),
                "retained_until": p.retain_until.isoformat() if p.retain_until else None,
            }
            for p in TaxProfile.objects.filter(participant=participant).order_by("pk")
            for identity in [tax_identity_read(profile=p)]
        ],
        "messages": list(
            Notification.objects.filter(participant=participant).values("kind", "channel", "sent_at")
        ),
    }


def participant_erase(
    *, participant: Participant, request: PrivacyRequest | None = None, staff=None
) -> PrivacyRequest:
    """Erase what may go at once; keep what the law requires until the retention job. Refused
    while a payout is on its way (its bank may still need the details). Safe to repeat."""
    now = timezone.now()
    with transaction.atomic(durable=True):
        Participant.objects.select_for_update().filter(pk=participant.pk).first()
        if Payout.objects.filter(participant=participant, status__in=OPEN_STATUSES).exists():
            raise PrivacyRefused("payout_open")
        if request is None:
            request = PrivacyRequest.objects.create(
                participant=participant,
                brand_id=participant.brand_id,
                kind=PrivacyKind.ERASE,
                channel="admin",
                requested_by=staff,
                created_at=now,
                expires_at=now,
                confirmed_at=now,
            )
        for payee in PayeeAccount.objects.filter(participant=participant):
            # No payout goes to erased details again; holder and account stay with the payouts.
            payee.email = None
            payee.phone = None
            payee.address = ""  # what the bank needed to send; nothing is sent to these details again
            payee.replaced_at = payee.replaced_at or now
            payee.save(update_fields=["email", "phone", "address", "replaced_at"])
        PayeeAccount.objects.filter(participant=participant).update(
            email_fingerprint="", phone_fingerprint=""
        )
        PayeeSubmission.objects.filter(participant=participant).update(details="")
        VopCheck.objects.filter(payee__participant=participant).update(bank_name_returned=None)
        participant_identities_erase(participant=participant)
        # A confirmation mail of the email opt-in holds the address typed into the form: one not
        # sent yet is not sent, one sent forgets it.
        optin_mails = Notification.objects.filter(participant=participant, kind="email_optin")
        optin_mails.filter(sent_at__isnull=True).delete()
        optin_mails.update(context={})
        # Tax records stay for their own legal retention, or go now if nothing was reported.
        tax_profiles_retain(participant=participant, now=now)
        PrivacyRequest.objects.filter(pk=request.pk).update(done_at=now)
    request.refresh_from_db()
    return request


def privacy_retention_enforce(*, now=None, batch: int = 200) -> int:
    """Daily (django-q2 schedule): for erasures older than PRIVACY_RETENTION_DAYS, the kept records
    lose their last personal data (holder names, bank accounts, claim evidence); the bank's own
    masked account number stays on the payout. And processed provider webhook payloads, which hold
    phone numbers and names, are emptied after the same period. Returns the people done."""
    now = now or timezone.now()
    cutoff = now - timedelta(days=settings.PRIVACY_RETENTION_DAYS)
    due = PrivacyRequest.objects.filter(
        kind=PrivacyKind.ERASE, done_at__lte=cutoff, retention_done_at__isnull=True
    ).select_related("participant")
    done = 0
    for request in due[:batch]:
        with transaction.atomic():
            for payee in PayeeAccount.objects.filter(participant=request.participant):
                payee.holder_name = ERASED
                payee.holder_name_latin = ""
                payee.account = None
                payee.save(update_fields=["holder_name", "holder_name_latin", "account"])
            PayeeAccount.objects.filter(participant=request.participant).update(account_fingerprint="")
            participant_evidence_erase(participant=request.participant)
            participant_cases_erase(participant_id=request.participant_id)
            PrivacyRequest.objects.filter(pk=request.pk).update(retention_done_at=now)
        done += 1
    tax_profiles_retention_enforce(now=now, batch=batch)
    old = ProviderEvent.objects.filter(processed_at__lte=cutoff).exclude(payload={})
    while ids := list(old.values_list("pk", flat=True)[:1000]):
        ProviderEvent.objects.filter(pk__in=ids).update(payload={})
    return done
