"""Rewards by reach: what a shared video has earned by its views, and how a brand writes the tiers.

A tier's amount is what a video has earned in all once it has that many views (1.00 at 1,000 views,
5.00 at 10,000: a video at 12,000 views has earned 5.00). A rate per thousand views adds to the tier
reached. Either way a video never earns more than the rule's reward_amount, its cap per video.
"""

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from itertools import pairwise

from django.utils.translation import gettext as _

from joyback.money import minor_units_check

TIERS_MAX = 10


class TiersInvalid(ValueError):
    """Tiers a brand typed that cannot be paid as written; the message says which line and why."""


def reach_value(*, rule, views: int) -> int:
    """Minor units a video with `views` views has earned under `rule`, capped per video."""
    if views <= 0:
        return 0
    value = 0
    for threshold, amount in rule.reach_tiers or []:
        if views >= threshold:
            value = max(value, amount)
    if rule.reach_per_thousand:
        value += (views // 1000) * rule.reach_per_thousand
    return min(value, rule.reward_amount)


def reach_tiers_parse(text: str, *, exponent: int = 2) -> list[list[int]]:
    """ "1000 = 1.00" per line (or separated by ";") -> [[1000, 100]]; views ascending, amounts too."""
    tiers = []
    for number, line in enumerate(part.strip() for part in re.split(r"[;\n]", text or "")):
        if not line:
            continue
        match = re.fullmatch(r"([\d.,_ ]+?)\s*(?:views?)?\s*[=:→>-]+\s*([\d.,]+)", line, re.IGNORECASE)
        if match is None:
            raise TiersInvalid(
                _("Line %(line)s: write “views = reward”, for example “1000 = 1.00”.") % {"line": number + 1}
            )
        views_text = re.sub(r"[.,_ ]", "", match.group(1))
        try:
            views = int(views_text)
            amount = Decimal(match.group(2).replace(",", "."))
        except (ValueError, InvalidOperation):
            raise TiersInvalid(_("Line %(line)s: not a number.") % {"line": number + 1}) from None
        minor = int(amount * (10**exponent))
        if views <= 0 or minor <= 0 or minor != amount * (10**exponent):
            raise TiersInvalid(
                _("Line %(line)s: views and reward must be more than zero, the reward in cents.")
                % {"line": number + 1}
            )
        minor_units_check(minor)
        tiers.append([views, minor])
    if len(tiers) > TIERS_MAX:
        raise TiersInvalid(_("At most %(count)s tiers.") % {"count": TIERS_MAX})
    for before, after in pairwise(tiers):
        if after[0] <= before[0] or after[1] <= before[1]:
            raise TiersInvalid(_("Each tier needs more views and a higher reward than the one before."))
    return tiers


@dataclass(frozen=True)
class ReachTierRow:
    views: int
    value: int
    videos: int  # how many videos reaching (at least) this tier the budget pays


def reach_dry_run(*, rule, budget: int) -> list[ReachTierRow]:
    """Per tier: how many videos at that tier the budget (and the rule's campaign cap) pays for."""
    points = [views for views, _amount in rule.reach_tiers or []]
    if rule.reach_per_thousand:
        # Rates have no tiers: show where the per-video cap is reached, and two points before it.
        at_cap = -(-rule.reward_amount // rule.reach_per_thousand) * 1000
        points += [max(1000, at_cap // 10 // 1000 * 1000), max(1000, at_cap // 2 // 1000 * 1000), at_cap]
    limit = budget if rule.reach_campaign_cap is None else min(budget, rule.reach_campaign_cap)
    rows = []
    for views in sorted(set(points)):
        value = reach_value(rule=rule, views=views)
        if value:
            rows.append(ReachTierRow(views=views, value=value, videos=limit // value))
    return rows


def reach_spend_most(*, rule, budget: int) -> int:
    """The most the rule can spend of `budget`: its campaign cap bounds it."""
    return budget if rule.reach_campaign_cap is None else min(budget, rule.reach_campaign_cap)
