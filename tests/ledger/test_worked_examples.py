"""The ledger read as an accounting textbook: each test is one worked example.

A brand wires 1,000.00 EUR; it funds a campaign with 600.00; a participant earns a 5.00 reward; an
engagement reward is held, then committed in part or voided; a mistaken reward is reversed.
"""

import pytest

from joyback.ledger.models import Entry, HoldStatus
from joyback.ledger.selectors import ledger_drift
from joyback.ledger.services import (
    hold_commit,
    hold_reserve,
    hold_void,
    transaction_reverse,
    transfer_post,
)

pytestmark = pytest.mark.django_db


def balances(*accounts):
    return [type(a).objects.get(pk=a.pk).balance for a in accounts]


def fund(bank, funding, budget):
    transfer_post(source=bank, destination=funding, amount=1000_00, reason="deposit", idempotency_key="dep-1")
    transfer_post(source=funding, destination=budget, amount=600_00, reason="campaign_funding")


def test_a_bank_deposit_debits_the_bank_and_credits_the_brand(bank, funding):
    tx = transfer_post(source=bank, destination=funding, amount=1000_00, reason="deposit")

    entries = {e.account_id: e.amount for e in tx.entries.all()}
    assert entries == {bank.pk: 1000_00, funding.pk: -1000_00}
    assert balances(bank, funding) == [1000_00, 1000_00]
    assert ledger_drift() == []


def test_funding_a_campaign_moves_money_from_funding_to_budget(bank, funding, budget):
    fund(bank, funding, budget)

    assert balances(bank, funding, budget) == [1000_00, 400_00, 600_00]


def test_a_reward_moves_money_from_budget_to_the_participant(bank, funding, budget, payable):
    fund(bank, funding, budget)

    transfer_post(source=budget, destination=payable, amount=5_00, reason="reward")

    assert balances(budget, payable) == [595_00, 5_00]
    assert ledger_drift() == []


def test_a_hold_reserves_then_commits_part_and_releases_the_rest(bank, funding, budget, payable):
    fund(bank, funding, budget)
    hold = hold_reserve(account=budget, amount=10_00, reference="claim:7")
    budget.refresh_from_db()
    assert (budget.balance, budget.held, budget.available) == (600_00, 10_00, 590_00)

    hold_commit(hold=hold, destination=payable, amount=4_00)

    budget.refresh_from_db()
    hold.refresh_from_db()
    assert (budget.balance, budget.held, budget.available) == (596_00, 0, 596_00)
    assert (hold.status, hold.committed_amount) == (HoldStatus.COMMITTED, 4_00)
    assert balances(payable) == [4_00]
    assert ledger_drift() == []


def test_a_voided_hold_gives_the_money_back(bank, funding, budget):
    fund(bank, funding, budget)
    hold = hold_reserve(account=budget, amount=10_00)

    hold_void(hold=hold)

    budget.refresh_from_db()
    assert (budget.balance, budget.held) == (600_00, 0)


def test_a_reversal_is_a_new_transaction_linked_to_the_original(bank, funding, budget, payable):
    fund(bank, funding, budget)
    reward = transfer_post(source=budget, destination=payable, amount=5_00, reason="reward")

    reversal = transaction_reverse(original=reward, reason="clawback")

    assert reversal.reverses_id == reward.pk
    assert balances(budget, payable) == [600_00, 0]
    assert Entry.objects.filter(transaction=reward).count() == 2  # the original is untouched
    assert ledger_drift() == []
