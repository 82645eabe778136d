"""What a person was paid for reportable rewards: the bank's confirmations decide, a return takes
the money back out (in the quarter of the return), and whatever happens the counted money never
exceeds what the rewards were, and equals it once every payout settled."""

import datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from payouts.taxreports.amounts import RETURNED, SETTLED, PayoutMove, Reward, paid_pieces, year_totals

UTC = datetime.UTC
DAC7 = "dac7"


def at(month, day=1):
    return datetime.datetime(2026, month, day, 12, tzinfo=UTC)


def reward(id, amount, month, reportable=(DAC7,), person="p"):
    return Reward(person, id, amount, "EUR", at(month), frozenset(reportable))


def move(id, amount, month, kind=SETTLED, person="p", day=2):
    return PayoutMove(person, id, amount, "EUR", at(month, day), kind)


def test_only_the_reportable_share_of_a_settled_payout_counts_in_its_quarter():
    rewards = [reward(1, 10_00, 1), reward(2, 5_00, 1, reportable=()), reward(3, 7_50, 4)]
    moves = [move(100, 15_00, 2), move(101, 7_50, 5)]
    totals = year_totals(pieces=paid_pieces(rewards=rewards, moves=moves), year=2026, jurisdiction=DAC7)
    person = totals[("p", "EUR")]
    assert person.consideration == [10_00, 7_50, 0, 0]
    assert person.activities == [1, 1, 0, 0]


def test_a_returned_payout_is_deducted_in_the_quarter_it_came_back_and_counted_when_repaid():
    rewards = [reward(1, 10_00, 1)]
    moves = [move(100, 10_00, 3, day=30), move(100, 10_00, 4, kind=RETURNED), move(101, 10_00, 8)]
    totals = year_totals(pieces=paid_pieces(rewards=rewards, moves=moves), year=2026, jurisdiction=DAC7)
    assert totals[("p", "EUR")].consideration == [10_00, -10_00, 10_00, 0]
    assert totals[("p", "EUR")].total == 10_00


def test_money_paid_beyond_the_rewards_is_no_reward():
    totals = year_totals(
        pieces=paid_pieces(rewards=[reward(1, 3_00, 1)], moves=[move(100, 50_00, 2)]),
        year=2026,
        jurisdiction=DAC7,
    )
    assert totals[("p", "EUR")].total == 3_00


def test_a_payout_settled_last_year_counts_last_year():
    rewards = [Reward("p", 1, 10_00, "EUR", datetime.datetime(2025, 12, 1, tzinfo=UTC), frozenset({DAC7}))]
    moves = [PayoutMove("p", 100, 10_00, "EUR", datetime.datetime(2025, 12, 31, 23, tzinfo=UTC), SETTLED)]
    pieces = paid_pieces(rewards=rewards, moves=moves)
    assert year_totals(pieces=pieces, year=2026, jurisdiction=DAC7) == {}
    assert year_totals(pieces=pieces, year=2025, jurisdiction=DAC7)[("p", "EUR")].total == 10_00


@st.composite
def histories(draw):
    """Rewards over the year; payouts each paying the balance then due, some of them returned."""
    count = draw(st.integers(min_value=0, max_value=12))
    rewards = [
        reward(
            i,
            draw(st.integers(min_value=1, max_value=50_000)),
            draw(st.integers(1, 12)),
            reportable=draw(st.sampled_from([(DAC7,), (), (DAC7, "uk")])),
        )
        for i in range(count)
    ]
    moves, paid, payout_id = [], 0, 100
    for month in range(1, 13):
        due = sum(r.amount for r in rewards if r.at.month <= month) - paid
        if due > 0 and draw(st.booleans()):
            moves.append(move(payout_id, due, month, day=20))
            if draw(st.integers(0, 4)) == 0:
                moves.append(move(payout_id, due, month, kind=RETURNED, day=25))
            else:
                paid += due
            payout_id += 1
    return rewards, moves, paid


@settings(max_examples=200, deadline=None)
@given(histories())
def test_the_report_never_counts_more_than_was_rewarded_and_all_of_it_once_paid(history):
    rewards, moves, paid = history
    pieces = paid_pieces(rewards=rewards, moves=moves)
    reportable = sum(r.amount for r in rewards if DAC7 in r.reportable)
    reported = sum(row.total for row in year_totals(pieces=pieces, year=2026, jurisdiction=DAC7).values())
    assert sum(p.amount for p in pieces) == paid  # every settled cent not returned, and no more
    for r in rewards:
        assert 0 <= sum(p.amount for p in pieces if p.reward_id == r.id) <= r.amount
    assert 0 <= reported <= reportable
    if paid == sum(r.amount for r in rewards):
        assert reported == reportable
