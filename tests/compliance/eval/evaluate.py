"""The labelled evaluation set, run as the claim flow runs the checker and the launch the linter.

captions.csv: a caption, the campaign's countries and language, whether the campaign is a contest,
the verdict it must get and why (with the rule it comes from). rules.csv: a campaign rule's
instructions, whether it must be blocked, and why. The checker is called as a claim calls it:
TikTok cannot report its paid-partnership label, so `label_on` is unknown; the brand is "Alpaca
Coffee", configured with its other name and handle (`BRAND_NAMES`).

Agreement is the share of rows whose verdict is the expected one; an unsafe pass is a caption that
must fail judged compliant, or a rule that must be blocked allowed.
"""

import csv
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

HERE = Path(__file__).parent
BRAND = "Alpaca Coffee"
BRAND_NAMES = ("Alpaca Café", "@drinkalpaca", "羊驼咖啡")


def rows(name: str) -> list[dict]:
    with open(HERE / name, newline="", encoding="utf-8") as source:
        return list(csv.DictReader(source))


@dataclass
class Result:
    total: int = 0
    agreed: int = 0
    unsafe: list = field(default_factory=list)
    wrong: list = field(default_factory=list)
    timings_ms: list = field(default_factory=list)

    @property
    def agreement(self) -> float:
        return 100.0 * self.agreed / self.total if self.total else 0.0


def _policies():
    from compliance.checker import compiled, policies_from_source

    return [compiled(code=p["code"], version=1, data=p) for p in policies_from_source()]


def captions_evaluate(policies=None) -> Result:
    from compliance.checker import COMPLIANT, caption_check, policies_for_countries

    policies = policies or _policies()
    result = Result()
    clock = time.perf_counter
    for row in rows("captions.csv"):
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
        if verdict.verdict == row["expect"]:
            result.agreed += 1
        else:
            result.wrong.append(
                (row["caption"], row["countries"], row["expect"], verdict.verdict, verdict.reasons)
            )
            if verdict.verdict == COMPLIANT:
                result.unsafe.append(row)
    return result


def rules_evaluate(policies=None) -> Result:
    from compliance.checker import policies_for_countries
    from compliance.linter import rules_lint

    policies = policies or _policies()
    result = Result()
    for row in rows("rules.csv"):
        rule = SimpleNamespace(
            pk=None,
            instructions=row["text"],
            trigger="ugc_share",
            min_likes=0,
            min_comments=0,
            verification_mode="engagement",
            get_trigger_display=lambda: "UGC share",
        )
        findings = rules_lint([rule], policies_for_countries(policies, row["countries"].split(",")))
        blocked = any(finding.blocking for finding in findings)
        result.total += 1
        if blocked == (row["expect"] == "block"):
            result.agreed += 1
        else:
            result.wrong.append((row["text"], row["expect"], [f.code for f in findings]))
            if not blocked:
                result.unsafe.append(row)
    return result


def percentile(values, share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0
