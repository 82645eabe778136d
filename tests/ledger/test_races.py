"""The ledger under real concurrency, on PostgreSQL: many threads, one connection each, one start.

A viral campaign sends many rewards at once at ONE budget row; brands, holds and idempotent retries
race each other. Whatever the interleaving, exactly the right number of postings succeed, nothing is
overdrawn, no deadlock or other database error escapes (a refused posting is a LedgerError, nothing
else), and the books do not drift.
"""

import queue
import random
import threading
from collections import Counter

import pytest
from django.db import connection

from joyback.ledger.models import Account, AccountKind, Hold, HoldStatus, Transaction
from joyback.ledger.selectors import ledger_drift
from joyback.ledger.services import (
    AlreadyReversed,
    HoldAlreadyResolved,
    IdempotencyConflict,
    InsufficientFunds,
    account_get_or_create,
    hold_commit,
    hold_reserve,
    hold_void,
    platform_bank,
    postings_post,
    transaction_reverse,
    transfer,
    transfer_post,
)

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def race(jobs, threads=16):
    """Run every job (a callable without arguments) on `threads` threads that start together.

    Each thread opens its own connection before the start line and closes it when done. Returns
    one outcome per job, in order: what the job returned, or the exception it raised.
    """
    todo = queue.SimpleQueue()
    for index, job in enumerate(jobs):
        todo.put((index, job))
    outcomes = [None] * len(jobs)
    start = threading.Barrier(threads)

    def worker():
        try:
            connection.ensure_connection()
            start.wait()
            while True:
                try:
                    index, job = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    outcomes[index] = job()
                except Exception as error:
                    outcomes[index] = error
        finally:
            connection.close()

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in pool), "a thread is stuck"
    return outcomes


def only(outcomes, *allowed):
    """Fail on any outcome that is neither a success nor one of the allowed refusals."""
    unexpected = [o for o in outcomes if isinstance(o, Exception) and not isinstance(o, allowed)]
    assert unexpected == [], f"unexpected errors escaped: {unexpected[:5]}"


def succeeded(outcomes):
    return [o for o in outcomes if not isinstance(o, Exception)]


def refusals(outcomes, error):
    return [o for o in outcomes if isinstance(o, error)]


def balance(account):
    return Account.objects.get(pk=account.pk).balance


def budget_with(amount, campaign=1):
    """A campaign budget funded with `amount` through the brand's funding account (one brand: a
    posting moves one brand's money)."""
    funding = account_get_or_create(kind=AccountKind.BRAND_FUNDING, currency="EUR", brand_id=1)
    budget = account_get_or_create(
        kind=AccountKind.CAMPAIGN_BUDGET,
        currency="EUR",
        brand_id=1,
        subject=f"campaign:{campaign}",
        name=f"Budget {campaign}",
    )
    if amount:
        transfer_post(
            source=platform_bank(currency="EUR"), destination=funding, amount=amount, reason="deposit"
        )
        transfer_post(source=funding, destination=budget, amount=amount, reason="campaign_funding")
    return budget


def payables(count):
    return [
        account_get_or_create(
            kind=AccountKind.PARTICIPANT_PAYABLE, currency="EUR", brand_id=1, subject=f"participant:{i}"
        )
        for i in range(count)
    ]


def test_100_rewards_at_once_against_a_budget_for_37_pay_exactly_37():
    budget = budget_with(37 * 2_00)
    people = payables(10)

    outcomes = race(
        [
            lambda i=i: transfer_post(source=budget, destination=people[i % 10], amount=2_00, reason="reward")
            for i in range(100)
        ],
        threads=20,
    )

    only(outcomes, InsufficientFunds)
    assert len(succeeded(outcomes)) == 37
    assert len(refusals(outcomes, InsufficientFunds)) == 63
    assert balance(budget) == 0
    assert sum(balance(p) for p in people) == 37 * 2_00
    assert ledger_drift() == []


def test_50_deposits_at_once_into_one_account_all_add_up():
    bank = platform_bank(currency="EUR")
    funding = account_get_or_create(kind=AccountKind.BRAND_FUNDING, currency="EUR", brand_id=1)
    amounts = [(i + 1) * 1_00 + i for i in range(50)]

    outcomes = race(
        [
            lambda a=a: transfer_post(source=bank, destination=funding, amount=a, reason="deposit")
            for a in amounts
        ],
        threads=20,
    )

    only(outcomes)
    assert balance(funding) == balance(bank) == sum(amounts)
    assert ledger_drift() == []


def test_money_moving_every_which_way_between_three_accounts_never_deadlocks():
    """16 threads x 30 jobs of A->B, B->A, C->A ..., single or batched: only InsufficientFunds fails."""
    accounts = [budget_with(100_00, campaign=c) for c in (1, 2, 3)]
    rng = random.Random(20261130)

    def moves():
        return [(*rng.sample(accounts, 2), rng.randint(1, 40_00)) for _ in range(rng.choice([1, 1, 3]))]

    def one_transfer(source, destination, amount):
        try:
            return [transfer_post(source=source, destination=destination, amount=amount, reason="move")]
        except InsufficientFunds as refusal:
            return [refusal]

    def one_batch(batch):
        postings = [transfer(source=s, destination=d, amount=a, reason="move") for s, d, a in batch]
        return [r.transaction or r.error for r in postings_post(postings=postings)]

    plan = [moves() for _ in range(16 * 30)]
    jobs = [(lambda m=m: one_transfer(*m[0])) if len(m) == 1 else (lambda m=m: one_batch(m)) for m in plan]

    outcomes = race(jobs, threads=16)

    only(outcomes)  # no deadlock, serialization failure or other database error
    results = [
        (move, result)
        for batch, batch_results in zip(plan, outcomes, strict=True)
        for move, result in zip(batch, batch_results, strict=True)
    ]
    only([result for _, result in results], InsufficientFunds)
    expected = Counter({a.pk: 100_00 for a in accounts})
    for (source, destination, amount), result in results:
        if isinstance(result, Transaction):
            expected[source.pk] -= amount
            expected[destination.pk] += amount
    assert {a.pk: balance(a) for a in accounts} == dict(expected)
    assert sum(balance(a) for a in accounts) == 300_00
    assert all(balance(a) >= 0 for a in accounts)
    refused = refusals([result for _, result in results], InsufficientFunds)
    assert 0 < len(refused) < len(results), "the race should see both outcomes"
    assert ledger_drift() == []


def test_the_same_idempotency_key_from_20_threads_posts_once():
    budget = budget_with(10_00)
    (pat,) = payables(1)

    outcomes = race(
        [
            lambda: transfer_post(
                source=budget, destination=pat, amount=3_00, reason="reward", idempotency_key="claim:42"
            )
        ]
        * 20,
        threads=20,
    )

    only(outcomes)
    assert Transaction.objects.filter(idempotency_key="claim:42").count() == 1
    assert {tx.pk for tx in outcomes} == {Transaction.objects.get(idempotency_key="claim:42").pk}
    assert (balance(budget), balance(pat)) == (7_00, 3_00)
    assert ledger_drift() == []


def test_one_key_raced_with_different_content_on_different_accounts_posts_once():
    """No shared row lock serialises these: the unique key does, and the losers see a conflict."""
    budgets = [budget_with(10_00, campaign=c) for c in range(1, 11)]
    people = payables(10)

    outcomes = race(
        [
            lambda b=b, p=p: transfer_post(
                source=b, destination=p, amount=1_00, reason="reward", idempotency_key="claim:42"
            )
            for b, p in zip(budgets, people, strict=True)
        ],
        threads=10,
    )

    only(outcomes, IdempotencyConflict)
    assert len(succeeded(outcomes)) == 1
    assert len(refusals(outcomes, IdempotencyConflict)) == 9
    assert sum(balance(b) for b in budgets) == 100_00 - 1_00
    assert ledger_drift() == []


def test_a_hold_raced_by_a_commit_and_a_void_resolves_exactly_once():
    budget = budget_with(100_00)
    (pat,) = payables(1)
    holds = [hold_reserve(account=budget, amount=2_00, reference=f"claim:{i}") for i in range(40)]
    jobs = []
    for hold in holds:
        pair = [
            (hold, HoldStatus.COMMITTED, lambda h=hold: hold_commit(hold=h, destination=pat, amount=1_50)),
            (hold, HoldStatus.VOIDED, lambda h=hold: hold_void(hold=h)),
        ]
        random.Random(hold.pk).shuffle(pair)
        jobs.extend(pair)

    outcomes = race([job for _, _, job in jobs], threads=16)

    only(outcomes, HoldAlreadyResolved)
    winners = {}
    for (hold, status, _), outcome in zip(jobs, outcomes, strict=True):
        if not isinstance(outcome, HoldAlreadyResolved):
            assert hold.pk not in winners, f"hold #{hold.pk} resolved twice"
            winners[hold.pk] = status
    assert len(refusals(outcomes, HoldAlreadyResolved)) == len(winners) == 40
    assert dict(Hold.objects.values_list("pk", "status")) == winners
    committed = list(winners.values()).count(HoldStatus.COMMITTED)
    budget.refresh_from_db()
    assert (budget.balance, budget.held) == (100_00 - committed * 1_50, 0)
    assert balance(pat) == committed * 1_50
    assert ledger_drift() == []


def test_eight_threads_posting_batches_at_one_budget_never_overdraw_it():
    budget = budget_with(500_00)
    people = payables(3)
    rng = random.Random(8)
    batches = [[(rng.choice(people), rng.randint(1, 10_00)) for _ in range(15)] for _ in range(8 * 10)]

    outcomes = race(
        [
            lambda batch=batch: postings_post(
                postings=[transfer(source=budget, destination=p, amount=a, reason="reward") for p, a in batch]
            )
            for batch in batches
        ],
        threads=8,
    )

    only(outcomes)
    results = [result for batch_results in outcomes for result in batch_results]
    assert {type(r.error) for r in results} == {type(None), InsufficientFunds}
    paid = sum(
        amount
        for batch, batch_results in zip(batches, outcomes, strict=True)
        for (_, amount), result in zip(batch, batch_results, strict=True)
        if result.ok
    )
    assert 0 <= balance(budget) == 500_00 - paid
    assert sum(balance(p) for p in people) == paid
    assert ledger_drift() == []


def test_50_holds_at_once_against_a_budget_for_10_reserve_exactly_10():
    budget = budget_with(10 * 3_00)

    outcomes = race([lambda: hold_reserve(account=budget, amount=3_00)] * 50, threads=20)

    only(outcomes, InsufficientFunds)
    assert len(succeeded(outcomes)) == 10
    budget.refresh_from_db()
    assert (budget.balance, budget.held, budget.available) == (30_00, 30_00, 0)
    assert ledger_drift() == []


def test_a_transaction_reversed_from_ten_threads_at_once_is_reversed_once():
    budget = budget_with(10_00)
    (pat,) = payables(1)
    reward = transfer_post(source=budget, destination=pat, amount=4_00, reason="reward")

    outcomes = race([lambda: transaction_reverse(original=reward, reason="clawback")] * 10, threads=10)

    only(outcomes, AlreadyReversed)
    assert len(succeeded(outcomes)) == 1
    assert Transaction.objects.filter(reverses=reward).count() == 1
    assert (balance(budget), balance(pat)) == (10_00, 0)
    assert ledger_drift() == []
