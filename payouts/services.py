import json

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import Q
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from joyback.crypto import fingerprint
from payouts.models import PayeeAccount
from payouts.rails import BankAccount
from verification.models import Participant
from verification.services import participants_flag


def payee_account_save(
    *,
    participant: Participant,
    name: str,
    email: str,
    phone: str,
    bank_account: BankAccount,
    currency: str,
    consent_version: str,
) -> PayeeAccount:
    """The participant's bank details from now on; an earlier account is kept, marked replaced."""
    with transaction.atomic(durable=True):
        # Two submissions of one person (a double click, two tabs) take turns here instead of
        # both replacing the current account and colliding on the one-current-payee constraint.
        Participant.objects.select_for_update().filter(pk=participant.pk).first()
        now = timezone.now()
        PayeeAccount.objects.filter(participant=participant, replaced_at__isnull=True).update(replaced_at=now)
        payee = PayeeAccount.objects.create(
            participant=participant,
            holder_name=name,
            email=email or None,
            phone=phone or None,
            rail=bank_account.rail,
            currency=currency,
            country=bank_account.country,
            account=json.dumps(bank_account.details),
            account_masked=bank_account.masked,
            account_fingerprint=fingerprint(bank_account.identity),
            email_fingerprint=fingerprint(email.strip().lower()) if email else "",
            phone_fingerprint=fingerprint(phone) if phone else "",
            bank_name=bank_account.bank_name,
            consent_at=now,
            consent_version=consent_version,
        )
        _shared_details_flag(payee)
    return payee


SHARED_DETAILS = [
    ("account_fingerprint", "payee_iban_shared", "the same bank account as participant #{other}"),
    ("email_fingerprint", "payee_email_shared", "the same email as participant #{other}"),
    ("phone_fingerprint", "payee_phone_shared", "the same phone number as participant #{other}"),
]


def _shared_details_flag(payee: PayeeAccount) -> None:
    """One bank account, email or phone behind several identities is the classic farm: every
    participant involved goes back to review before anything is paid out."""
    matches = Q()
    for field, _code, _detail in SHARED_DETAILS:
        if getattr(payee, field):
            matches |= Q(**{field: getattr(payee, field)})
    others = (
        PayeeAccount.objects.filter(matches, participant__brand_id=payee.participant.brand_id)
        .exclude(participant=payee.participant)
        .values_list("participant_id", *(field for field, _code, _detail in SHARED_DETAILS))
    )
    flags = []
    for other, *values in others:
        for (field, code, detail), value in zip(SHARED_DETAILS, values, strict=True):
            if value and value == getattr(payee, field):
                flags.append((payee.participant_id, code, detail.format(other=other)))
                flags.append((other, code, detail.format(other=payee.participant_id)))
    if flags:
        participants_flag(flags=flags)


def status_link_send(
    *, payee: PayeeAccount, status_url: str, campaign_name: str, language: str = "en"
) -> None:
    """Mail the private status link, in the person's language; run by the task queue, since mail
    is slow I/O that must not hold up the person's request."""
    if not payee.email:
        return
    with translation.override(language):
        _status_mail(payee=payee, status_url=status_url, campaign_name=campaign_name)


def _status_mail(*, payee: PayeeAccount, status_url: str, campaign_name: str) -> None:
    send_mail(
        subject=_("Your %(campaign)s reward") % {"campaign": campaign_name},
        message=_(
            "Hello %(name)s,\n\nthank you for taking part in %(campaign)s. Follow your reward and its "
            "payout here (keep this link private):\n\n%(url)s\n\nJoyBack"
        )
        % {"name": payee.holder_name, "campaign": campaign_name, "url": status_url},
        from_email=settings.DEFAULT_FROM_EMAIL,
        recipient_list=[payee.email],
    )
