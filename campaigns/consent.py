"""What a campaign asks a person to agree to before the brand may message them again: the wording
per channel and language, the standard wording when the brand wrote none, and the check that a
wording names the brand and the channel (WhatsApp's opt-in rules, and a consent a person can
understand)."""

from django.utils import translation
from django.utils.translation import gettext

from campaigns.models import Campaign, ConsentChannel, ConsentWording

# How each channel may be named in a wording, in the four languages: a wording that names none of
# these does not say where the messages will come.
CHANNEL_WORDS = {
    ConsentChannel.WHATSAPP: ("whatsapp",),
    ConsentChannel.EMAIL: ("email", "e-mail", "correo", "newsletter", "邮件", "电子邮件"),
}


def wording_problem(*, text: str, brand, channel: str) -> str:
    """Why this wording cannot be a consent for the brand on the channel, or "" when it can."""
    folded = text.casefold()
    names = [brand.name, *brand.sponsor_names]
    if not any(name.strip() and name.strip().casefold() in folded for name in names):
        return gettext("The consent wording must name your brand (%(brand)s).") % {"brand": brand.name}
    if not any(word in folded for word in CHANNEL_WORDS[ConsentChannel(channel)]):
        return gettext("The consent wording must say the messages come by %(channel)s.") % {
            "channel": ConsentChannel(channel).label
        }
    return ""


def standard_wording(*, brand_name: str, channel: str, language: str) -> str:
    """The wording shown when the brand wrote none: it names the brand and the channel, says how to
    stop, and that stopping takes no reward back."""
    with translation.override(language):
        if channel == ConsentChannel.WHATSAPP:
            return gettext(
                "I agree that %(brand)s sends me news and offers on WhatsApp. I can stop at any time by "
                "replying STOP; my reward stays mine."
            ) % {"brand": brand_name}
        return gettext(
            "I agree that %(brand)s sends me news and offers by email. I can unsubscribe at any time; "
            "my reward stays mine."
        ) % {"brand": brand_name}


def wording_current(*, campaign: Campaign, channel: str, language: str) -> ConsentWording | None:
    """The brand's latest wording for the channel in this language, else in the campaign's first."""
    wordings = ConsentWording.objects.filter(campaign=campaign, channel=channel).order_by("-version", "-pk")
    found = wordings.filter(language=language).first()
    if found is None and campaign.languages:
        found = wordings.filter(language=campaign.languages[0]).first()
    return found


def wordings_latest(*, campaign: Campaign) -> list[ConsentWording]:
    """Each (channel, language)'s latest version, as the launch check reads them."""
    return list(
        ConsentWording.objects.filter(campaign=campaign)
        .order_by("channel", "language", "-version", "-pk")
        .distinct("channel", "language")
    )
