"""What a reward is for tax: a personal service (reported: DAC7 in the EU, the UK's platform rules,
1099-NEC in the US), a rebate on a purchase, or a promotional gift (neither reported), per reward
kind (the rule's trigger) and country. The reasoning is in docs/design.md, "Tax classification".

Each reward records the class it was booked under, the country it was judged for and the table's
version (verification.ActionClaim.tax_class, tax_country, tax_table), so a report for a past year
reads what was decided then. A change of mind is a new version added to TABLES, never an edit of
one that rewards were booked under.
"""

from dataclasses import dataclass

from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from campaigns.models import Campaign, Trigger
from campaigns.services.refusals import LaunchProblem


class TaxClass:
    SERVICE = "service"
    REBATE = "rebate"
    PROMOTIONAL = "promotional"

    # Strictest first: where a reward could be judged for several countries, the first that applies wins.
    ORDER = (SERVICE, PROMOTIONAL, REBATE)
    LABELS = {
        SERVICE: pgettext_lazy("tax class", "Personal service"),
        REBATE: pgettext_lazy("tax class", "Rebate"),
        PROMOTIONAL: pgettext_lazy("tax class", "Promotional gift"),
    }
    # The classes a tax authority must be told about: the person's tax details are asked for them.
    REPORTABLE = frozenset({SERVICE})


EU = frozenset(
    [
        "AT",
        "BE",
        "BG",
        "CY",
        "CZ",
        "DE",
        "DK",
        "EE",
        "ES",
        "FI",
        "FR",
        "GR",
        "HR",
        "HU",
        "IE",
        "IT",
        "LT",
        "LU",
        "LV",
        "MT",
        "NL",
        "PL",
        "PT",
        "RO",
        "SE",
        "SI",
        "SK",
    ]
)
# Where JoyBack reports what it pays: the EU (DAC7), the United Kingdom (its platform rules, the
# OECD model) and the United States (1099-NEC). Anywhere else is judged as the EU is.
REPORTING_COUNTRIES = EU | {"GB", "US"}

# One class per reward kind, the EU's and the UK's reading of "personal service" (DAC7 art. 1(9)(a)
# and its UK twin): task-based work done at the request of a user of the platform.
_OECD = {
    Trigger.UGC_SHARE: TaxClass.SERVICE,
    Trigger.VIEW_THRESHOLD: TaxClass.SERVICE,
    Trigger.CUSTOM: TaxClass.SERVICE,
    Trigger.TIKTOK_LOGIN: TaxClass.PROMOTIONAL,
    Trigger.WHATSAPP_OPTIN: TaxClass.PROMOTIONAL,
    Trigger.LIKE: TaxClass.PROMOTIONAL,
    Trigger.COMMENT: TaxClass.PROMOTIONAL,
    Trigger.REFERRAL: TaxClass.PROMOTIONAL,
    Trigger.PURCHASE: TaxClass.REBATE,
}
# The US: a commission for a referred sale is pay for promoting the brand's products (non-employee
# compensation), not a gift.
_US = {**_OECD, Trigger.REFERRAL: TaxClass.SERVICE}

_REASONS = {
    (Trigger.UGC_SHARE, "oecd"): _(
        "A video made and published to the brand's brief, at the brand's request, with a licence to "
        "use it: task-based work, a personal service. Reported, whatever the amount."
    ),
    (Trigger.VIEW_THRESHOLD, "oecd"): _(
        "Pay for the reach of a commissioned video: part of what the video's work earns, a personal "
        "service. Reported, whatever the amount."
    ),
    (Trigger.CUSTOM, "oecd"): _(
        "An action the brand's own system defines, which JoyBack cannot see: treated as a personal "
        "service so that nothing reportable goes unreported."
    ),
    (Trigger.TIKTOK_LOGIN, "oecd"): _(
        "A sign-in with an account is no work done for the brand: a promotional gift. Not reported."
    ),
    (Trigger.WHATSAPP_OPTIN, "oecd"): _(
        "Agreeing to receive the brand's messages is a customer's consent, not work: a promotional "
        "gift. Not reported."
    ),
    (Trigger.LIKE, "oecd"): _(
        "A like is a gesture, not work done to a brief: a promotional gift. Not reported."
    ),
    (Trigger.COMMENT, "oecd"): _(
        "A comment is a customer's engagement, with no brief or licence: a promotional gift. Not reported."
    ),
    (Trigger.REFERRAL, "oecd"): _(
        "A reward for a friend's order through one's code is a customer's referral bonus, not a "
        "service a platform user asked for: a promotional gift. Not reported."
    ),
    (Trigger.PURCHASE, "oecd"): _(
        "Cashback returns part of the price the person paid: a rebate that lowers their purchase. "
        "Not reported."
    ),
    (Trigger.REFERRAL, "us"): _(
        "A commission on sales one's code brought is pay for promoting the brand's products: "
        "non-employee compensation, reported on a 1099-NEC above the year's threshold."
    ),
}

# version -> {country or "*": {trigger: class}}. "2026-1" is the first; rewards booked before the
# tax columns existed are read under it (verification migration 0023 left them blank).
TABLES: dict[str, dict[str, dict[str, str]]] = {
    "2026-1": {"*": _OECD, "US": _US},
}
CURRENT = "2026-1"
# The launch check's code for a rule's tax class: a statement, never a problem that blocks.
TAX_STATEMENT = "tax_class"


@dataclass(frozen=True)
class TaxJudgement:
    tax_class: str
    country: str
    version: str

    @property
    def reportable(self) -> bool:
        return self.tax_class in TaxClass.REPORTABLE


def tax_class_for(*, trigger: str, country: str, version: str = CURRENT) -> str:
    """The class of a reward kind in a country under a table's version."""
    table = TABLES[version]
    return (table.get(country.upper()) or table["*"])[trigger]


def tax_reason_for(*, trigger: str, country: str) -> str:
    """Why: the reasoning behind tax_class_for, in the active language."""
    group = "us" if country.upper() == "US" and (trigger, "us") in _REASONS else "oecd"
    return str(_REASONS[(trigger, group)])


def campaign_tax_countries(campaign: Campaign) -> list[str]:
    """The countries a campaign's rewards are judged for: those it serves, else its brand's country;
    with neither, every reporting country (so the strictest reading applies)."""
    countries = [c.upper() for c in campaign.countries or [] if isinstance(c, str) and c.strip()]
    if not countries and campaign.brand.country:
        countries = [campaign.brand.country.upper()]
    return countries or sorted(REPORTING_COUNTRIES)


def reward_tax_judge(*, trigger: str, countries: list[str], version: str = CURRENT) -> TaxJudgement:
    """The class a reward of this kind is booked under, and the country it was judged for: where the
    campaign serves several countries whose readings differ, the strictest (a service before a gift
    before a rebate), so a reward reportable anywhere it was offered is never booked as not."""
    judged = [(tax_class_for(trigger=trigger, country=c, version=version), c) for c in countries]
    tax_class, country = min(judged, key=lambda pair: (TaxClass.ORDER.index(pair[0]), pair[1]))
    return TaxJudgement(tax_class=tax_class, country=country, version=version)


def campaign_reward_judge(*, campaign: Campaign, trigger: str) -> TaxJudgement:
    return reward_tax_judge(trigger=trigger, countries=campaign_tax_countries(campaign))


def campaign_tax_check(*, campaign: Campaign, launching: bool = False) -> list[LaunchProblem]:
    """Each rule's tax class as the campaign page's launch check states it, beside the problems of
    CAMPAIGN_LAUNCH_CHECKS (never blocking, so kept out of them): what the person will be asked
    for, decided before the first reward rather than discovered in January."""
    problems = []
    for rule in campaign.rules.all():
        judgement = campaign_reward_judge(campaign=campaign, trigger=rule.trigger)
        label = TaxClass.LABELS[judgement.tax_class]
        asked = (
            _("People give their tax details before this reward is paid out.")
            if judgement.reportable
            else _("Nothing more is asked of people for it.")
        )
        problems.append(
            LaunchProblem(
                code=TAX_STATEMENT,
                message=_("%(step)s: %(class)s (%(country)s). %(reason)s %(asked)s")
                % {
                    "step": rule.get_trigger_display(),
                    "class": label,
                    "country": judgement.country,
                    "reason": tax_reason_for(trigger=rule.trigger, country=judgement.country),
                    "asked": asked,
                },
                blocking=False,
                rule_id=rule.pk,
            )
        )
    return problems
