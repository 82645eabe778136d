"""The brand's email news, offered on the person's reward page: an address and a box left unticked,
beside the words the brand wrote for the campaign's email consent in the person's language; never a
condition of any reward (GDPR Art. 7(4), EDPB Guidelines 05/2020). Nothing is in force until the
person confirms by the link mailed to that address (double opt-in: German practice under UWG §7(2)
and what proves the address is theirs). The confirmation records the consent with the exact words
shown and the form submission as its proof; the submission itself travels signed in the link, so an
address nobody confirms leaves nothing behind."""

import hashlib
import secrets

from django.core import signing
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns.models import Campaign, ConsentChannel, ConsentWording
from joyback.ratelimit import rate_limit_hit
from payouts.models import PrivacyRequest
from payouts.models.privacy import PrivacyKind
from payouts.notifications import email_optin_notify
from verification.models import ConsentRecord, ConsentSource, Participant, Provider
from verification.selectors import consent_in_force
from verification.services.consent import consent_record_give
from verification.services.participants import identity_attach

CONFIRM_SALT = "joyback.email-optin"
CONFIRM_DAYS = 7
# Confirmation mails a day: to one address (whoever asks, so nobody makes JoyBack mail a stranger
# over and over) and from one reward page (so no page relays mail to a list of addresses).
MAILS_PER_ADDRESS_PER_DAY = 3
MAILS_PER_PERSON_PER_DAY = 3
DAY = 24 * 3600


class OptinRefused(Exception):
    """The opt-in cannot go ahead; the message is for the person."""


def email_optin_offer(*, campaign: Campaign, language: str) -> ConsentWording | None:
    """The brand's email wording for this campaign in the person's language (else the campaign's
    first): a campaign whose brand wrote none offers no newsletter."""
    wordings = ConsentWording.objects.filter(campaign=campaign, channel=ConsentChannel.EMAIL).order_by(
        "-version", "-pk"
    )
    found = wordings.filter(language=language).first()
    if found is None and campaign.languages:
        found = wordings.filter(language=campaign.languages[0]).first()
    return found or wordings.first()


def email_optin_request(
    *,
    participant: Participant,
    campaign: Campaign,
    email: str,
    wording_id: int,
    agreed: bool,
    confirm_url_for,
) -> str:
    """Mail the confirmation link for the form just submitted; the address it went to. Refused, with
    nothing changed, when the box is unticked, the address is not one, or the words are not the
    campaign's current email wording."""
    if not agreed:
        raise OptinRefused(
            _("Tick the box to get the brand's news by email, or leave it: your reward is the same.")
        )
    email = email.strip().lower()
    try:
        validate_email(email)
    except ValidationError:
        raise OptinRefused(_("Enter a valid email address.")) from None
    wording = ConsentWording.objects.filter(
        pk=wording_id, campaign=campaign, channel=ConsentChannel.EMAIL
    ).first()
    if campaign.brand_id != participant.brand_id or wording is None:
        raise OptinRefused(_("This campaign offers no email news."))
    if consent_in_force(participant_id=participant.pk, channel=ConsentChannel.EMAIL):
        raise OptinRefused(_("You already get this brand's news by email."))
    address_key = hashlib.sha256(email.encode()).hexdigest()
    if rate_limit_hit(
        scope="email_optin_to", key=address_key, limit=MAILS_PER_ADDRESS_PER_DAY, window_seconds=DAY
    ) or rate_limit_hit(
        scope="email_optin_from", key=str(participant.pk), limit=MAILS_PER_PERSON_PER_DAY, window_seconds=DAY
    ):
        raise OptinRefused(
            _(
                "We already sent confirmation emails today. Open the link in the last one, "
                "or try again tomorrow."
            )
        )
    submission = secrets.token_hex(8)
    token = signing.dumps(
        {"p": participant.pk, "c": campaign.pk, "e": email, "w": wording.pk, "s": submission,
         "t": timezone.now().isoformat()},
        salt=CONFIRM_SALT,
        compress=True,
    )  # fmt: skip
    context = {
        "url": confirm_url_for(token),
        "brand": campaign.brand.name,
        "email": email,
        "language": wording.language,
    }
    with transaction.atomic(durable=True):
        email_optin_notify(participant=participant, key=f"email_optin:{submission}", context=context)
    return email


def _token_read(token: str) -> dict:
    try:
        found = signing.loads(token, salt=CONFIRM_SALT, max_age=CONFIRM_DAYS * 86400)
        return {**found, "p": int(found["p"]), "c": int(found["c"]), "w": int(found["w"])}
    except signing.SignatureExpired:
        raise OptinRefused(_("This link is more than a week old: ask again from your reward page.")) from None
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise OptinRefused(_("This link is not valid.")) from None


def email_optin_pending(*, token: str) -> dict:
    """What the link is for, to show before confirming: the brand, the address, the words."""
    found = _token_read(token)
    wording = ConsentWording.objects.select_related("campaign__brand").filter(pk=found["w"]).first()
    if wording is None:
        raise OptinRefused(_("This link is not valid."))
    return {"email": found["e"], "brand": wording.campaign.brand.name, "text": wording.text}


def email_optin_confirm(*, token: str) -> ConsentRecord | None:
    """The consent, in force from now: the exact words the form showed, the form submission (its id
    and time, carried signed in the link) as proof. A second click records nothing new."""
    found = _token_read(token)
    participant = Participant.objects.filter(pk=found["p"]).first()
    wording = (
        ConsentWording.objects.filter(pk=found["w"], campaign_id=found["c"], channel=ConsentChannel.EMAIL)
        .select_related("campaign__brand")
        .first()
    )
    if participant is None or wording is None or wording.brand_id != participant.brand_id:
        raise OptinRefused(_("This link is not valid."))
    if PrivacyRequest.objects.filter(
        participant=participant, kind=PrivacyKind.ERASE, done_at__isnull=False
    ).exists():
        # The person's data was erased after this link was mailed: it brings nothing back.
        raise OptinRefused(_("This link is not valid."))
    identity = identity_attach(participant=participant, provider=Provider.EMAIL, subject=found["e"])
    if identity.participant_id != participant.pk:
        raise OptinRefused(_("This address already gets the brand's news from another reward page."))
    address = hashlib.sha256(found["e"].encode()).hexdigest()[:16]
    proof = f"form:{found['s']} at {found['t']} confirmed by the link mailed to {address}"
    with transaction.atomic(durable=True):
        return consent_record_give(
            identity=identity,
            channel=ConsentChannel.EMAIL,
            campaign=wording.campaign,
            text=wording.text,
            language=wording.language,
            wording=wording,
            source=ConsentSource.FORM,
            proof=proof,
        )
