"""People of a brand's audience, made the way the webhook makes them (an identity and a consent row
with its proof), for the audience's tests."""

import itertools

from django.db import transaction

from campaigns.models import Membership, Role
from payouts.audience.broadcasts import whatsapp_account_connect
from verification.sandbox.whatsapp import signup_code
from verification.services.consent import consent_record_give, consent_record_withdraw
from verification.services.participants import identity_attach, participant_create

_numbers = itertools.count(1)


def audience_person(*, campaign, wa_id: str | None = None, language: str = "en", consented: bool = True):
    """A person with a WhatsApp number, who agreed (or never did) on `campaign`."""
    person = participant_create(brand=campaign.brand)
    number = wa_id or f"49151{next(_numbers):08d}"
    identity = identity_attach(participant=person, provider="whatsapp", subject=number, display_name="")
    if consented:
        with transaction.atomic():
            consent_record_give(
                identity=identity,
                channel="whatsapp",
                campaign=campaign,
                text=f"I agree that {campaign.brand.name} sends me news on WhatsApp.",
                language=language,
                wording=None,
                source="whatsapp_message",
                proof=f"wamid.test{number}",
            )
    return identity


def audience_stop(identity, proof: str = "wamid.stop") -> None:
    with transaction.atomic():
        consent_record_withdraw(
            participant_id=identity.participant_id, channel="whatsapp", source="whatsapp_stop", proof=proof
        )


def audience_email_person(*, campaign, email: str, language: str = "en"):
    """A person who agreed on `campaign` to the brand's email news (a confirmed form opt-in)."""
    person = participant_create(brand=campaign.brand)
    identity = identity_attach(participant=person, provider="email", subject=email.lower(), display_name="")
    with transaction.atomic():
        consent_record_give(
            identity=identity,
            channel="email",
            campaign=campaign,
            text=f"I agree that {campaign.brand.name} sends me news and offers by email.",
            language=language,
            wording=None,
            source="form",
            proof=f"form:test-{email}",
        )
    return identity


def waba_connect(*, brand, user=None):
    """The brand's own WhatsApp Business Account, connected as the owner's Embedded Signup ends in
    the sandbox (the code exchanged, the account and its number read from Meta's answers)."""
    if user is None:
        user = Membership.objects.filter(brand=brand, role=Role.OWNER).first().user
    return whatsapp_account_connect(brand=brand, user=user, code=signup_code(brand.name))
