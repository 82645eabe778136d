"""The campaign-rule linter: a rule may not buy a sentiment or fake engagement.

16 CFR 465 (US, in force October 2024) forbids conditioning an incentive, expressly or by
implication, on a particular sentiment, and buying fake engagement; the UCPD and the ASA say the
same of fake reviews. The patterns are policy data (every language of every policy in force is
searched: a rule written in Spanish for a German campaign is still a rule), so a lawyer can
tighten them without a release.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.translation import gettext as _

from compliance.checker import CompiledPolicy, _term_pattern, normalize

# Triggers whose reward depends on counts other people give the person's own post.
OWN_POST_TRIGGERS = frozenset({"ugc_share", "view_threshold"})


@dataclass(frozen=True)
class Finding:
    code: str
    blocking: bool
    rule_id: int | None
    message: str


_COMPILED: dict[tuple, dict] = {}


def _patterns(policies: Sequence[CompiledPolicy]) -> dict:
    key = tuple(policy.label for policy in policies)
    found = _COMPILED.get(key)
    if found is None:
        found = {"sentiment": [], "fake_engagement": [], "contest": []}
        contest_terms = []
        for policy in policies:
            for table in policy.data.get("languages", {}).values():
                for kind in ("sentiment", "fake_engagement"):
                    found[kind] += [re.compile(pattern) for pattern in table.get(kind, [])]
                contest_terms += table.get("contest", []) + table.get("contest_unclear", [])
        found["contest"] = _term_pattern(contest_terms)
        _COMPILED[key] = found
    return found


def _first_match(patterns, text: str) -> str | None:
    for pattern in patterns:
        match = pattern.search(text)
        if match:
            return match.group(0)
    return None


def is_contest(rules, policies: Sequence[CompiledPolicy]) -> bool:
    """A rule that mentions winning or a draw makes the campaign a contest (its wording says so)."""
    pattern = _patterns(policies)["contest"]
    return bool(pattern) and any(pattern.search(normalize(rule.instructions)) for rule in rules)


def rules_lint(rules, policies: Sequence[CompiledPolicy]) -> list[Finding]:
    patterns = _patterns(policies)
    findings = []
    for rule in rules:
        name = rule.get_trigger_display()
        text = normalize(rule.instructions)
        said = _first_match(patterns["sentiment"], text) if text else None
        if said:
            findings.append(
                Finding(
                    "sentiment_conditioned",
                    True,
                    rule.pk,
                    _(
                        "Rule “%(rule)s” conditions the reward on a sentiment (“%(said)s”). An incentive may "
                        "never depend on a positive opinion (FTC 16 CFR 465, EU UCPD): ask for an honest "
                        "post instead."
                    )
                    % {"rule": name, "said": said},
                )
            )
        bought = _first_match(patterns["fake_engagement"], text) if text else None
        if bought:
            findings.append(
                Finding(
                    "fake_engagement",
                    True,
                    rule.pk,
                    _(
                        "Rule “%(rule)s” asks for fake or bought engagement (“%(said)s”), which is banned "
                        "(FTC 16 CFR 465.8)."
                    )
                    % {"rule": name, "said": bought},
                )
            )
        counts_others = rule.min_likes or rule.min_comments or rule.trigger == "view_threshold"
        if rule.trigger in OWN_POST_TRIGGERS and counts_others:
            if rule.verification_mode == "instant":
                findings.append(
                    Finding(
                        "unchecked_engagement",
                        True,
                        rule.pk,
                        _(
                            "Rule “%(rule)s” pays for likes, comments or views others give the person's "
                            "own post with no window to check they are real: that buys engagement. Use "
                            "verification after an engagement window."
                        )
                        % {"rule": name},
                    )
                )
            elif rule.min_likes or rule.min_comments:
                findings.append(
                    Finding(
                        "engagement_threshold",
                        False,
                        rule.pk,
                        _(
                            "Rule “%(rule)s” pays on likes or comments others give the person's post. "
                            "Bought engagement is filtered before paying, but tell people not to buy or "
                            "swap likes."
                        )
                        % {"rule": name},
                    )
                )
        if text and "review" in text and not said:
            findings.append(
                Finding(
                    "review_incentive",
                    False,
                    rule.pk,
                    _(
                        "Rule “%(rule)s” rewards a review: any opinion must earn it, and the review must "
                        "say it was rewarded."
                    )
                    % {"rule": name},
                )
            )
    return findings
