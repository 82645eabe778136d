"""What a person was paid for their reportable rewards, per quarter: a pure function of the
rewards booked to them and of their payouts' outcomes at the bank.

The law counts consideration paid; JoyBack pays a person's balance, not a reward, so each payout
is matched to the rewards it carried, oldest first (the balance a payout empties is the oldest
rewards not yet paid). A payout counts when the bank confirmed it (settled), in the quarter it
settled; a return gives its rewards back to the front of the queue (they are unpaid again, and
the amount is deducted in the quarter of the return), so the next payout that settles carries
them. Each currency has its own queue: a payout in euros never pays a reward in pounds. Money a
payout carried beyond the rewards booked (a payout made by hand) is no reward and is not counted.

Amounts stay in minor units; the sum of what is counted for a reward never exceeds the reward.
"""

import datetime
from collections import defaultdict, deque
from dataclasses import dataclass

SETTLED, RETURNED = "settled", "returned"


@dataclass(frozen=True)
class Reward:
    person: str
    id: int
    amount: int
    currency: str
    at: datetime.datetime
    reportable: frozenset  # the jurisdictions this reward is reportable in
    fee: int = 0  # what the platform took from the person for it (JoyBack charges the brand: 0)


@dataclass(frozen=True)
class PayoutMove:
    person: str
    payout_id: int
    amount: int
    currency: str
    at: datetime.datetime
    kind: str  # SETTLED or RETURNED


@dataclass(frozen=True)
class Piece:
    """Part of one reward paid (positive) or given back by a return (negative) at a moment."""

    person: str
    reward_id: int
    currency: str
    amount: int
    fee: int
    at: datetime.datetime
    reportable: frozenset


def quarter_of(moment: datetime.datetime) -> int:
    return (moment.month - 1) // 3


def paid_pieces(*, rewards, moves) -> list[Piece]:
    """Every payment and return of a reward's money, oldest reward first, in the order the bank's
    outcomes happened. A move names only money booked before it; ties go to the reward."""
    queues: dict[tuple, deque] = defaultdict(deque)
    pending = sorted(rewards, key=lambda r: (r.at, r.id))
    by_payout: dict[int, list[list]] = {}
    pieces: list[Piece] = []
    position = 0
    for move in sorted(moves, key=lambda m: (m.at, m.kind != SETTLED, m.payout_id)):
        while position < len(pending) and pending[position].at <= move.at:
            reward = pending[position]
            queues[(reward.person, reward.currency)].append([reward, reward.amount])
            position += 1
        queue = queues[(move.person, move.currency)]
        if move.kind == SETTLED:
            left, carried = move.amount, []
            while left > 0 and queue:
                reward, unpaid = queue[0]
                take = min(left, unpaid)
                fee = reward.fee * take // reward.amount if reward.amount else 0
                pieces.append(
                    Piece(move.person, reward.id, move.currency, take, fee, move.at, reward.reportable)
                )
                carried.append([reward, take])
                left -= take
                if take == unpaid:
                    queue.popleft()
                else:
                    queue[0][1] = unpaid - take
            by_payout[move.payout_id] = carried
        elif move.kind == RETURNED:
            for reward, take in reversed(by_payout.pop(move.payout_id, [])):
                fee = reward.fee * take // reward.amount if reward.amount else 0
                pieces.append(
                    Piece(move.person, reward.id, move.currency, -take, -fee, move.at, reward.reportable)
                )
                if queue and queue[0][0].id == reward.id:
                    queue[0][1] += take
                else:
                    queue.appendleft([reward, take])
    return pieces


@dataclass
class PersonYear:
    person: str
    currency: str
    consideration: list
    fees: list
    activities: list
    reward_ids: set

    @property
    def total(self) -> int:
        return sum(self.consideration)


def year_totals(*, pieces, year: int, jurisdiction: str) -> dict[tuple[str, str], PersonYear]:
    """Per person and currency, the year's quarters for the rewards reportable in a jurisdiction.
    An activity counts in the quarter its reward's money was (net) paid."""
    out: dict[tuple[str, str], PersonYear] = {}
    net_by_reward_quarter: dict[tuple, int] = defaultdict(int)
    for piece in pieces:
        if piece.at.year != year or jurisdiction not in piece.reportable:
            continue
        key = (piece.person, piece.currency)
        row = out.get(key)
        if row is None:
            row = out[key] = PersonYear(piece.person, piece.currency, [0] * 4, [0] * 4, [0] * 4, set())
        quarter = quarter_of(piece.at)
        row.consideration[quarter] += piece.amount
        row.fees[quarter] += piece.fee
        row.reward_ids.add(piece.reward_id)
        net_by_reward_quarter[(key, piece.reward_id, quarter)] += piece.amount
    for (key, _reward_id, quarter), amount in net_by_reward_quarter.items():
        if amount > 0:
            out[key].activities[quarter] += 1
    return out
