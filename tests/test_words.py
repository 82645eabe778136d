"""Every stored code a person may see has words, in every language: one place says them all."""

import ast
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import translation

from joyback.words import CLAIM, KINDS, NEXT, PAYOUT, PERSON, said, said_to_person
from payouts.models.payouts import PayoutStatus

ROOT = Path(settings.BASE_DIR)


def codes_written(path: str, pattern: str) -> set[str]:
    return set(re.findall(pattern, (ROOT / path).read_text()))


def test_every_fraud_signal_and_claim_reason_the_code_writes_has_words():
    signals = codes_written("verification/fraud.py", r'append\(\s*\(\s*"([a-z_]+)"')
    signals |= codes_written("payouts/payees/shared_details.py", r'"(payee_[a-z]+_shared)"')
    # a referred sale's signals, and the payee details the payouts app compares for them
    signals |= codes_written("verification/referrals.py", r'append\(\s*\(\s*"([a-z_]+)"')
    signals |= codes_written("payouts/payees/shared_details.py", r'"(self_referral_[a-z_]+)"')
    # signals flagged on a participant after the claim (a second account of the same person)
    signals |= codes_written("verification/services/rewards.py", r'participants_flag\(.*"([a-z_]+)"')
    reasons = set()
    for module in sorted(
        [*(ROOT / "verification").glob("*.py"), *(ROOT / "verification/services").glob("*.py")]
    ):
        path = str(module.relative_to(ROOT))
        reasons |= codes_written(path, r'ClaimStatus\.[A-Z_]+, "([a-z_]+)"')
        # a reason chosen by a condition: reason="a" if ... else "b"
        for first, second in re.findall(
            r'(?<![a-z_])reason="([a-z_]+)"(?: if [^,\n]+ else "([a-z_]+)")?', (ROOT / path).read_text()
        ):
            reasons |= {first, second} - {""}
    reasons -= {"reward"}  # a ledger posting's reason, not a claim's

    assert signals and reasons
    assert signals | reasons <= set(CLAIM)


def test_the_payout_history_uses_the_status_badges_words():
    assert {status.value: str(status.label) for status in PayoutStatus} == {
        k: str(v) for k, v in PAYOUT.items()
    }


@pytest.mark.parametrize("language", ["de", "es", "zh-hans"])
def test_the_words_are_translated(language):
    with translation.override("en"):  # whatever language an earlier test left active
        english = {(kind, code): str(text) for kind, words in KINDS.items() for code, text in words.items()}
    with translation.override(language):
        same = [key for key, text in english.items() if said(*key) == text]
    assert same == []


def test_an_unknown_code_stays_visible():
    assert said("claim", "brand_new_code") == "brand_new_code"
    assert said("claim", "") == ""


def test_no_template_shows_a_bare_reason_or_signal_code():
    # (A code as a CSS class or in a data- attribute is fine: a hook nobody reads; a reviewer's own
    # written reason is words already.)
    codes = r"(signal\.code|\.reason|\.verdict|label_state|_status)"
    bare = re.compile(r"(?<!badge )\{\{\s*(?!decision\.reason)[\w.]*" + codes + r"\s*\}\}")
    hooks = re.compile(r'data-[\w-]+="[^"]*"')
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "templates").rglob("*.html")
        if "reconciliation" not in path.parts and bare.search(hooks.sub("", path.read_text()))
    ]
    assert offenders == []


def test_words_module_imports_no_app():
    tree = ast.parse((ROOT / "joyback/words.py").read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported == {"django.utils.translation"}


@pytest.mark.parametrize("language", ["en", "de", "es", "zh-hans"])
def test_every_decision_reason_is_a_sentence_with_a_next_step_for_the_person(language):
    """A person whose claim was decided reads why, and what to do next, in their language: every
    code a claim can store (CLAIM's, proven complete above) has both, never the code itself."""
    assert set(PERSON) == set(CLAIM) == set(NEXT)
    with translation.override("en"):
        english = {code: said_to_person(code) for code in CLAIM}
    with translation.override(language):
        said_here = {code: said_to_person(code) for code in CLAIM}
    for code, (what, next_step) in said_here.items():
        assert what and next_step and what != code, code
        assert what.rstrip().endswith(("。", ".")) and next_step.rstrip().endswith(("。", ".")), code
        if language != "en":
            assert (what, next_step) != english[code] and what != english[code][0], code


def test_every_label_state_the_code_writes_has_words():
    from joyback.words import LABEL
    from verification.posting import LABEL as POSTED

    written = {POSTED, "attested_on", "not_attested", "unknown"}
    assert written <= set(LABEL)
