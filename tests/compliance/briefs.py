"""A brief as a brand writes it, linted as its launch lints it, for the tests of what a brief may say."""

from types import SimpleNamespace

from compliance.checker import compiled, policies_for_countries, policies_from_source
from compliance.linter import rules_lint

POLICIES = [compiled(code=p["code"], version=1, data=p) for p in policies_from_source()]
WHERE = {"en": "US", "de": "DE", "es": "ES", "zh-hans": "CN"}


def brief_findings(text: str, language: str, *, brand: str = "Bergkaffee", other_names: tuple = ()) -> list:
    rule = SimpleNamespace(
        pk=None,
        instructions=text,
        trigger="ugc_share",
        min_likes=0,
        min_comments=0,
        verification_mode="engagement",
        get_trigger_display=lambda: "UGC share",
        campaign=SimpleNamespace(brand=SimpleNamespace(name=brand, sponsor_names=other_names)),
        brief={},
    )
    return rules_lint([rule], policies_for_countries(POLICIES, [WHERE[language]]))


def brief_outcome(text: str, language: str, *, other_names: tuple = ()) -> str:
    """'block' (refused), 'review' (only JoyBack's review stands before launch) or 'allow'."""
    findings = brief_findings(text, language, other_names=other_names)
    codes = {finding.code for finding in findings if finding.blocking}
    if codes - {"instructions_review"}:
        return "block"
    return "review" if codes else "allow"
