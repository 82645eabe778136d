"""Where payouts code does what: ledger accounts only through the ledger (its SQL in payouts/sql.py:
tests/test_code_homes.py, for every app)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# A ledger account found by its raw fields, made, or row-locked by payouts code itself.
LEDGER_BY_HAND = re.compile(r"\bAccount\.objects\.(select_for_update|get_or_create|filter\(\s*kind=)")


def _payouts_code():
    for path in sorted((ROOT / "payouts").rglob("*.py")):
        if "migrations" not in path.parts:
            yield path.relative_to(ROOT).as_posix(), path.read_text()


def test_payouts_reach_ledger_accounts_through_the_ledgers_selectors_and_services():
    by_hand = [name for name, text in _payouts_code() if LEDGER_BY_HAND.search(text)]

    assert by_hand == []
