"""Telling the person about their payout: one Notification row per payout, kind and channel (the
unique key makes a replayed transition harmless), written with the transition and sent after commit."""

import logging
from functools import partial

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from joyback.money import money_format
from payouts.links import status_page_path
from payouts.models import Notification, Payout
from payouts.selectors import participant_latest_campaign
from verification.models import Participant
from verification.providers import whatsapp

logger = logging.getLogger(__name__)


REASON_TEXTS = {
    "AC01": gettext_lazy("the account number is not valid"),
    "AC04": gettext_lazy("the account is closed"),
    "AC06": gettext_lazy("the account is blocked"),
    "AG01": gettext_lazy("the bank does not allow this kind of payment to the account"),
    "MD07": gettext_lazy("the bank reports that the account holder has died"),
    "BE04": gettext_lazy("the bank needs the account holder's address"),
    "AM04": gettext_lazy("a problem on our side, which we are fixing"),
    "AM05": gettext_lazy("the bank saw it as a duplicate"),
    "AB05": gettext_lazy("the receiving bank did not answer in time"),
    "MS03": gettext_lazy("the bank gave no reason"),
}


def reason_text(code: str) -> str:
    return str(REASON_TEXTS.get(code, REASON_TEXTS["MS03"]))


def payout_notify(payout: Payout, *, kind: str) -> None:
    payee = payout.payee
    channels = [c for c, present in (("email", payee.email), ("whatsapp", payee.phone)) if present]
    for channel in channels:
        notification, created = Notification.objects.get_or_create(
            key=f"{payout.pk}:{kind}:{channel}", defaults={"payout": payout, "kind": kind, "channel": channel}
        )
        if created:
            # Sent by this process once the transition commits: a task of its own per message
            # would cost the worker more than the payout. A crash or a failed send leaves the row
            # unsent, and the standing sweep sends it.
            transaction.on_commit(partial(notification_send_quietly, notification.pk))


def notification_send_quietly(notification_id: int) -> None:
    try:
        notification_send(notification_id=notification_id)
    except Exception:
        logger.exception("notification %s not sent; the sweep tries again", notification_id)


def _status_url(participant: Participant) -> str:
    campaign = participant_latest_campaign(participant=participant)
    if campaign is None:
        return settings.SITE_URL
    return settings.SITE_URL + status_page_path(slug=campaign.slug, token=participant.token)


def notification_message(payout: Payout, kind: str) -> tuple[str, str, list[str]]:
    """Subject, body and the WhatsApp template's parameters, in the current language."""
    amount = money_format(payout.amount, payout.currency, translation.get_language() or "en")
    account = payout.payee.account_masked
    if kind == "settled":
        return (
            _("Your reward of %(amount)s is paid") % {"amount": amount},
            _("%(amount)s is on its way to your account %(account)s and should be there now.")
            % {"amount": amount, "account": account},
            [amount, account],
        )
    reason = reason_text(payout.reason_code)
    if kind == "fix_details":
        url = _status_url(payout.participant)
        return (
            _("Please check your bank details"),
            _(
                "We could not pay %(amount)s to %(account)s: %(reason)s. Please enter your bank details "
                "again and we will pay you at once: %(url)s"
            )
            % {"amount": amount, "account": account, "reason": reason, "url": url},
            [amount, account, reason, url],
        )
    return (
        _("Your payout is delayed"),
        _("Your payout of %(amount)s is delayed: %(reason)s. We will send it again; nothing to do for you.")
        % {"amount": amount, "reason": reason},
        [amount, reason],
    )


def notification_send(*, notification_id: int) -> bool:
    """Send one notification, once: the row is claimed before the message goes."""
    claimed = Notification.objects.filter(pk=notification_id, sent_at__isnull=True).update(
        sent_at=timezone.now()
    )
    if not claimed:
        return False
    notification = Notification.objects.select_related("payout__payee", "payout__participant").get(
        pk=notification_id
    )
    payout = notification.payout
    try:
        with translation.override(payout.payee.language or settings.LANGUAGE_CODE):
            subject, body, parameters = notification_message(payout, notification.kind)
            if notification.channel == "email":
                send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [payout.payee.email])
            else:
                message_id = whatsapp.template_send(
                    to=payout.payee.phone,
                    template=f"payout_{notification.kind}",
                    language=translation.get_language() or "en",
                    parameters=parameters,
                )
                Notification.objects.filter(pk=notification_id).update(provider_message_id=message_id)
    except Exception:
        # Unclaim, so the retry sends it; the error goes to the task log.
        Notification.objects.filter(pk=notification_id).update(sent_at=None)
        raise
    return True
