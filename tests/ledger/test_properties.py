"""The ledger against a model of itself, under random sequences of everything it can be asked to do.

Hypothesis drives a state machine over a small chart of accounts: transfers (some of which
overdraw), batches mixing good and overdrawing transfers, holds reserved, committed in full or in
part, voided and resolved again, reversals (again and again), and idempotent replays, some with
changed content. The machine keeps its own expected balance and held amount per account and predicts
every outcome; after every step it checks that

- the books do not drift: every stored balance equals its entries, every held amount equals the
  account's open holds, every transaction sums to zero per currency (selectors.ledger_drift);
- no no-overdraft account is below its holds;
- the database says exactly what the model says, down to the number of transactions and entries.

Each example runs inside a savepoint that is rolled back at teardown, so examples start from empty
books and a failure shrinks to a clean, minimal story.
"""

import itertools
from dataclasses import dataclass

import pytest
from django.db import transaction
from django.db.models import F
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from joyback.ledger.models import Account, AccountKind, Entry, Hold, HoldStatus, Transaction
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
    postings_post,
    transaction_reverse,
    transfer,
    transfer_post,
)

K = AccountKind
CHART = {
    # name: (kind, currency, brand)
    "bank": (K.PLATFORM_BANK, "EUR", None),
    "funding_alpaca": (K.BRAND_FUNDING, "EUR", 1),
    "funding_bison": (K.BRAND_FUNDING, "EUR", 2),
    "budget_summer": (K.CAMPAIGN_BUDGET, "EUR", 1),
    "budget_winter": (K.CAMPAIGN_BUDGET, "EUR", 2),
    "payable_pat": (K.PARTICIPANT_PAYABLE, "EUR", 1),
    "payable_quinn": (K.PARTICIPANT_PAYABLE, "EUR", 1),
    "payable_ravi": (K.PARTICIPANT_PAYABLE, "EUR", 2),
    "suspense": (K.SUSPENSE, "EUR", None),  # the one account that may be overdrawn
    "bank_usd": (K.PLATFORM_BANK, "USD", None),
    "funding_alpaca_usd": (K.BRAND_FUNDING, "USD", 1),
}
# A posting moves one brand's money: the platform's accounts (no brand) meet either brand, the two
# brands' accounts never meet (test_refusals checks the refusal).
PAIRS = [
    (source, destination)
    for source, destination in itertools.permutations(CHART, 2)
    if CHART[source][1] == CHART[destination][1]
    and len({CHART[source][2], CHART[destination][2]} - {None}) <= 1
]
# Holds set money aside on what the platform owes a brand's people (liabilities), as a campaign
# budget does; the platform's own accounts hold nothing.
HOLDABLE = [name for name, (_, currency, brand) in CHART.items() if currency == "EUR" and brand is not None]
EUR_ACCOUNTS = [name for name, (_, currency, _) in CHART.items() if currency == "EUR"]

amounts = st.integers(min_value=1, max_value=20_000)


def normal_sign(name):
    """+1 where the balance grows with debits (the bank, an asset), -1 elsewhere (what is owed)."""
    return 1 if CHART[name][0] == K.PLATFORM_BANK else -1


def transfer_legs(source, destination, amount):
    """Entries of a transfer: the source is debited (+), the destination credited (-)."""
    return ((source, amount), (destination, -amount))


@dataclass(frozen=True)
class Posted:
    pk: int
    legs: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Keyed:
    key: str
    pk: int
    source: str
    destination: str
    amount: int


@dataclass(frozen=True)
class HeldMoney:
    pk: int
    account: str
    amount: int


class LedgerMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self._savepoint = transaction.atomic()
        self._savepoint.__enter__()
        self.accounts = {
            name: account_get_or_create(kind=kind, currency=currency, brand_id=brand, subject=name, name=name)
            for name, (kind, currency, brand) in CHART.items()
        }
        self.balance = dict.fromkeys(CHART, 0)
        self.held = dict.fromkeys(CHART, 0)
        self.transactions = Transaction.objects.count()
        self.entries = Entry.objects.count()
        self.posted: list[Posted] = []
        self.reversed: set[int] = set()
        self.keyed: list[Keyed] = []
        self.open_holds: list[HeldMoney] = []
        self.resolved_holds: list[HeldMoney] = []
        self.keys = itertools.count(1)

    def teardown(self):
        transaction.set_rollback(True)
        self._savepoint.__exit__(None, None, None)

    # --- the model -----------------------------------------------------------------------------

    def refuses(self, legs, held=None):
        """Would these entries take a no-overdraft account below its holds?"""
        held = held or self.held
        for name, amount in legs:
            change = amount * normal_sign(name)
            no_overdraft = CHART[name][0] != K.SUSPENSE
            if no_overdraft and change < 0 and self.balance[name] - held[name] + change < 0:
                return True
        return False

    def book(self, pk, legs):
        for name, amount in legs:
            self.balance[name] += amount * normal_sign(name)
        self.transactions += 1
        self.entries += len(legs)
        record = Posted(pk, tuple(legs))
        self.posted.append(record)
        return record

    def new_key(self):
        return f"key-{next(self.keys)}"

    def known(self, key):
        return next((k for k in self.keyed if k.key == key), None)

    # --- rules ---------------------------------------------------------------------------------

    @initialize(deposit=st.integers(0, 100_000), funding=st.integers(0, 100_000))
    def a_brand_deposits_and_funds_its_campaign(self, deposit, funding):
        if deposit:
            self.post_transfer("bank", "funding_alpaca", deposit)
        if funding:
            self.post_transfer("funding_alpaca", "budget_summer", funding)

    @rule(pair=st.sampled_from(PAIRS), amount=amounts, keyed=st.booleans())
    def transfer_money(self, pair, amount, keyed):
        self.post_transfer(*pair, amount, key=self.new_key() if keyed else None)

    def post_transfer(self, source, destination, amount, key=None):
        legs = transfer_legs(source, destination, amount)
        post = lambda: transfer_post(  # noqa: E731
            source=self.accounts[source],
            destination=self.accounts[destination],
            amount=amount,
            reason="transfer",
            idempotency_key=key,
        )
        if self.refuses(legs):
            event("transfer: refused, would overdraw")
            with pytest.raises(InsufficientFunds):
                post()
            return
        event("transfer: posted")
        tx = post()
        self.book(tx.pk, legs)
        if key:
            self.keyed.append(Keyed(key, tx.pk, source, destination, amount))

    @rule(
        data=st.data(),
        batch=st.lists(st.tuples(st.sampled_from(PAIRS), amounts, st.booleans()), min_size=1, max_size=8),
        replays=st.integers(0, 2),
        repeat_last=st.booleans(),
    )
    def post_a_batch(self, data, batch, replays, repeat_last):
        """Many transfers in one postings_post: the overdrawing ones refused, the rest posted."""
        items = [(s, d, amount, self.new_key() if keyed else None) for (s, d), amount, keyed in batch]
        for _ in range(replays if self.keyed else 0):
            k = data.draw(st.sampled_from(self.keyed))
            items.insert(data.draw(st.integers(0, len(items))), (k.source, k.destination, k.amount, k.key))
        if repeat_last:
            items.append(items[-1])  # the same posting twice in one batch

        results = postings_post(
            postings=[
                transfer(
                    source=self.accounts[s],
                    destination=self.accounts[d],
                    amount=amount,
                    reason="transfer",
                    idempotency_key=key,
                )
                for s, d, amount, key in items
            ]
        )

        for (s, d, amount, key), result in zip(items, results, strict=True):
            if key and self.known(key):
                event("batch: replayed")
                assert result.replayed and result.transaction.pk == self.known(key).pk
            elif self.refuses(transfer_legs(s, d, amount)):
                event("batch: refused, would overdraw")
                assert isinstance(result.error, InsufficientFunds), result
            else:
                assert result.ok and not result.replayed, result
                self.book(result.transaction.pk, transfer_legs(s, d, amount))
                if key:
                    self.keyed.append(Keyed(key, result.transaction.pk, s, d, amount))

    @precondition(lambda self: self.keyed)
    @rule(data=st.data(), same_content=st.booleans())
    def replay_a_key(self, data, same_content):
        """A key seen before: the same content gets the original back, other content a conflict."""
        k = data.draw(st.sampled_from(self.keyed))
        post = lambda amount: transfer_post(  # noqa: E731
            source=self.accounts[k.source],
            destination=self.accounts[k.destination],
            amount=amount,
            reason="transfer",
            idempotency_key=k.key,
        )
        if same_content:
            assert post(k.amount).pk == k.pk
        else:
            with pytest.raises(IdempotencyConflict):
                post(k.amount + 1)

    @rule(data=st.data(), account=st.sampled_from(HOLDABLE))
    def reserve(self, data, account):
        available = self.balance[account] - self.held[account]
        fitting = st.integers(1, available) if available > 0 else amounts
        amount = data.draw(st.one_of(fitting, amounts))
        no_overdraft = CHART[account][0] != K.SUSPENSE
        if no_overdraft and self.balance[account] - self.held[account] < amount:
            event("hold: refused, would overdraw")
            with pytest.raises(InsufficientFunds):
                hold_reserve(account=self.accounts[account], amount=amount)
            return
        hold = hold_reserve(account=self.accounts[account], amount=amount)
        self.held[account] += amount
        self.open_holds.append(HeldMoney(hold.pk, account, amount))

    @precondition(lambda self: self.open_holds)
    @rule(data=st.data(), in_full=st.booleans())
    def commit(self, data, in_full):
        held = data.draw(st.sampled_from(self.open_holds))
        destination = data.draw(st.sampled_from([n for n in EUR_ACCOUNTS if (held.account, n) in PAIRS]))
        amount = held.amount if in_full else data.draw(st.integers(1, held.amount))
        legs = transfer_legs(held.account, destination, amount)
        released = self.held | {held.account: self.held[held.account] - held.amount}
        commit = lambda: hold_commit(  # noqa: E731
            hold=Hold.objects.get(pk=held.pk),
            destination=self.accounts[destination],
            amount=None if in_full else amount,
        )
        if self.refuses(legs, held=released):
            # Only possible into the bank: paying it back could overdraw it. The hold stays open.
            event("hold commit: refused, would overdraw the bank")
            with pytest.raises(InsufficientFunds):
                commit()
            return
        event("hold commit: in full" if in_full else "hold commit: in part")
        tx = commit()
        self.book(tx.pk, legs)
        self.held = released
        self.open_holds.remove(held)
        self.resolved_holds.append(held)
        assert Hold.objects.filter(
            pk=held.pk, status=HoldStatus.COMMITTED, committed_amount=amount, commit_transaction=tx
        ).exists()

    @precondition(lambda self: self.open_holds)
    @rule(data=st.data())
    def void(self, data):
        held = data.draw(st.sampled_from(self.open_holds))
        hold_void(hold=Hold.objects.get(pk=held.pk))
        self.held[held.account] -= held.amount
        self.open_holds.remove(held)
        self.resolved_holds.append(held)

    @precondition(lambda self: self.resolved_holds)
    @rule(data=st.data(), commit=st.booleans())
    def resolve_a_resolved_hold_again(self, data, commit):
        held = data.draw(st.sampled_from(self.resolved_holds))
        hold = Hold.objects.get(pk=held.pk)
        with pytest.raises(HoldAlreadyResolved):
            if commit:
                hold_commit(hold=hold, destination=self.accounts["payable_pat"])
            else:
                hold_void(hold=hold)

    @precondition(lambda self: self.posted)
    @rule(data=st.data())
    def reverse_a_transaction(self, data):
        """Reverse any posted transaction (a reversal included): once, and only if it cannot overdraw."""
        original = data.draw(st.sampled_from(self.posted))
        legs = tuple((name, -amount) for name, amount in original.legs)
        reversal_of = lambda: transaction_reverse(original=Transaction.objects.get(pk=original.pk))  # noqa: E731
        if original.pk in self.reversed:
            event("reversal: refused, already reversed")
            with pytest.raises(AlreadyReversed):
                reversal_of()
        elif self.refuses(legs):
            event("reversal: refused, would overdraw")
            with pytest.raises(InsufficientFunds):
                reversal_of()
        else:
            event("reversal: posted")
            reversal = reversal_of()
            assert reversal.reverses_id == original.pk
            self.book(reversal.pk, legs)
            self.reversed.add(original.pk)

    # --- invariants ----------------------------------------------------------------------------

    @invariant()
    def the_books_do_not_drift(self):
        assert ledger_drift() == []

    @invariant()
    def no_account_is_overdrawn(self):
        assert not Account.objects.filter(no_overdraft=True, balance__lt=F("held")).exists()

    @invariant()
    def the_database_matches_the_model(self):
        rows = Account.objects.in_bulk([a.pk for a in self.accounts.values()])
        stored = {name: (rows[a.pk].balance, rows[a.pk].held) for name, a in self.accounts.items()}
        assert stored == {name: (self.balance[name], self.held[name]) for name in CHART}
        assert Transaction.objects.count() == self.transactions
        assert Entry.objects.count() == self.entries
        open_holds = Hold.objects.filter(status=HoldStatus.RESERVED)
        assert sorted(open_holds.values_list("pk", flat=True)) == sorted(h.pk for h in self.open_holds)


@pytest.mark.django_db
def test_the_ledger_behaves_like_its_model():
    run_state_machine_as_test(
        LedgerMachine,
        settings=settings(
            max_examples=60,
            stateful_step_count=25,
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        ),
    )
