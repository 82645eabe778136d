import json

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from joyback.crypto import fingerprint
from payouts.models import PayeeAccount
from payouts.rails import BankAccount
from verification.models import Participant


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
        now = timezone.now()
        PayeeAccount.objects.filter(participant=participant, replaced_at__isnull=True).update(replaced_at=now)
        return PayeeAccount.objects.create(
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
            bank_name=bank_account.bank_name,
            consent_at=now,
            consent_version=consent_version,
        )


def status_link_send(*, payee: PayeeAccount, status_url: str, campaign_name: str) -> None:
    """Mail the private status link; called after commit, since mail is slow I/O."""
    if not payee.email:
        return
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
