"""The templates a new campaign starts from: one per package, said in a marketer's words (what
people do, what is paid, how it is checked), with texts to start from. The rewarded actions each
starts with are the package's (campaigns.services.rules.PACKAGE_RULES)."""

from django.utils.translation import gettext_lazy as _

from campaigns.models import Package
from campaigns.services.rules import PACKAGE_RULES

STARTERS = {
    Package.ALL_IN_ONE: {
        "what": _(
            "People log in with TikTok, opt in on WhatsApp and post a disclosed video about you. "
            "Each step pays on its own."
        ),
        "checked": _(
            "Login and opt-in pay at once; a video pays after its views are counted and its "
            "disclosure checked."
        ),
        "headline": _("Get paid for showing us some love"),
        "description": _(
            "Log in, join us on WhatsApp and post a short video: each step pays, straight to your bank."
        ),
    },
    Package.TIKTOK_ONLY: {
        "what": _(
            "People log in with TikTok and post a disclosed video; you can pay more as the views grow."
        ),
        "checked": _("The login pays at once; a video pays after an engagement window, bots filtered."),
        "headline": _("Post a video, get paid"),
        "description": _("Show us on TikTok: we pay you for the video, straight to your bank account."),
    },
    Package.WHATSAPP_REWARD: {
        "what": _(
            "People opt in to your WhatsApp messages and are paid for it: an audience you can reach again."
        ),
        "checked": _("Paid at once when WhatsApp confirms the opt-in from their own number."),
        "headline": _("Join us on WhatsApp, get a reward"),
        "description": _("Say hi on WhatsApp to hear from us first: we pay you for joining."),
    },
    Package.CASHBACK: {
        "what": _("Buyers get money back for a purchase your shop or the Cashback API confirms."),
        "checked": _("Paid once the purchase can no longer be returned."),
        "headline": _("Cash back on your purchase"),
        "description": _("Buy from us and get money back, paid straight to your bank account."),
    },
}


def starters() -> list[dict]:
    """Every template with its package's starting actions and what one person earns at most."""
    return [
        {
            "package": package,
            "name": package.label,
            **texts,
            "actions": [rule["trigger"].label for rule in PACKAGE_RULES[package]],
            "most": sum(rule["reward_amount"] for rule in PACKAGE_RULES[package]),
        }
        for package, texts in STARTERS.items()
    ]
