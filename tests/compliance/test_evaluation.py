"""The labelled evaluation set (tests/compliance/eval/) as a test: any caption that must fail judged
compliant, any rule that must be blocked allowed, or agreement below the target fails the build."""

import pytest

from tests.compliance.eval.evaluate import captions_evaluate, rows, rules_evaluate

AGREEMENT_TARGET = 97.0
LANGUAGES = {"en", "de", "es", "zh-hans"}


def test_the_set_is_large_and_covers_every_language_and_the_failure_kinds():
    captions, rules = rows("captions.csv"), rows("rules.csv")

    assert len(captions) >= 400 and len(rules) >= 150
    assert {row["language"] for row in captions} == LANGUAGES == {row["language"] for row in rules}
    assert all(row["why"] and row["source"] and row["expect"] for row in captions + rules)
    kinds = {(row["kind"], row["language"]) for row in captions + rules}
    for kind in ("inside_word", "other_sponsor", "names_brand", "recommend_conditioned", "fake_engagement"):
        assert {language for k, language in kinds if k == kind} == LANGUAGES, kind


def test_no_caption_that_must_fail_passes_and_agreement_meets_the_target():
    result = captions_evaluate()

    assert result.unsafe == []
    assert result.agreement >= AGREEMENT_TARGET, result.wrong


def test_no_rule_that_must_be_blocked_is_allowed_and_agreement_meets_the_target():
    result = rules_evaluate()

    assert result.unsafe == []
    assert result.agreement >= AGREEMENT_TARGET, result.wrong


@pytest.mark.parametrize("evaluate", [captions_evaluate, rules_evaluate])
def test_a_checker_that_passes_everything_would_fail_the_evaluation(monkeypatch, evaluate):
    # The evaluation can fail: with every check answering "fine", unsafe passes appear.
    monkeypatch.setattr("compliance.checker._findings", lambda *args, **kwargs: ([], []))
    monkeypatch.setattr("compliance.linter.rules_lint", lambda rules, policies: [])

    assert evaluate().unsafe
