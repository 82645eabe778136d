"""Changing bank details that are on file: only on proof of the person.

A status link, a shop's claim link or a forwarded mail shows the person's status; it is not proof
of the person, since links travel (a shared screen, a forwarded mail, a browser's history). Once
bank details are on file, a change to the name, the account or the contact needs a one-time code
sent to the contact on file (email, else WhatsApp); where there is none, the person is sent to
the brand's support, whose staff check who they are. Each change is kept in an append-only, masked
trail (PayeeChange) and the old contact is told.

Payouts already made are not moved by a change: a payout row names the payee account it was made
to, and the bank is paid what the payout names, as a bank executes the order it was given. Only
money not yet in a payout, and a returned payout's re-payment (made afresh, through the payout
controls), go to the new details, and only once the change was proven. So a change can redirect
nothing already sent, and an unproven change redirects nothing at all.
"""

import logging
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone, translation
from django.utils.crypto import constant_time_compare, salted_hmac
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from joyback.queue import enqueue_on_commit
from payouts.models import PayeeAccount, PayeeChange, PayeeChangeCode, PayeeSubmission
from payouts.notifications import Message, Recipient, message_deliver, person_notify
from verification.models import Participant

logger = logging.getLogger(__name__)

CODE_LIFETIME = timedelta(minutes=10)
# A leaked link must become neither a way to flood the person's inbox nor to guess a code: every
# answer spends the code it was checked against, so this is also the guesses an hour.
CODES_PER_HOUR = 5

REFUSALS = {
    "no_contact": gettext_lazy(
        "We have no email address or WhatsApp number of yours to send a code to. Please write to the "
        "brand's support: a person there checks that it is you and changes your details."
    ),
    "too_many": gettext_lazy(
        "We have sent you several codes in the last hour. Please use the latest one, or try again in an hour."
    ),
    "wrong": gettext_lazy("That code is wrong or expired; we sent a new one to %(contact)s."),
    "wrong_too_many": gettext_lazy(
        "That code is wrong or expired. We have sent you several codes in the last hour; please try "
        "again in an hour."
    ),
    "no_code": gettext_lazy("Enter the code we sent you. No code yet? Ask for one above."),
}


class ChangeRefused(Exception):
    def __init__(self, code: str, *, contact: str = ""):
        super().__init__(code)
        self.code = code
        self.contact = contact

    @property
    def message(self) -> str:
        return str(REFUSALS[self.code]) % {"contact": self.contact}


def payee_details_on_file(*, participant: Participant | None = None, participant_id=None) -> bool:
    """Details were given before (stored, or still being stored): from now on only the person,
    proven by a code, changes them."""
    participant_id = participant.pk if participant is not None else participant_id
    if not participant_id:
        return False
    return (
        PayeeAccount.objects.filter(participant_id=participant_id).exists()
        or PayeeSubmission.objects.filter(participant_id=participant_id).exists()
    )


def payee_contact(*, participant: Participant) -> PayeeAccount | None:
    """The details whose contact receives the codes: the current ones, else the latest."""
    return PayeeAccount.objects.filter(participant=participant).order_by("replaced_at", "-pk").first()


def email_masked(email: str) -> str:
    name, _at, domain = email.partition("@")
    return f"{name[:1]}•••@{domain}"


def phone_masked(phone: str) -> str:
    return f"+•••{phone[-4:]}"


def contact_masked(payee: PayeeAccount | None) -> str:
    if payee is None:
        return ""
    if payee.email:
        return email_masked(payee.email)
    return phone_masked(payee.phone) if payee.phone else ""


def _code_hash(participant_id: int, code: str) -> str:
    value = f"{participant_id}:{code}"
    return salted_hmac("joyback.payee_change_code", value, algorithm="sha256").hexdigest()


def payee_change_code_send(*, participant: Participant, now=None) -> str:
    """A new code to the contact on file (any earlier one is spent); the masked contact it goes to.
    The code itself is never stored, queued or logged: it is sent by this process after commit."""
    payee = payee_contact(participant=participant)
    if payee is None or not (payee.email or payee.phone):
        raise ChangeRefused("no_contact")
    now = now or timezone.now()
    code = f"{secrets.randbelow(10**6):06d}"
    channel = "email" if payee.email else "whatsapp"
    with transaction.atomic(durable=True):
        Participant.objects.select_for_update().filter(pk=participant.pk).first()
        codes = PayeeChangeCode.objects.filter(participant=participant)
        if codes.filter(created_at__gt=now - timedelta(hours=1)).count() >= CODES_PER_HOUR:
            raise ChangeRefused("too_many")
        codes.filter(spent_at__isnull=True).update(spent_at=now)
        row = PayeeChangeCode.objects.create(
            participant=participant,
            brand_id=participant.brand_id,
            code_hash=_code_hash(participant.pk, code),
            channel=channel,
            sent_to=contact_masked(payee),
            created_at=now,
            expires_at=now + CODE_LIFETIME,
        )
        transaction.on_commit(lambda: _code_send_quietly(payee=payee, channel=channel, code=code))
    return row.sent_to


def _code_send_quietly(*, payee: PayeeAccount, channel: str, code: str) -> None:
    try:
        _code_send(payee=payee, channel=channel, code=code)
    except Exception:
        # Not retried: a code is worth its ten minutes; the person asks for another.
        logger.exception("payee change code for participant %s not sent", payee.participant_id)


def _code_send(*, payee: PayeeAccount, channel: str, code: str) -> None:
    """The one message to a person with no Notification row: the code must never be stored, and a
    lost one is not worth a retry (the person asks for another). It goes out the same way as the
    others (payouts.notifications.message_deliver)."""
    with translation.override(payee.language or settings.LANGUAGE_CODE):
        message = Message(
            _("Your JoyBack code: %(code)s") % {"code": code},
            _(
                "Your code to change your bank details is %(code)s. It is good for 10 minutes.\n\n"
                "If you did not ask for it, ignore this message: nothing changes without it, and "
                "never tell it to anyone.\n\nJoyBack"
            )
            % {"code": code},
            "payee_change_code",
            [code],
        )
        to = Recipient(payee.email or "", payee.phone or "", "", payee.country, payee.brand_id)
        message_deliver(to=to, channel=channel, message=message)


def payee_change_code_check(*, participant: Participant, code: str, now=None) -> str:
    """The proof ("email code" or "whatsapp code") when `code` is the latest one sent, unspent and
    fresh. The code is spent by this answer, right or wrong; a wrong one raises ChangeRefused and
    sends a new code (while the hour's codes last)."""
    now = now or timezone.now()
    code = "".join(code.split())
    if not code:
        raise ChangeRefused("no_code")
    with transaction.atomic(durable=True):
        Participant.objects.select_for_update().filter(pk=participant.pk).first()
        latest = (
            PayeeChangeCode.objects.filter(participant=participant, spent_at__isnull=True)
            .order_by("-created_at", "-pk")
            .first()
        )
        if latest is not None:
            PayeeChangeCode.objects.filter(pk=latest.pk).update(spent_at=now)
    if (
        latest is not None
        and latest.expires_at > now
        and constant_time_compare(latest.code_hash, _code_hash(participant.pk, code))
    ):
        return f"{latest.channel} code"
    try:
        contact = payee_change_code_send(participant=participant, now=now)
    except ChangeRefused as refused:
        raise ChangeRefused("wrong_too_many" if refused.code == "too_many" else refused.code) from None
    raise ChangeRefused("wrong", contact=contact)


def payee_change_record(*, previous: PayeeAccount, payee: PayeeAccount, proof: str, now) -> PayeeChange:
    """In the caller's transaction (the one that replaced `previous` by `payee`): the trail's row,
    and the old contact told once it commits."""
    changed = [
        name
        for name, before, after in (
            ("name", previous.holder_name, payee.holder_name),
            ("email", previous.email or "", payee.email or ""),
            ("phone", previous.phone or "", payee.phone or ""),
            ("account", previous.account_fingerprint, payee.account_fingerprint),
        )
        if before != after
    ]
    change = PayeeChange.objects.create(
        participant_id=payee.participant_id,
        brand_id=payee.brand_id,
        previous=previous,
        payee=payee,
        at=now,
        proof=proof or "none",
        changed=",".join(changed),
        account_before=previous.account_masked,
        account_after=payee.account_masked,
        contact_before=_contacts_masked(previous),
        contact_after=_contacts_masked(payee),
    )
    if previous.email or previous.phone:
        enqueue_on_commit("payouts.tasks.payee_change_notice_task", change.pk)
    return change


def _contacts_masked(payee: PayeeAccount) -> str:
    parts = []
    if payee.email:
        parts.append(email_masked(payee.email))
    if payee.phone:
        parts.append(phone_masked(payee.phone))
    return " ".join(parts)


def payee_change_notice_send(*, change_id: int) -> None:
    """Tell the old contact that the details changed, so a change they did not make is noticed:
    by mail, and by WhatsApp where they gave a number (a message to the person, once per change)."""
    change = PayeeChange.objects.select_related("previous").get(pk=change_id)
    person_notify(
        payee=change.previous,
        kind="details_changed",
        key=f"details_changed:{change.pk}",
        context={"change": change.pk},
        every_channel=True,
    )
