"""The write path's short cuts, raced on PostgreSQL: an account opened by one statement, a posting
written without a savepoint or without looking its new key up, and a key another writer commits
between the read of the keys and the insert. Whatever the interleaving, a key posts once, the
books add up and nothing is left half written."""

import threading

import pytest
from django.db import connection, transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from joyback.ledger import services
from joyback.ledger.models import Account, AccountKind, Entry, Transaction
from joyback.ledger.selectors import ledger_drift
from joyback.ledger.services import (
    LedgerError,
    account_get_or_create,
    account_open,
    platform_bank,
    postings_post,
    transfer,
    transfer_post,
)
from tests.ledger.test_races import race

pytestmark = [pytest.mark.postgres]


def funded_budget(amount=100_00, brand_id=1):
    bank = platform_bank(currency="EUR")
    funding = account_get_or_create(kind=AccountKind.BRAND_FUNDING, currency="EUR", brand_id=brand_id)
    budget = account_get_or_create(
        kind=AccountKind.CAMPAIGN_BUDGET, currency="EUR", brand_id=brand_id, subject="campaign:1"
    )
    transfer_post(source=bank, destination=funding, amount=amount, reason="deposit", idempotency_key="dep")
    transfer_post(
        source=funding, destination=budget, amount=amount, reason="budget_fund", idempotency_key="f"
    )
    return budget


def payable(number, brand_id=1):
    return account_open(
        kind=AccountKind.PARTICIPANT_PAYABLE,
        currency="EUR",
        brand_id=brand_id,
        subject=f"participant:{number}",
    )


def reward(budget, to, key, amount=2_00):
    return dict(source=budget, destination=to, amount=amount, reason="reward", idempotency_key=key)


def fresh(account):
    return Account.objects.get(pk=account.pk)


def entries_total(account):
    return sum(Entry.objects.filter(account=account).values_list("amount", flat=True))


@pytest.mark.django_db(transaction=True)
def test_sixteen_threads_opening_one_account_make_one_row_and_all_get_it():
    outcomes = race([lambda: payable(7) for _ in range(16)])

    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    assert {account.pk for account in outcomes} == {Account.objects.get(subject="participant:7").pk}
    assert Account.objects.filter(subject="participant:7").count() == 1


@pytest.mark.django_db
def test_an_opened_account_is_the_one_already_there_with_its_balance():
    budget = funded_budget()
    person = payable(1)
    transfer_post(**reward(budget, person, "r1"))

    again = payable(1)

    assert again.pk == person.pk and again.balance == 2_00 and again.livemode
    assert again.name == "Reward payable participant:1" and again.no_overdraft


def commit_elsewhere(key, budget, to, amount=2_00):
    """A posting under `key` committed by another connection, as a concurrent writer would."""

    def post():
        try:
            with transaction.atomic(durable=True):
                transfer_post(**reward(budget, to, key, amount=amount))
        finally:
            connection.close()

    thread = threading.Thread(target=post)
    thread.start()
    thread.join(timeout=30)


@pytest.mark.django_db(transaction=True)
def test_a_key_committed_between_the_read_and_the_insert_is_answered_as_a_replay(monkeypatch):
    budget, person = funded_budget(), payable(1)
    lock = services._accounts_lock
    raced = []

    def lock_after_another_writer(account_ids):
        if not raced:
            raced.append(True)
            commit_elsewhere("reward:raced", budget, person)
        return lock(account_ids)

    monkeypatch.setattr(services, "_accounts_lock", lock_after_another_writer)

    with transaction.atomic(durable=True):
        (result,) = postings_post(postings=[transfer(**reward(budget, person, "reward:raced"))])

    assert result.ok and result.replayed
    assert Transaction.objects.filter(idempotency_key="reward:raced").count() == 1
    assert fresh(person).balance == 2_00 == -entries_total(person)
    assert ledger_drift() == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("fresh_key", [False, True], ids=["known-key", "fresh-key"])
def test_without_a_savepoint_a_raced_key_is_replayed_or_fails_the_callers_transaction(monkeypatch, fresh_key):
    """A key that may have been posted before is planned again from a savepoint of the write's own;
    one said to be fresh fails the caller's whole transaction. Either way it posts once."""
    budget, person = funded_budget(), payable(1)
    lock = services._accounts_lock
    raced = []

    def lock_after_another_writer(account_ids):
        if not raced:
            raced.append(True)
            commit_elsewhere("reward:raced", budget, person)
        return lock(account_ids)

    monkeypatch.setattr(services, "_accounts_lock", lock_after_another_writer)
    posting = transfer(**reward(budget, person, "reward:raced"))

    if fresh_key:
        with (
            pytest.raises(LedgerError, match="taken by a concurrent writer"),
            transaction.atomic(durable=True),
        ):
            payable(99)  # the caller's own work, rolled back with it
            postings_post(postings=[posting], savepoint=False, fresh_keys=True)
        assert not Account.objects.filter(subject="participant:99").exists()
    else:
        with transaction.atomic(durable=True):
            (result,) = postings_post(postings=[posting], savepoint=False)
        assert result.ok and result.replayed

    assert Transaction.objects.filter(idempotency_key="reward:raced").count() == 1
    assert fresh(person).balance == 2_00 == -entries_total(person)
    assert ledger_drift() == []


@pytest.mark.django_db
def test_a_fresh_key_that_was_taken_after_all_is_refused_never_posted_twice():
    budget, person = funded_budget(), payable(1)
    transfer_post(**reward(budget, person, "reward:1"))

    with pytest.raises(LedgerError), transaction.atomic():
        transfer_post(**reward(budget, person, "reward:1"), savepoint=False, fresh_key=True)

    assert Transaction.objects.filter(idempotency_key="reward:1").count() == 1
    assert fresh(person).balance == 2_00 == -entries_total(person)


@pytest.mark.django_db(transaction=True)
def test_rewards_with_fresh_keys_from_sixteen_threads_at_a_budget_for_ten_pay_exactly_ten():
    budget = funded_budget(amount=10 * 2_00)
    people = [payable(number) for number in range(40)]

    def job(number):
        def post():
            with transaction.atomic(durable=True):
                return transfer_post(
                    **reward(budget, people[number], f"reward:{number}"), savepoint=False, fresh_key=True
                )

        return post

    outcomes = race([job(number) for number in range(40)])

    paid = [o for o in outcomes if isinstance(o, Transaction)]
    refused = [o for o in outcomes if isinstance(o, services.InsufficientFunds)]
    assert len(paid) == 10 and len(refused) == 30, outcomes
    assert fresh(budget).balance == 0
    assert ledger_drift() == []


# A batch: (payable number, amount, key number or None); keys repeat on purpose, and some were
# posted before the batch.
postings_strategy = st.lists(
    st.tuples(st.integers(0, 4), st.integers(1, 3_00), st.one_of(st.none(), st.integers(0, 6))),
    min_size=1,
    max_size=12,
)


@pytest.mark.django_db
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    earlier=st.lists(st.integers(0, 6), max_size=3, unique=True),
    batch=postings_strategy,
    savepoint=st.booleans(),
)
def test_a_batch_posts_each_key_once_and_the_balances_are_their_entries(earlier, batch, savepoint):
    """The model: a key posts the first content it came with, a repeat with the same content is a
    replay and other content a conflict; what is not refused moves the balances exactly."""
    with transaction.atomic():  # each example rolled back
        budget, people = funded_budget(amount=20_00), [payable(n) for n in range(5)]
        for key in earlier:
            transfer_post(**reward(budget, people[key % 5], f"k{key}", amount=1_00))
        expected = {n: (1_00 * sum(1 for key in earlier if key % 5 == n)) for n in range(5)}
        posted = {f"k{key}": (key % 5, 1_00) for key in earlier}
        available = 20_00 - 1_00 * len(earlier)
        postings = []
        for number, amount, key in batch:
            name = None if key is None else f"k{key}"
            postings.append(transfer(**reward(budget, people[number], name, amount=amount)))
        with transaction.atomic():
            results = postings_post(postings=postings, savepoint=savepoint)
        for (number, amount, key), result in zip(batch, results, strict=True):
            name = None if key is None else f"k{key}"
            if name in posted:
                assert result.replayed == (posted[name] == (number, amount)) or not result.ok
                assert result.ok == (posted[name] == (number, amount))
                continue
            if amount > available:
                assert isinstance(result.error, services.InsufficientFunds)
                continue
            assert result.ok and not result.replayed
            available -= amount
            expected[number] += amount
            if name is not None:
                posted[name] = (number, amount)
        for number, person in enumerate(people):
            assert fresh(person).balance == expected[number] == -entries_total(person)
        assert fresh(budget).balance == available == -entries_total(budget)
        for name in posted:
            assert Transaction.objects.filter(idempotency_key=name).count() == 1
        transaction.set_rollback(True)


@pytest.mark.django_db(transaction=True)
def test_eight_threads_posting_batches_written_before_their_locks_never_overdraw_the_budget():
    """Batches of EARLY_FROM or more write their entries before they lock: racing for the last of
    the budget, the ones whose locked balances decide otherwise are posted again the usual way."""
    budget = funded_budget(amount=300_00)
    people = [payable(number) for number in range(3)]
    size = services.EARLY_FROM + 5
    batches = [[(people[(b + i) % 3], 1_00 + (b * 7 + i) % 90) for i in range(size)] for b in range(24)]

    def job(batch):
        def post():
            with transaction.atomic(durable=True):
                return postings_post(
                    postings=[transfer(**reward(budget, p, None, amount=a)) for p, a in batch]
                )

        return post

    outcomes = race([job(batch) for batch in batches], threads=8)

    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    results = [result for batch_results in outcomes for result in batch_results]
    assert {type(r.error) for r in results} == {type(None), services.InsufficientFunds}
    paid = sum(
        amount
        for batch, batch_results in zip(batches, outcomes, strict=True)
        for (_, amount), result in zip(batch, batch_results, strict=True)
        if result.ok
    )
    assert 0 <= fresh(budget).balance == 300_00 - paid
    assert sum(fresh(p).balance for p in people) == paid
    assert ledger_drift() == []


@pytest.mark.django_db(transaction=True)
def test_a_batch_whose_budget_still_covers_it_after_others_spent_is_posted_without_planning_again(
    monkeypatch,
):
    budget = funded_budget(amount=50_00)
    person, other = payable(1), payable(2)
    checks, plan = services.sql.balance_checks_now, services._plan_postings
    spent, plans = [], []

    def spend_elsewhere_first():
        checks()
        if not spent:  # between this batch's entries and its locks, another writer spends 20.00
            spent.append(True)
            commit_elsewhere("elsewhere", budget, other, amount=20_00)

    def counted(batch_plans, *args):
        plans.append(len(batch_plans))
        return plan(batch_plans, *args)

    monkeypatch.setattr(services.sql, "balance_checks_now", spend_elsewhere_first)
    monkeypatch.setattr(services, "_plan_postings", counted)
    batch = [transfer(**reward(budget, person, f"b{i}", amount=1_00)) for i in range(services.EARLY_FROM)]

    with transaction.atomic(durable=True):
        results = postings_post(postings=batch)

    assert spent and all(r.ok and not r.replayed for r in results)
    # Planned once (the other writer's posting is planned too): the 30.00 left covers the batch's
    # 20.00 in any order.
    assert plans.count(services.EARLY_FROM) == 1
    assert fresh(budget).balance == 10_00
    assert fresh(person).balance == services.EARLY_FROM * 1_00 == -entries_total(person)
    assert ledger_drift() == []


@pytest.mark.django_db(transaction=True)
def test_a_batch_whose_budget_was_spent_before_it_locked_is_posted_again_and_refuses_what_it_must(
    monkeypatch,
):
    budget = funded_budget(amount=30_00)
    person, other = payable(1), payable(2)
    checks = services.sql.balance_checks_now
    spent = []

    def spend_elsewhere_first():
        checks()
        if not spent:  # between this batch's entries and its locks, another writer spends 20.00
            spent.append(True)
            commit_elsewhere("elsewhere", budget, other, amount=20_00)

    monkeypatch.setattr(services.sql, "balance_checks_now", spend_elsewhere_first)
    batch = [transfer(**reward(budget, person, f"b{i}", amount=1_00)) for i in range(services.EARLY_FROM)]

    with transaction.atomic(durable=True):
        results = postings_post(postings=batch)

    assert spent and [r.ok for r in results] == [True] * 10 + [False] * (services.EARLY_FROM - 10)
    assert fresh(budget).balance == 0
    assert fresh(person).balance == 10_00 == -entries_total(person)
    assert Transaction.objects.filter(idempotency_key__startswith="b").count() == 10
    assert ledger_drift() == []
