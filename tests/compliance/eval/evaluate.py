"""The labelled evaluation sets, run as the claim flow runs the checker and the launch the linter.

captions*.csv: a caption, the campaign's countries and language, whether the campaign is a contest,
the verdict it must get and why (with the rule it comes from). rules*.csv: a campaign rule's
instructions, whether it must be blocked, and why. The checker is called as a claim calls it:
TikTok cannot report its paid-partnership label, so `label_on` is unknown; the brand is "Alpaca
Coffee", configured with its other name and handle (`BRAND_NAMES`).

Two sets, scored apart and together (`PARTS`): the one written beside the checker (`captions.csv`,
`rules.csv`, "own") and the blind one in `blind/`, written by a reviewer who never read the checker
(its README says how), in a dev half and a holdout half, a second blind set in `blind_fresh/`,
written by another reviewer in the same way and added after the checker's last change, a third in
`blind_fresh2/` by a third reviewer, split by alternate rows into a dev half (read) and a holdout half
(only its numbers), a fourth in `blind_fresh3/`, split the same way, and a fifth in `blind_fresh4/`
(captions by one more reviewer, briefs by two more in two registers), split the same way.

Scoring, the same for every part:
- agreement: the verdict is exactly the expected one. `needs_review` for an expected `non_compliant`
  (and a rule sent to review that must be blocked) is safe but counts as a disagreement.
- unsafe pass: a caption that must not be paid (expected `non_compliant` or `needs_review`) judged
  `compliant`, or a rule that must be blocked allowed.
- safe rate: the share of rows that are not unsafe passes.
- review cost: the share of rows expected `compliant` (rules: `allow`) that went to review instead.
- wrongly refused: the share of those refused instead (`non_compliant`, a rule blocked).
- decided alone: the share of rows JoyBack decided without a person (any verdict but review), and
  the agreement among those: how often the automatic verdict is right when there is one.
"""

import csv
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from compliance.checker import (
    COMPLIANT,
    NEEDS_REVIEW,
    NON_COMPLIANT,
    caption_check,
    compiled,
    policies_for_countries,
    policies_from_source,
)
from compliance.linter import rules_lint

HERE = Path(__file__).parent
BRAND = "Alpaca Coffee"
BRAND_NAMES = ("Alpaca Café", "@drinkalpaca", "羊驼咖啡")
# Part -> (caption files, rule files), relative to HERE. A blind file not (yet) there is skipped.
PARTS = {
    "own": (("captions.csv",), ("rules.csv",)),
    "blind_dev": (("blind/captions_dev.csv",), ("blind/rules_dev.csv",)),
    "blind_holdout": (("blind/captions_holdout.csv",), ("blind/rules_holdout.csv",)),
    # A second blind set by another reviewer, added when the checker's last change was done: nothing
    # was tuned on it (blind_fresh/README.md).
    "blind_fresh": (("blind_fresh/captions.csv",), ("blind_fresh/rules.csv",)),
    # A third reviewer's set, added later and split by alternate rows (blind_fresh2/README.md): the dev
    # half's disagreements may be read, the holdout half's only counted.
    "blind_dev2": (("blind_fresh2/captions_dev.csv",), ("blind_fresh2/rules_dev.csv",)),
    "blind_holdout2": (("blind_fresh2/captions_holdout.csv",), ("blind_fresh2/rules_holdout.csv",)),
    # A fourth reviewer's set, written blind from the third's conventions and split the same way
    # (blind_fresh3/README.md).
    "blind_dev3": (("blind_fresh3/captions_dev.csv",), ("blind_fresh3/rules_dev.csv",)),
    "blind_holdout3": (("blind_fresh3/captions_holdout.csv",), ("blind_fresh3/rules_holdout.csv",)),
    # A fifth set, by three more reviewers (one for the captions, two for the briefs, in two
    # registers), written blind from the same conventions and split the same way (blind_fresh4/README.md).
    "blind_dev4": (
        ("blind_fresh4/captions_dev.csv",),
        ("blind_fresh4/rules_a_dev.csv", "blind_fresh4/rules_b_dev.csv"),
    ),
    "blind_holdout4": (
        ("blind_fresh4/captions_holdout.csv",),
        ("blind_fresh4/rules_a_holdout.csv", "blind_fresh4/rules_b_holdout.csv"),
    ),
}
_BLIND = (
    "blind_dev",
    "blind_holdout",
    "blind_fresh",
    "blind_dev2",
    "blind_holdout2",
    "blind_dev3",
    "blind_holdout3",
    "blind_dev4",
    "blind_holdout4",
)
# The parts whose rows are only counted, never shown (a failure names how many, not which).
UNSEEN = ("blind_holdout", "blind_fresh", "blind_holdout2", "blind_holdout3", "blind_holdout4")
PARTS["blind"] = tuple(tuple(name for part in _BLIND for name in PARTS[part][kind]) for kind in (0, 1))
# The parts nothing was ever tuned on by reading them, together: the honest measure of a stranger's set.
PARTS["unseen"] = tuple(tuple(name for part in UNSEEN for name in PARTS[part][kind]) for kind in (0, 1))
PARTS["whole"] = tuple(PARTS["own"][kind] + PARTS["blind"][kind] for kind in (0, 1))


def rows(*names: str) -> list[dict]:
    found = []
    for name in names:
        if (HERE / name).exists():
            with open(HERE / name, newline="", encoding="utf-8") as source:
                found += list(csv.DictReader(source))
    return found


def blind_present() -> bool:
    return all((HERE / name).exists() for names in PARTS["blind"] for name in names)


@dataclass
class Result:
    total: int = 0
    agreed: int = 0
    unsafe: list = field(default_factory=list)
    wrong: list = field(default_factory=list)
    timings_ms: list = field(default_factory=list)
    expected_fine: int = 0  # rows expected compliant / allow
    reviewed_fine: int = 0  # ... of which went to review
    refused_fine: int = 0  # ... of which were refused (non_compliant / blocked)
    decided: int = 0  # rows given any verdict but review
    decided_agreed: int = 0  # ... of which agree

    @property
    def agreement(self) -> float:
        return 100.0 * self.agreed / self.total if self.total else 0.0

    @property
    def safe_rate(self) -> float:
        return 100.0 * (self.total - len(self.unsafe)) / self.total if self.total else 0.0

    @property
    def review_cost(self) -> float:
        return 100.0 * self.reviewed_fine / self.expected_fine if self.expected_fine else 0.0

    @property
    def refused_rate(self) -> float:
        return 100.0 * self.refused_fine / self.expected_fine if self.expected_fine else 0.0

    @property
    def decided_rate(self) -> float:
        return 100.0 * self.decided / self.total if self.total else 0.0

    @property
    def decided_agreement(self) -> float:
        return 100.0 * self.decided_agreed / self.decided if self.decided else 0.0

    def summary(self) -> str:
        return (
            f"{self.agreed}/{self.total} agree ({self.agreement:.1f} %), {len(self.unsafe)} unsafe passes, "
            f"safe {self.safe_rate:.1f} %, review cost {self.reviewed_fine}/{self.expected_fine} "
            f"({self.review_cost:.1f} %), wrongly refused {self.refused_fine}/{self.expected_fine} "
            f"({self.refused_rate:.1f} %), decided alone {self.decided}/{self.total} "
            f"({self.decided_rate:.1f} %), of which agree {self.decided_agreed} "
            f"({self.decided_agreement:.1f} %)"
        )


def _policies():
    return [compiled(code=p["code"], version=1, data=p) for p in policies_from_source()]


def captions_evaluate(policies=None, *, part: str = "own") -> Result:
    policies = policies or _policies()
    result = Result()
    clock = time.perf_counter
    for row in rows(*PARTS[part][0]):
        in_force = policies_for_countries(policies, row["countries"].split(","))
        arguments = dict(
            policies=in_force,
            platform=row["platform"],
            languages=[row["language"]],
            brand=BRAND,
            brand_names=BRAND_NAMES,
            label_on=None,
            contest=row["contest"] == "yes",
        )
        caption_check(row["caption"], **arguments)  # the first check of a campaign compiles its patterns
        start = clock()
        verdict = caption_check(row["caption"], **arguments)
        result.timings_ms.append((clock() - start) * 1000)
        result.total += 1
        if row["expect"] == COMPLIANT:
            result.expected_fine += 1
            result.reviewed_fine += verdict.verdict == NEEDS_REVIEW
            result.refused_fine += verdict.verdict == NON_COMPLIANT
        if verdict.verdict != NEEDS_REVIEW:
            result.decided += 1
            result.decided_agreed += verdict.verdict == row["expect"]
        if verdict.verdict == row["expect"]:
            result.agreed += 1
        else:
            result.wrong.append(
                (row["caption"], row["countries"], row["expect"], verdict.verdict, verdict.reasons)
            )
            if verdict.verdict == COMPLIANT:
                result.unsafe.append(row)
    return result


def rule_outcome(findings) -> str:
    """'block' (a blocking finding), 'review' (only JoyBack's review stands before launch), 'allow'."""
    blocking = {finding.code for finding in findings if finding.blocking}
    if blocking - {"instructions_review"}:
        return "block"
    return "review" if blocking else "allow"


def rules_evaluate(policies=None, *, part: str = "own") -> Result:
    policies = policies or _policies()
    result = Result()
    for row in rows(*PARTS[part][1]):
        rule = SimpleNamespace(
            pk=None,
            instructions=row["text"],
            trigger="ugc_share",
            min_likes=0,
            min_comments=0,
            verification_mode="engagement",
            get_trigger_display=lambda: "UGC share",
            campaign=SimpleNamespace(brand=SimpleNamespace(name=BRAND, sponsor_names=BRAND_NAMES)),
        )
        findings = rules_lint([rule], policies_for_countries(policies, row["countries"].split(",")))
        outcome = rule_outcome(findings)
        result.total += 1
        if row["expect"] == "allow":
            result.expected_fine += 1
            result.reviewed_fine += outcome == "review"
            result.refused_fine += outcome == "block"
        if outcome != "review":
            result.decided += 1
            result.decided_agreed += outcome == row["expect"]
        if outcome == row["expect"]:
            result.agreed += 1
        else:
            result.wrong.append((row["text"], row["expect"], outcome, [f.code for f in findings]))
            if outcome == "allow":
                result.unsafe.append(row)
    return result


def report(part: str, policies=None) -> tuple[Result, Result]:
    policies = policies or _policies()
    return captions_evaluate(policies, part=part), rules_evaluate(policies, part=part)


def percentile(values, share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0
