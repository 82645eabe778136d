"""Every message to a person goes through here: one Notification row per message and channel (the
unique key makes a replayed transition or a repeated task harmless), written in the caller's
transaction and sent after commit; what fails is tried again by the sweep on one retry policy
(NOTIFICATION_ATTEMPTS, notification_backoff). Each kind of message has one template in MESSAGES,
worded through the catalogues (en, de, es, zh-hans) in the person's language, with dates in their
time zone. The person's contact lives with their bank details (PayeeAccount), which is why this is
the payouts app's: an app to its left that has news for a person enqueues a payouts task by name."""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from zoneinfo import ZoneInfo

from babel.core import get_global
from babel.dates import format_date, format_datetime, format_time
from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from campaigns.models import ActionRule, Brand, Invitation, Membership
from campaigns.modes import live_brand_of
from campaigns.roles import EDIT_CAMPAIGNS, FUND, MANAGE_API, MANAGE_MEMBERS
from campaigns.services.team import invitation_message, invitation_refusal
from compliance.models import CaseStatus, ComplianceDecision, RemediationCase
from compliance.reasons import caption_reasons
from joyback.charts import date_locale
from joyback.ledger.models import AccountKind, Entry
from joyback.modes import brand_livemode
from joyback.modes import provider_routed_for as routed_for
from joyback.money import money_format
from payouts import sql
from payouts.funding.selectors import onboarding_problem_words
from payouts.links import status_page_path
from payouts.models import (
    BroadcastRecipient,
    Notification,
    PayeeAccount,
    PayeeChange,
    Payout,
    WhatsAppAccount,
)
from payouts.selectors import participant_latest_campaign
from verification.models import ActionClaim, Participant
from verification.providers import whatsapp
from verification.selectors import consent_in_force

logger = logging.getLogger(__name__)

# The one retry policy for messages to people: a failed send is tried again after
# notification_backoff(attempts so far), NOTIFICATION_ATTEMPTS times in all, then left for staff
# (the metrics count it, joyback_notifications_failed).
NOTIFICATION_ATTEMPTS = 6


def notification_backoff(attempts: int) -> timedelta:
    """1, 2, 4, 8, 16 minutes: a mail server or WhatsApp back within the half hour loses nothing."""
    return timedelta(minutes=2 ** max(attempts - 1, 0))


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


# Where a country spans several zones, the one most of its people live in (babel lists them A-Z).
_MAIN_ZONES = {
    "ES": "Europe/Madrid",
    "PT": "Europe/Lisbon",
    "US": "America/New_York",
    "CN": "Asia/Shanghai",
    "DE": "Europe/Berlin",
    "AU": "Australia/Sydney",
    "CA": "America/Toronto",
    "MX": "America/Mexico_City",
    "BR": "America/Sao_Paulo",
}


def person_time_zone(payee) -> ZoneInfo:
    """The person's time zone, from the country of their bank account (the only place they told
    us where they live), or a brand member's from the brand's; UTC when it cannot be told."""
    country = (getattr(payee, "country", "") or "").upper()
    zones = get_global("territory_zones").get(country) or []
    name = _MAIN_ZONES.get(country) or (zones[0] if len(zones) == 1 else "UTC")
    try:
        return ZoneInfo(name)
    except (KeyError, ValueError):
        return ZoneInfo("UTC")


def when_text(moment: datetime, *, payee) -> str:
    """A moment as the person reads it: their language's date and time, in their zone, named."""
    zone = person_time_zone(payee)
    locale = date_locale()
    local = moment.astimezone(zone)
    return "{} {} ({})".format(
        format_date(local, "long", locale=locale),
        format_time(local, "short", tzinfo=zone, locale=locale),
        format_datetime(local, "zzzz", tzinfo=zone, locale=locale),
    )


# A brand member's language and zone, from the country the brand is registered in (a member keeps
# no language of their own).
_COUNTRY_LANGUAGES = {
    **dict.fromkeys(["DE", "AT", "CH", "LI", "LU"], "de"),
    **dict.fromkeys(["ES", "MX", "AR", "CO", "CL", "PE", "UY", "EC", "VE", "BO", "PY"], "es"),
    **dict.fromkeys(["CN", "SG"], "zh-hans"),
}


@dataclass(frozen=True)
class Recipient:
    email: str
    phone: str
    language: str
    country: str
    brand_id: int


def _recipient(note: Notification) -> Recipient:
    if note.kind == "invitation":  # someone with no account yet: the invited address
        invitation = Invitation.objects.select_related("brand").get(pk=note.context["invitation"])
        country = invitation.brand.country.upper()
        language = note.context.get("language") or _COUNTRY_LANGUAGES.get(country, settings.LANGUAGE_CODE)
        return Recipient(invitation.email, "", language, country, invitation.brand_id)
    if note.kind in CONSENTED_KINDS:
        # A brand's message to its audience goes to the number the person consented with.
        # The template's own language is Meta's code on the message (Message.language).
        sending = _broadcast_recipient(note)
        return Recipient("", sending.identity.subject, settings.LANGUAGE_CODE, sending.country, note.brand_id)
    if note.kind == "email_optin":  # an address not yet confirmed: the one the form gave
        return Recipient(note.context["email"], "", note.context["language"], "", note.brand_id)
    if note.user_id is not None:
        country = note.brand.country.upper()
        language = _COUNTRY_LANGUAGES.get(country, settings.LANGUAGE_CODE)
        return Recipient(note.user.email, "", language, country, note.brand_id)
    payee = note.payee
    return Recipient(
        payee.email or "",
        payee.phone or "",
        payee.language or settings.LANGUAGE_CODE,
        payee.country,
        payee.brand_id,
    )


@dataclass(frozen=True)
class Message:
    subject: str
    body: str
    whatsapp: str  # the approved WhatsApp template's name
    parameters: list  # its body's parameters, in order
    language: str = ""  # the template's language at Meta, when it is not the person's
    callback: str = ""  # comes back on the message's statuses (biz_opaque_callback_data)
    # The brand's own number and token for its marketing; None is the platform's own number (the
    # person's payout messages are the platform's).
    sender: whatsapp.Sender | None = None


class NoWhatsAppAccount(Exception):
    """A brand's message with no account of the brand's own to send it from."""


# Messages a brand sends its audience: each needs the person's consent in force at the moment it
# goes (a STOP between the plan and the send withholds it), not only when it was planned.
CONSENTED_KINDS = frozenset({"broadcast"})


def _broadcast_recipient(note: Notification) -> BroadcastRecipient:
    found = getattr(note, "_broadcast_recipient", None)
    if found is None:
        found = BroadcastRecipient.objects.select_related("broadcast", "identity").get(
            notification_id=note.pk
        )
        note._broadcast_recipient = found
    return found


def _broadcast(note: Notification) -> Message:
    sending = _broadcast_recipient(note)
    account = WhatsAppAccount.objects.filter(brand_id=note.brand_id, disconnected_at__isnull=True).first()
    if account is None:
        # Disconnected since it was queued: it fails (and is tried again), never sent from the
        # platform's number instead.
        raise NoWhatsAppAccount(f"brand {note.brand_id} has no WhatsApp Business Account connected")
    return Message(
        "",
        "",
        sending.broadcast.template_name,
        list(sending.broadcast.parameters),
        language=sending.language,
        callback=f"notification:{note.pk}",
        sender=whatsapp.Sender(account.phone_number_id, account.access_token),
    )


def _status_urls(participant_ids) -> dict[int, str]:
    """status_url for many people in one statement: a batch's receipts cost the same for ten
    people as for one (the campaign of each person's latest claim)."""
    latest = (
        ActionClaim.objects.filter(participant_id__in=set(participant_ids))
        .order_by("participant_id", "-pk")
        .distinct("participant_id")
        .values_list("participant_id", "campaign__slug", "participant__token")
    )
    return {pk: settings.SITE_URL + status_page_path(slug=slug, token=token) for pk, slug, token in latest}


def _note_status_url(note: Notification, participant: Participant) -> str:
    return getattr(note, "status_url", None) or status_url(participant)


def status_url(participant: Participant) -> str:
    campaign = participant_latest_campaign(participant=participant)
    if campaign is None:
        return settings.SITE_URL
    return settings.SITE_URL + status_page_path(slug=campaign.slug, token=participant.token)


# One template per kind of message, each a function of its Notification (its payee, payout and
# context read, the language and zone already the person's).


def _status_link(note: Notification) -> Message:
    names = {"name": note.payee.holder_name, "campaign": note.context["campaign"], "url": note.context["url"]}
    return Message(
        _("Your %(campaign)s reward") % names,
        _(
            "Hello %(name)s,\n\nthank you for taking part in %(campaign)s. Follow your reward and its "
            "payout here (keep this link private):\n\n%(url)s\n\nJoyBack"
        )
        % names,
        "status_link",
        [names["campaign"], names["url"]],
    )


def _email_optin(note: Notification) -> Message:
    names = {"brand": note.context["brand"], "url": note.context["url"]}
    return Message(
        _("Confirm: %(brand)s's news by email") % names,
        _(
            "You asked for %(brand)s's news and offers by email on your reward page. Confirm with this "
            "link within a week:\n\n%(url)s\n\nIf it was not you, ignore this message: nothing is sent to "
            "you. Your reward does not depend on it.\n\nJoyBack"
        )
        % names,
        "",
        [],
    )


def _amount(payout: Payout) -> str:
    return money_format(payout.amount, payout.currency, translation.get_language() or "en")


def _settled(note: Notification) -> Message:
    payout = note.payout
    names = {
        "amount": _amount(payout),
        "brand": payout.brand.name,
        "account": payout.payee.account_masked,
        "when": when_text(payout.settled_at or note.created_at, payee=payout.payee),
        "reference": payout.end_to_end_id,
        "url": _note_status_url(note, payout.participant),
    }
    return Message(
        _("Your reward of %(amount)s from %(brand)s is paid") % names,
        _(
            "%(brand)s paid you %(amount)s to your account %(account)s on %(when)s.\n\n"
            "Bank reference: %(reference)s\n\nYour rewards and everything paid so far: %(url)s\n\nJoyBack"
        )
        % names,
        "payout_receipt",
        [names["brand"], names["amount"], names["account"], names["when"], names["reference"], names["url"]],
    )


def _fix_details(note: Notification) -> Message:
    payout = note.payout
    names = {
        "amount": _amount(payout),
        "account": payout.payee.account_masked,
        "reason": reason_text(payout.reason_code),
        "url": status_url(payout.participant),
    }
    return Message(
        _("Please check your bank details"),
        _(
            "We could not pay %(amount)s to %(account)s: %(reason)s. Please enter your bank details "
            "again and we will pay you at once: %(url)s"
        )
        % names,
        "payout_fix_details",
        [names["amount"], names["account"], names["reason"], names["url"]],
    )


def _delayed(note: Notification) -> Message:
    payout = note.payout
    names = {"amount": _amount(payout), "reason": reason_text(payout.reason_code)}
    return Message(
        _("Your payout is delayed"),
        _("Your payout of %(amount)s is delayed: %(reason)s. We will send it again; nothing to do for you.")
        % names,
        "payout_delayed",
        [names["amount"], names["reason"]],
    )


def _privacy(note: Notification) -> Message:
    url = note.context["url"]
    subject = (
        _("Confirm: download your data") if note.kind == "privacy_export" else _("Confirm: erase your data")
    )
    body = _(
        "Someone asked for this from your private reward page. If it was you, confirm here within "
        "24 hours:\n\n%(url)s\n\nIf it was not you, ignore this message; nothing happens.\n\nJoyBack"
    ) % {"url": url}
    return Message(subject, body, note.kind, [url])


def _tax_details(note: Notification) -> Message:
    names = {"name": note.payee.holder_name, "url": _note_status_url(note, note.payee.participant)}
    return Message(
        _("Your reward waits for your tax details"),
        _(
            "Hello %(name)s,\n\nyou were rewarded for a task a brand asked of you, such as a video. "
            "The law requires us to report such payments to the tax authority, with your tax "
            "number, date of birth and address. Your payout waits until you give them; we pay you "
            "as soon as you do:\n\n%(url)s\n\nJoyBack"
        )
        % names,
        "payout_tax_details",
        [names["url"]],
    )


def _details_changed(note: Notification) -> Message:
    change = PayeeChange.objects.get(pk=note.context["change"])
    names = {
        "name": note.payee.holder_name,
        "when": when_text(change.at, payee=note.payee),
        "account": change.account_after,
        "before": change.account_before,
    }
    return Message(
        _("Your bank details for your rewards were changed"),
        _(
            "Hello %(name)s,\n\nyour bank details for your JoyBack rewards were changed on "
            "%(when)s: payouts now go to %(account)s instead of %(before)s.\n\nIf this was not "
            "you, write to the brand's support at once.\n\nJoyBack"
        )
        % names,
        "payee_details_changed",
        [names["when"], names["account"], names["before"]],
    )


def _disclosure_fix(note: Notification) -> Message:
    case = RemediationCase.objects.select_related("campaign__brand").get(pk=note.context["case"])
    reasons = caption_reasons(
        case.reasons,
        wording=case.wording,
        brand=case.campaign.brand.name,
        language=translation.get_language() or "en",
    )
    what = "\n".join(f"- {reason.what} {reason.instead}" for reason in reasons)
    names = {
        "campaign": case.campaign.name,
        "when": when_text(case.deadline, payee=note.payee),
        "what": what,
        "wording": case.wording,
        "url": status_url(note.participant),
    }
    return Message(
        _("Change your video's caption by %(when)s") % names,
        _(
            "Your video for %(campaign)s needs a change before we can pay you:\n\n%(what)s\n\n"
            "Start your caption with: %(wording)s\nAnd switch on the platform's paid-partnership "
            "label for this post.\n\nPlease fix it by %(when)s, or the reward is released. Once it is "
            "fixed, tell us on your reward page: %(url)s\n\nJoyBack"
        )
        % names,
        "disclosure_fix",
        [names["campaign"], names["wording"], names["when"], names["url"]],
    )


def _dashboard_url(brand) -> str:
    return settings.SITE_URL + reverse("brand_dashboard", args=[brand.slug])


def _brand_verified(note: Notification) -> Message:
    names = {"brand": note.brand.name, "url": _dashboard_url(note.brand)}
    return Message(
        _("%(brand)s is verified") % names,
        _(
            "JoyBack's staff have verified %(brand)s. Funding and payouts open once our payment "
            "provider, Adyen, has verified your company too: your brand gets its own account there, "
            "in its name, and pays people their rewards from it. The dashboard shows what Adyen "
            "still needs:\n\n%(url)s\n\nJoyBack"
        )
        % names,
        "",
        [],
    )


def _deposit_booked(note: Notification) -> Message:
    names = {
        "brand": note.brand.name,
        "amount": money_format(
            note.context["amount"], note.context["currency"], translation.get_language() or "en"
        ),
        "reference": note.context["reference"],
        "when": when_text(datetime.fromisoformat(note.context["at"]), payee=note.brand),
        "url": _dashboard_url(note.brand),
    }
    return Message(
        _("%(amount)s arrived for %(brand)s") % names,
        _(
            "Your bank transfer of %(amount)s (reference: %(reference)s) was booked to the funding "
            "balance of %(brand)s on %(when)s. Move it into a campaign's budget on the dashboard:"
            "\n\n%(url)s\n\nJoyBack"
        )
        % names,
        "",
        [],
    )


def _funding_url(brand) -> str:
    return settings.SITE_URL + reverse("payouts:funding", args=[brand.slug])


def _onboarding_documents(note: Notification) -> Message:
    names = {
        "brand": note.brand.name,
        "what": "\n".join(f"- {words}" for words in onboarding_problem_words(note.context.get("problems"))),
        "url": _funding_url(note.brand),
    }
    return Message(
        _("Adyen needs documents from %(brand)s") % names,
        _(
            "Our payment provider, Adyen, holds %(brand)s's money in its own account and must verify "
            "the company first. It still needs:\n\n%(what)s\n\nGive them on Adyen's page, linked from "
            "your funding page; funding and payouts open once Adyen has verified the company:\n\n"
            "%(url)s\n\nJoyBack"
        )
        % names,
        "",
        [],
    )


def _onboarding_refused(note: Notification) -> Message:
    names = {"brand": note.brand.name, "url": _funding_url(note.brand)}
    return Message(
        _("Adyen refused to verify %(brand)s") % names,
        _(
            "Our payment provider, Adyen, has refused to verify %(brand)s, so it will not hold the "
            "brand's money and JoyBack cannot open funding or payouts for it. Adyen does not tell us "
            "all of its reasons; what it said is on your funding page. Write to JoyBack's support if "
            "you think this is a mistake:\n\n%(url)s\n\nJoyBack"
        )
        % names,
        "",
        [],
    )


def _onboarding_verified(note: Notification) -> Message:
    names = {"brand": note.brand.name, "url": _funding_url(note.brand)}
    return Message(
        _("Adyen verified %(brand)s") % names,
        _(
            "Our payment provider, Adyen, has verified %(brand)s. Money you send to the brand's own "
            "virtual IBAN stays in its own account at Adyen, and people are paid from there:\n\n"
            "%(url)s\n\nJoyBack"
        )
        % names,
        "",
        [],
    )


def _shop_taken_over(note: Notification) -> Message:
    names = {"domain": note.context["domain"]}
    return Message(
        _("Your shop connection %(domain)s was retired") % names,
        _(
            "%(domain)s was connected to your brand without proof that it is your shop. Its owner has "
            "now connected it by installing from the shop itself, so your connection no longer takes its "
            "orders. If the shop is yours, connect it again from the shop's admin."
        )
        % names,
        "",
        [],
    )


def _brief_reviewed(note: Notification) -> Message | None:
    rule = ActionRule.objects.filter(pk=note.context["rule"]).select_related("campaign__brand").first()
    if rule is None:
        return None  # deleted since: nothing of it goes live, nothing to change
    # The campaign's own brand: a test twin's campaign is under the twin's address.
    page = reverse("campaign_detail", args=[rule.campaign.brand.slug, rule.campaign_id])
    names = {
        "campaign": rule.campaign.name,
        "rule": rule.get_trigger_display(),
        "note": note.context["note"],
        "url": settings.SITE_URL + page,
    }
    if note.context["approved"]:
        return Message(
            _("Your instructions for %(campaign)s are approved") % names,
            _(
                "JoyBack's team read the instructions of rule “%(rule)s” in %(campaign)s and approved them. "
                "The campaign's page says what comes next:\n\n%(url)s\n\nJoyBack"
            )
            % names,
            "",
            [],
        )
    return Message(
        _("Change your instructions for %(campaign)s") % names,
        _(
            "JoyBack's team read the instructions of rule “%(rule)s” in %(campaign)s and asks you to "
            "change them:\n\n%(note)s\n\nChange them on the campaign's page; the new words are read "
            "again:\n\n%(url)s\n\nJoyBack"
        )
        % names,
        "",
        [],
    )


def _invitation(note: Notification) -> Message | None:
    invitation = Invitation.objects.select_related("brand", "invited_by").get(pk=note.context["invitation"])
    if invitation_refusal(invitation=invitation):
        return None  # withdrawn, accepted or expired before a retry: a dead link is not sent
    subject, body = invitation_message(invitation=invitation)
    return Message(subject, body, "", [])


# A template answers None when the message has nothing left to say: the row counts as done, unsent.
MESSAGES: dict[str, Callable[[Notification], Message | None]] = {
    "status_link": _status_link,
    "settled": _settled,
    "fix_details": _fix_details,
    "delayed": _delayed,
    "privacy_export": _privacy,
    "privacy_erase": _privacy,
    "details_changed": _details_changed,
    "tax_details": _tax_details,
    "disclosure_fix": _disclosure_fix,
    "brand_verified": _brand_verified,
    "deposit_booked": _deposit_booked,
    "shop_taken_over": _shop_taken_over,
    "brief_reviewed": _brief_reviewed,
    "invitation": _invitation,
    "broadcast": _broadcast,
    "email_optin": _email_optin,
    "onboarding_documents": _onboarding_documents,
    "onboarding_refused": _onboarding_refused,
    "onboarding_verified": _onboarding_verified,
}


def _channels(payee: PayeeAccount, *, every: bool) -> list[str]:
    present = [channel for channel, there in (("email", payee.email), ("whatsapp", payee.phone)) if there]
    return present if every else present[:1]


def person_notify(
    *, payee: PayeeAccount, kind: str, key: str, context: dict | None = None, every_channel: bool = False
) -> list[int]:
    """A message of `kind` to the person whose contact `payee` is, by email, else WhatsApp (or by
    both, `every_channel`), once per `key`: in the caller's transaction, sent after commit; the ids
    of the rows that are new."""
    assert kind in MESSAGES, kind
    rows = [
        (payee.participant_id, payee.pk, None, payee.brand_id, channel, f"{key}:{channel}", None)
        for channel in _channels(payee, every=every_channel)
    ]
    return _notifications_write(rows=rows, kind=kind, context=context or {})


def email_optin_notify(*, participant, key: str, context: dict) -> list[int]:
    """The link that confirms an email opt-in, to the address the form gave (not one on file):
    in the caller's transaction, sent after commit, once per key."""
    rows = [(participant.pk, None, None, participant.brand_id, "email", key, None)]
    return _notifications_write(rows=rows, kind="email_optin", context=context)


def brand_notify(*, brand_id: int, kind: str, key: str, roles, context: dict | None = None) -> list[int]:
    """A message of `kind` to each member of the brand with one of `roles`, by email, once per
    `key` and member: in the caller's transaction, sent after commit, on the same retry policy."""
    assert kind in MESSAGES, kind
    members = Membership.objects.filter(brand_id=brand_id, role__in=list(roles), user__is_active=True)
    rows = [
        (None, None, None, brand_id, "email", f"{key}:{user_id}", user_id)
        for user_id in members.values_list("user_id", flat=True).order_by("user_id")
    ]
    return _notifications_write(rows=rows, kind=kind, context=context or {})


def brand_verified_notify(*, brand_id: int) -> list[int]:
    """Tell the brand's owners that staff verified it: once per verification."""
    brand = Brand.objects.filter(pk=brand_id, verified_at__isnull=False).first()
    if brand is None:
        return []
    key = f"brand_verified:{brand.pk}:{brand.verified_at.timestamp():.0f}"
    return brand_notify(brand_id=brand.pk, kind="brand_verified", key=key, roles=MANAGE_MEMBERS)


def deposit_booked_notify(*, transaction_id: int, reference: str) -> list[int]:
    """Tell the brand's owners and finance people that money they sent was booked to its funding
    balance: once per booking (its ledger transaction)."""
    entry = (
        Entry.objects.filter(transaction_id=transaction_id, account__kind=AccountKind.BRAND_FUNDING)
        .select_related("transaction", "account")
        .first()
    )
    if entry is None or entry.account.brand_id is None:
        return []
    posted = entry.transaction
    context = {
        "amount": abs(entry.amount),
        "currency": entry.account.currency,
        "reference": reference,
        "at": posted.posted_at.isoformat(),
    }
    return brand_notify(
        brand_id=entry.account.brand_id,
        kind="deposit_booked",
        key=f"deposit_booked:{transaction_id}",
        roles=FUND,
        context=context,
    )


def onboarding_notify(*, onboarding, key: str) -> list[int]:
    """Tell the brand's owners and finance people where its verification at the payment provider
    stands (documents it asks for, a refusal, the verification): once per `key`."""
    kind = {"documents": "onboarding_documents", "refused": "onboarding_refused"}.get(
        onboarding.status, "onboarding_verified"
    )
    return brand_notify(
        brand_id=onboarding.brand_id,
        kind=kind,
        key=f"onboarding:{onboarding.brand_id}:{key}",
        roles=FUND,
        context={"problems": list(onboarding.problems or [])},
    )


def shop_taken_over_notify(*, brand_id: int, shop_id: int, domain: str) -> list[int]:
    """Tell the brand's owners their unproven shop connection was retired: its proven owner
    connected the shop (verification.connectors)."""
    return brand_notify(
        brand_id=brand_id,
        kind="shop_taken_over",
        key=f"shop_taken_over:{shop_id}",
        roles=MANAGE_API,
        context={"domain": domain},
    )


def brief_reviewed_notify(*, decision_id: int) -> list[int]:
    """Tell the brand's campaign editors what JoyBack's review of a rule's words decided (approved
    for good, or sent back with what to change): once per decision."""
    decision = ComplianceDecision.objects.select_related("brand").get(pk=decision_id)
    approved = decision.verdict == "compliant"
    return brand_notify(
        # A test twin's campaign: its members are the live brand's.
        brand_id=live_brand_of(decision.brand).pk,
        kind="brief_reviewed",
        key=f"brief_reviewed:{decision.pk}",
        roles=EDIT_CAMPAIGNS,
        # An approval's note is staff's reasoning, kept with the decision; a send-back's is for the brand.
        context={
            "rule": decision.evidence["rule_id"],
            "note": "" if approved else decision.evidence.get("note", ""),
            "approved": approved,
        },
    )


def invitation_notify(*, invitation_id: int, language: str = "") -> list[int]:
    """Mail the link of a brand's invitation to the invited address, once, in `language` (the
    inviter's; the brand's when it is not one of ours), while the invitation is open."""
    invitation = Invitation.objects.filter(
        pk=invitation_id, accepted_at__isnull=True, revoked_at__isnull=True
    ).first()
    if invitation is None:
        return []
    context = {"invitation": invitation.pk}
    if language in dict(settings.LANGUAGES):
        context["language"] = language
    rows = [(None, None, None, invitation.brand_id, "email", f"invitation:{invitation.pk}:email", None)]
    return _notifications_write(rows=rows, kind="invitation", context=context)


def payouts_notify(*, payouts: list[Payout], kind: str) -> None:
    """Tell each person about their payout, by every channel they gave: one statement for them all,
    in the caller's transaction. A task of its own per message would cost the worker more than the
    payout; a crash or a failed send leaves the row unsent, and the sweep sends it."""
    rows = [
        (
            payout.participant_id,
            payout.payee_id,
            payout.pk,
            payout.brand_id,
            channel,
            f"{payout.pk}:{kind}:{channel}",
            None,
        )
        for payout in payouts
        for channel in _channels(payout.payee, every=True)
    ]
    _notifications_write(rows=rows, kind=kind, context={})


def disclosure_fix_notify(*, participant_id: int, case_id: int | None = None) -> list[int]:
    """Tell the person what to fix in their video's disclosure and by when, once per case, as its
    24 hours start (compliance.services.case_open) or, for a person who gives their contact only
    later, when they give it (status_link_send): each case still open and not past its deadline."""
    payee = (
        PayeeAccount.objects.filter(participant_id=participant_id, replaced_at__isnull=True)
        .order_by("-pk")
        .first()
    )
    if payee is None:
        return []
    cases = RemediationCase.objects.filter(
        participant_id=participant_id, status=CaseStatus.OPEN, deadline__gt=timezone.now()
    )
    if case_id is not None:
        cases = cases.filter(pk=case_id)
    ids = []
    for case in cases:
        ids += person_notify(
            payee=payee, kind="disclosure_fix", key=f"disclosure_fix:{case.pk}", context={"case": case.pk}
        )
    return ids


def _notifications_write(*, rows: list[tuple], kind: str, context: dict) -> list[int]:
    if not rows:
        return []
    ids = sql.notifications_insert(rows=rows, kind=kind, context=context, now=timezone.now())
    if ids:
        transaction.on_commit(partial(_notifications_send_quietly, ids))
    return ids


def _notifications_send_quietly(ids: list[int]) -> None:
    try:
        notifications_send(ids=ids)
    except Exception:
        logger.exception("notifications %s not all sent; the sweep tries again", ids)


def notifications_due(*, now=None, limit: int = 200) -> list[int]:
    """Unsent messages whose next try is due: a crash's (a minute after it was written), a failed
    send's (at its backoff), until its attempts are used up."""
    now = now or timezone.now()
    due = Q(next_attempt_at__lte=now) | Q(
        next_attempt_at__isnull=True, created_at__lte=now - timedelta(minutes=1)
    )
    return list(
        Notification.objects.filter(due, sent_at__isnull=True, attempts__lt=NOTIFICATION_ATTEMPTS)
        .order_by("created_at")
        .values_list("pk", flat=True)[:limit]
    )


def _failed(note: Notification, error: Exception) -> None:
    attempts = note.attempts + 1
    Notification.objects.filter(pk=note.pk).update(
        sent_at=None, attempts=attempts, next_attempt_at=timezone.now() + notification_backoff(attempts)
    )
    if attempts >= NOTIFICATION_ATTEMPTS:
        logger.error(
            "%s to participant %s given up after %s attempts: %s", note, note.participant_id, attempts, error
        )


def message_deliver(*, to: Recipient, channel: str, message: Message) -> str:
    """One message by one channel, now: the mail or the WhatsApp template; the provider's id."""
    if channel == "email":
        EmailMessage(message.subject, message.body, None, [to.email]).send()
        return ""
    with routed_for(livemode=brand_livemode(to.brand_id)):
        return whatsapp.template_send(
            to=to.phone,
            template=message.whatsapp,
            language=message.language or translation.get_language() or "en",
            parameters=message.parameters,
            callback=message.callback,
            sender=message.sender,
        )


def audience_messages_notify(*, rows: list[tuple[int, int, str]]) -> dict[str, int]:
    """A brand's template to people of its audience: (participant id, brand id, key) rows, each
    once per key, by WhatsApp; in the caller's transaction, sent after commit. {key: id} of the
    new rows."""
    ids = _notifications_write(
        rows=[
            (participant_id, None, None, brand_id, "whatsapp", key, None)
            for participant_id, brand_id, key in rows
        ],
        kind="broadcast",
        context={},
    )
    return dict(Notification.objects.filter(pk__in=ids).values_list("key", "pk"))


def _payout_relations_share(note: Notification) -> None:
    """A payout's note names the payout's own payee, person and brand: the payout is given the
    note's rather than reading each again with it (a second payee's details decrypted, three more
    joins). One that names others (none does) reads its own when asked."""
    payout = note.payout
    if payout is None:
        return
    for relation in ("payee", "participant", "brand"):
        if getattr(note, f"{relation}_id") == getattr(payout, f"{relation}_id") is not None:
            setattr(payout, relation, getattr(note, relation))


def notifications_send(*, ids: list[int]) -> int:
    """Send notifications, each once: claimed in one statement before any message goes (what
    another process claimed is skipped), the mails over one connection, WhatsApp messages one by
    one. What fails waits for its next attempt (notification_backoff), and the first failure is
    raised once the others are sent; how many went."""
    claimed = sql.notifications_claim(ids=ids, now=timezone.now())
    if not claimed:
        return 0
    notes = list(
        Notification.objects.select_related("payee", "participant", "user", "brand", "payout").filter(
            pk__in=claimed
        )
    )
    for note in notes:
        _payout_relations_share(note)
    receipts = [note.participant_id for note in notes if note.kind == "settled"]
    urls = _status_urls(receipts) if receipts else {}
    mails, failures, sent = [], [], 0
    for note in notes:
        note.status_url = urls.get(note.participant_id)
        if note.kind in CONSENTED_KINDS and not consent_in_force(
            participant_id=note.participant_id, channel="whatsapp"
        ):
            # Withdrawn since it was planned: never sent, never tried again.
            Notification.objects.filter(pk=note.pk).update(provider_message_id="withheld")
            BroadcastRecipient.objects.filter(notification_id=note.pk).update(
                status="skipped", skip_reason="opted_out", sent_at=None
            )
            continue
        try:
            to = _recipient(note)
            with translation.override(to.language):
                message = MESSAGES[note.kind](note)
                if message is None:
                    continue
                if note.channel == "email":
                    mails.append((note, EmailMessage(message.subject, message.body, None, [to.email])))
                    continue
                message_id = message_deliver(to=to, channel=note.channel, message=message)
            Notification.objects.filter(pk=note.pk).update(provider_message_id=message_id)
            sent += 1
        except Exception as error:
            _failed(note, error)
            failures.append(error)
    if mails:
        try:
            sent += get_connection().send_messages([mail for _note, mail in mails]) or 0
        except Exception as error:
            for note, _mail in mails:
                _failed(note, error)
            failures.append(error)
    if failures:
        raise failures[0]
    return sent
