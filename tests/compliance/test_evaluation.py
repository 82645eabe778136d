"""The labelled evaluation sets (tests/compliance/eval/) as a test, each part on its own: the set
written beside the checker ("own") and the blind set a reviewer wrote without seeing the checker,
in its dev and holdout halves. A caption that must not be paid judged compliant, or a rule that
must be blocked allowed, fails the build; so does agreement below the part's floor, or fail-closed
review taking more than its share of what is fine (see evaluate.py for the scoring)."""

import pytest

from compliance.reading import UNKNOWN, Reading
from tests.compliance.eval.evaluate import (
    HERE,
    UNSEEN,
    blind_present,
    captions_evaluate,
    rows,
    rules_evaluate,
)

LANGUAGES = {"en", "de", "es", "zh-hans"}
# (part, captions agreement floor, rules agreement floor, most review cost of captions, of rules), %.
# The holdout's rules floor is low on purpose: free text beyond what the linter understands goes to
# JoyBack's review before launch, and a rule expected "allow" (or "block") that goes there counts as
# a disagreement. The dev half's floor is high because its kinds were read (docs/disclosure-checking.md).
FLOORS = [
    ("own", 96.0, 83.0, 10.0, 40.0),
    ("blind_dev", 97.0, 98.0, 10.0, 10.0),
    ("blind_holdout", 94.0, 85.5, 10.0, 28.5),
    # Never read, only measured: its floor is what the checker holds, so a change that loses any of
    # it shows (docs/disclosure-checking.md).
    ("blind_fresh", 93.0, 86.5, 8.0, 25.5),
    # A third reviewer's set, split by alternate rows (blind_fresh2/README.md). Its holdout half is
    # only counted; both floors are what the checker holds, so a change that loses any of it shows.
    ("blind_dev2", 98.0, 97.0, 3.0, 6.5),
    ("blind_holdout2", 88.0, 83.5, 12.5, 24.5),
    # A fourth reviewer's set (blind_fresh3/README.md), split the same way; floors as for the third.
    ("blind_dev3", 97.5, 94.0, 5.5, 12.0),
    ("blind_holdout3", 92.5, 60.5, 8.5, 42.5),
    # A fifth set (blind_fresh4/README.md): captions by one more reviewer, briefs by two more in two
    # registers (long agency briefs, chat messages) the linter had never met. Floors as it stands. Its
    # review cost rose when lawful look-alikes stopped being refused: they go to a person instead.
    # Some rules floors fell, and their review costs rose, when a sentence
    # naming the disclosure had to say only where and how it stands: what else it says goes to a
    # person (docs/disclosure-checking.md, "A disclosure may be asked for only plainly"). Lawful
    # look-alikes no longer refused (a time of day, "kein Problem", the fee the same whatever the
    # score) wait for a person, and so does a question about the disclosure not answered by a bare yes.
    ("blind_dev4", 93.5, 54.5, 5.0, 80.5),
    ("blind_holdout4", 98.0, 44.5, 0.5, 72.0),
]
blind = pytest.mark.skipif(not blind_present(), reason="the blind set is not in tests/compliance/eval/blind/")


def test_the_set_is_large_and_covers_every_language_and_the_failure_kinds():
    captions, rules = rows("captions.csv"), rows("rules.csv")

    assert len(captions) >= 400 and len(rules) >= 150
    assert {row["language"] for row in captions} == LANGUAGES == {row["language"] for row in rules}
    assert all(row["why"] and row["source"] and row["expect"] for row in captions + rules)
    kinds = {(row["kind"], row["language"]) for row in captions + rules}
    for kind in ("inside_word", "other_sponsor", "names_brand", "recommend_conditioned", "fake_engagement"):
        assert {language for k, language in kinds if k == kind} == LANGUAGES, kind


@blind
def test_the_blind_set_keeps_its_provenance_and_both_halves():
    dev, holdout = rows("blind/captions_dev.csv"), rows("blind/captions_holdout.csv")

    assert len(dev) >= 150 and len(holdout) >= 150 and len(rows("blind/rules_holdout.csv")) >= 80
    assert "was given only the governing policies" in (HERE / "blind" / "README.md").read_text("utf-8")


def _parts():
    return [pytest.param(*floor, marks=blind) if floor[0] != "own" else floor for floor in FLOORS]


@pytest.mark.parametrize(("part", "captions_floor", "rules_floor", "captions_cost", "rules_cost"), _parts())
def test_no_caption_that_must_not_be_paid_passes_in_any_part(
    part, captions_floor, rules_floor, captions_cost, rules_cost
):
    result = captions_evaluate(part=part)
    # The holdouts' rows are not read, only their numbers: a failure names how many, not which (and
    # compares plain numbers, so that the assertion's report cannot show the result's rows).
    unsafe = (
        [(r["caption"], r["expect"]) for r in result.unsafe] if part not in UNSEEN else len(result.unsafe)
    )
    agreement, cost, summary = result.agreement, result.review_cost, result.summary()

    assert not unsafe, summary if part in UNSEEN else unsafe
    assert agreement >= captions_floor, summary
    assert cost <= captions_cost, summary


@pytest.mark.parametrize(("part", "captions_floor", "rules_floor", "captions_cost", "rules_cost"), _parts())
def test_no_rule_that_must_be_blocked_is_allowed_in_any_part(
    part, captions_floor, rules_floor, captions_cost, rules_cost
):
    result = rules_evaluate(part=part)
    unsafe = result.unsafe if part not in UNSEEN else len(result.unsafe)
    agreement, cost, summary = result.agreement, result.review_cost, result.summary()

    assert not unsafe, summary if part in UNSEEN else unsafe
    assert agreement >= rules_floor, summary
    assert cost <= rules_cost, summary


@pytest.mark.parametrize("evaluate", [captions_evaluate, rules_evaluate])
def test_a_checker_that_passes_everything_would_fail_the_evaluation(monkeypatch, evaluate):
    # The evaluation can fail: with every check answering "fine", unsafe passes appear.
    monkeypatch.setattr("compliance.checker._findings", lambda *args, **kwargs: ([], []))
    monkeypatch.setattr("tests.compliance.eval.evaluate.rules_lint", lambda rules, policies, **kwargs: [])

    assert evaluate().unsafe


def test_a_linter_that_sends_everything_to_review_would_fail_on_its_cost(monkeypatch):
    # Fail closed has a price, and the floor holds it: reviewing every rule costs every allowed one.
    monkeypatch.setattr(
        "compliance.linter.sentences_read",
        lambda text, patterns, names=(): [(text, Reading(UNKNOWN))] if text else [],
    )
    monkeypatch.setattr("compliance.linter._COMPILED", {})  # and nothing read before it is kept

    result = rules_evaluate()

    assert result.review_cost > FLOORS[0][4]
