"""Telling the person about their payout: one Notification row per payout, kind and channel (the
unique key makes a replayed transition harmless), written with the transition and sent after commit."""

import logging
from functools import partial

from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from joyback.modes import brand_livemode
from joyback.modes import provider_routed_for as routed_for
from joyback.money import money_format
from payouts import sql
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
    "NAME": gettext_lazy("the bank needs your name as it writes it, in Latin letters"),
    "AM04": gettext_lazy("a problem on our side, which we are fixing"),
    "AM05": gettext_lazy("the bank saw it as a duplicate"),
    "AB05": gettext_lazy("the receiving bank did not answer in time"),
    "MS03": gettext_lazy("the bank gave no reason"),
}


def reason_text(code: str) -> str:
    return str(REASON_TEXTS.get(code, REASON_TEXTS["MS03"]))


def payouts_notify(*, payouts: list[Payout], kind: str) -> None:
    """Tell each person about their payout: one Notification row per payout, kind and channel,
    written in the caller's transaction in one statement (the unique key makes a replayed
    transition harmless: a row already there is not sent again), sent by this process once the
    transaction commits. A task of its own per message would cost the worker more than the payout;
    a crash or a failed send leaves the row unsent, and the standing sweep sends it."""
    rows = [
        (payout.pk, payout.brand_id, channel, f"{payout.pk}:{kind}:{channel}")
        for payout in payouts
        for channel, present in (("email", payout.payee.email), ("whatsapp", payout.payee.phone))
        if present
    ]
    if not rows:
        return
    created = sql.notifications_insert(rows=rows, kind=kind, now=timezone.now())
    if created:
        by_id = {payout.pk: payout for payout in payouts}
        ids = [row_id for row_id, _payout_id, _channel in created]
        transaction.on_commit(partial(_notifications_send_quietly, ids, by_id))


def _notifications_send_quietly(ids: list[int], payouts: dict[int, Payout]) -> None:
    try:
        notifications_send(ids=ids, payouts=payouts)
    except Exception:
        logger.exception("payout notifications %s not all sent; the sweep tries again", ids)


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


def notifications_send(*, ids: list[int], payouts: dict[int, Payout] | None = None) -> int:
    """Send notifications, each once: claimed in one statement before any message goes (what
    another process claimed is skipped), the mails over one connection, WhatsApp messages one by
    one. `payouts` by id, when the caller holds them (else read in one query). What fails is
    unclaimed for the sweep, and the first failure raised once the others are sent; how many went."""
    claimed = sql.notifications_claim(ids=ids, now=timezone.now())
    if not claimed:
        return 0
    payouts = dict(payouts or {})
    missing = {payout_id for _id, payout_id, _kind, _channel in claimed} - payouts.keys()
    if missing:
        payouts |= Payout.objects.select_related("payee", "participant").in_bulk(missing)
    mails, mail_ids, failures, sent = [], [], [], 0
    for row_id, payout_id, kind, channel in claimed:
        payout = payouts[payout_id]
        try:
            with translation.override(payout.payee.language or settings.LANGUAGE_CODE):
                subject, body, parameters = notification_message(payout, kind)
                if channel == "email":
                    mails.append(
                        EmailMessage(subject, body, settings.DEFAULT_FROM_EMAIL, [payout.payee.email])
                    )
                    mail_ids.append(row_id)
                    continue
                with routed_for(livemode=brand_livemode(payout.brand_id)):
                    message_id = whatsapp.template_send(
                        to=payout.payee.phone,
                        template=f"payout_{kind}",
                        language=translation.get_language() or "en",
                        parameters=parameters,
                    )
            Notification.objects.filter(pk=row_id).update(provider_message_id=message_id)
            sent += 1
        except Exception as error:
            Notification.objects.filter(pk=row_id).update(sent_at=None)  # the sweep's to send
            failures.append(error)
    if mails:
        try:
            sent += get_connection().send_messages(mails) or 0
        except Exception as error:
            Notification.objects.filter(pk__in=mail_ids).update(sent_at=None)
            failures.append(error)
    if failures:
        raise failures[0]
    return sent
