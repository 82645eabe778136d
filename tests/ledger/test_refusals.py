"""What the ledger refuses, and that a refusal leaves the books exactly as they were.

Every test states the refusal as a block: `with refused(Error, match=...)` takes a snapshot of the
whole ledger (transactions, entries, holds, every balance and held amount), expects the error, and
asserts that the snapshot afterwards is identical.

The first half goes through the write path (services). The second half goes around it, straight at
the tables with the ORM and with raw SQL: the database itself must refuse, wrapped in
transaction.atomic() so that the test's own transaction stays usable afterwards.
"""

from contextlib import contextmanager
from decimal import Decimal

import pytest
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.models import F

from joyback.ledger.models import (
    Account,
    AccountKind,
    Entry,
    Hold,
    HoldStatus,
    Transaction,
)
from joyback.ledger.selectors import ledger_drift
from joyback.ledger.services import (
    AlreadyReversed,
    HoldAlreadyResolved,
    IdempotencyConflict,
    InsufficientFunds,
    InvalidPosting,
    Posting,
    account_get_or_create,
    hold_commit,
    hold_reserve,
    hold_void,
    platform_bank,
    posting_post,
    postings_post,
    transaction_reverse,
    transfer,
    transfer_post,
)

pytestmark = pytest.mark.django_db


def ledger_snapshot():
    return {
        "transactions": list(Transaction.objects.order_by("pk").values_list()),
        "entries": list(Entry.objects.order_by("pk").values_list()),
        "holds": list(Hold.objects.order_by("pk").values_list()),
        "accounts": list(Account.objects.order_by("pk").values_list("pk", "balance", "held")),
    }


@contextmanager
def refused(error, match=None):
    """The block must raise `error` and leave every ledger table as it found it."""
    before = ledger_snapshot()
    with pytest.raises(error, match=match) as info:
        yield info
    assert ledger_snapshot() == before, "a refused operation changed the ledger"
    assert ledger_drift() == []


def sql(statement, *params):
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def balance_of(account):
    return Account.objects.get(pk=account.pk).balance


@pytest.fixture
def funded_budget(bank, funding, budget):
    """The Summer budget holds 100.00 EUR, all of it available."""
    transfer_post(source=bank, destination=funding, amount=100_00, reason="deposit")
    transfer_post(source=funding, destination=budget, amount=100_00, reason="campaign_funding")
    budget.refresh_from_db()
    return budget


@pytest.fixture
def usd_payable(db):
    return account_get_or_create(
        kind=AccountKind.PARTICIPANT_PAYABLE,
        currency="USD",
        brand_id=1,
        subject="participant:1",
        name="Pat payable (USD)",
    )


@pytest.fixture
def reward(funded_budget, payable):
    """A 5.00 EUR reward already paid from the budget to Pat."""
    return transfer_post(source=funded_budget, destination=payable, amount=5_00, reason="reward")


# --- The write path refuses malformed postings --------------------------------------------------


def test_a_posting_whose_legs_do_not_sum_to_zero_is_refused(funded_budget, payable):
    unbalanced = Posting(reason="reward", legs=((funded_budget, 5_00), (payable, -4_00)))

    with refused(InvalidPosting, match="differ by 100 minor units of EUR"):
        posting_post(posting=unbalanced)


def test_a_transfer_between_currencies_is_refused(funded_budget, usd_payable):
    with refused(InvalidPosting, match="Mixed currencies: legs in EUR and USD"):
        transfer_post(source=funded_budget, destination=usd_payable, amount=5_00, reason="reward")


def test_a_posting_between_two_brands_is_refused(funded_budget):
    # Past one primary each brand's ledger rows live on one node: a posting commits on one.
    other_brand = account_get_or_create(kind=AccountKind.BRAND_FUNDING, currency="EUR", brand_id=2)

    with refused(InvalidPosting, match="its accounts belong to two brands"):
        transfer_post(source=funded_budget, destination=other_brand, amount=5_00, reason="reward")


def test_a_hold_on_the_platforms_own_account_is_refused(bank):
    suspense = account_get_or_create(kind=AccountKind.SUSPENSE, currency="EUR", name="Suspense")

    with refused(InvalidPosting, match="sets aside a brand's money"):
        hold_reserve(account=suspense, amount=1_00)


@pytest.mark.parametrize(
    ("amount", "message"),
    [
        (5.0, "not float 5.0"),
        (Decimal("5.00"), "not Decimal"),
        (True, "not bool True"),
        (0, "A leg of zero moves nothing"),
    ],
    ids=["float", "Decimal", "bool", "zero"],
)
def test_an_amount_that_is_not_a_positive_whole_number_of_minor_units_is_refused(
    funded_budget, payable, amount, message
):
    with refused(InvalidPosting, match=message):
        transfer_post(source=funded_budget, destination=payable, amount=amount, reason="reward")


def test_a_negative_transfer_is_refused_rather_than_moving_money_backwards(reward, payable):
    budget = reward.entries.get(amount__gt=0).account
    assert balance_of(payable) == 5_00, "Pat has the money a backwards transfer could take"

    with refused(InvalidPosting, match="positive amount"):
        transfer_post(source=budget, destination=payable, amount=-5_00, reason="reward")


def test_a_posting_needs_a_reason_and_two_legs(funded_budget, payable):
    with refused(InvalidPosting, match="needs a reason"):
        transfer_post(source=funded_budget, destination=payable, amount=5_00, reason="")
    with refused(InvalidPosting, match="at least two legs"):
        posting_post(posting=Posting(reason="reward", legs=((funded_budget, 5_00),)))


# --- No-overdraft accounts ----------------------------------------------------------------------


def test_spending_more_than_the_balance_is_refused(funded_budget, payable):
    with refused(InsufficientFunds, match="10000 EUR minor units available; this posting needs 10001"):
        transfer_post(source=funded_budget, destination=payable, amount=100_01, reason="reward")


def test_spending_exactly_the_balance_is_allowed(funded_budget, payable):
    transfer_post(source=funded_budget, destination=payable, amount=100_00, reason="reward")

    assert balance_of(funded_budget) == 0


def test_a_hold_makes_the_difference_between_enough_and_not_enough(funded_budget, payable):
    hold_reserve(account=funded_budget, amount=30_00)
    funded_budget.refresh_from_db()
    assert funded_budget.balance >= 80_00, "the balance alone would cover the reward"

    with refused(InsufficientFunds, match="7000 EUR minor units available"):
        transfer_post(source=funded_budget, destination=payable, amount=80_00, reason="reward")

    transfer_post(source=funded_budget, destination=payable, amount=70_00, reason="reward")
    assert balance_of(funded_budget) == 30_00


def test_reserving_more_than_is_available_is_refused(funded_budget):
    hold_reserve(account=funded_budget, amount=60_00)

    with refused(InsufficientFunds, match="the hold needs 4001"):
        hold_reserve(account=funded_budget, amount=40_01)


def test_a_reversal_that_would_overdraw_is_refused(reward, payable):
    in_transit = account_get_or_create(
        kind=AccountKind.PAYOUT_IN_TRANSIT, currency="EUR", brand_id=1, name="Payouts in transit"
    )
    transfer_post(source=payable, destination=in_transit, amount=5_00, reason="payout")

    with refused(InsufficientFunds, match="Pat payable has 0"):
        transaction_reverse(original=reward, reason="clawback")


def test_in_a_batch_only_the_overdrawing_posting_is_refused(funded_budget, payable):
    results = postings_post(
        postings=[
            transfer(source=funded_budget, destination=payable, amount=60_00, reason="reward"),
            transfer(source=funded_budget, destination=payable, amount=50_00, reason="reward"),
            transfer(source=funded_budget, destination=payable, amount=40_00, reason="reward"),
        ]
    )

    assert [type(r.error) for r in results] == [type(None), InsufficientFunds, type(None)]
    assert balance_of(funded_budget) == 0
    assert Transaction.objects.filter(reason="reward").count() == 2
    assert ledger_drift() == []


# --- Idempotency --------------------------------------------------------------------------------


def test_the_same_key_with_the_same_content_returns_the_original_transaction(funded_budget, payable):
    def reward():
        return transfer_post(
            source=funded_budget,
            destination=payable,
            amount=5_00,
            reason="reward",
            idempotency_key="reward:claim:7",
        )

    original = reward()
    before = ledger_snapshot()

    replay = reward()

    assert replay.pk == original.pk
    assert ledger_snapshot() == before, "a replay posted something"


@pytest.mark.parametrize(
    "difference",
    [{"amount": 6_00}, {"reason": "bonus"}, {"reference": "claim:8"}],
    ids=["amount", "reason", "reference"],
)
def test_the_same_key_with_different_content_is_a_conflict(funded_budget, payable, difference):
    content = {"amount": 5_00, "reason": "reward", "reference": "claim:7"}
    original = transfer_post(
        source=funded_budget, destination=payable, idempotency_key="reward:claim:7", **content
    )

    with refused(IdempotencyConflict, match=f"transaction #{original.pk}"):
        transfer_post(
            source=funded_budget,
            destination=payable,
            idempotency_key="reward:claim:7",
            **(content | difference),
        )


def test_the_same_key_to_a_different_destination_is_a_conflict(funded_budget, payable, funding):
    transfer_post(
        source=funded_budget, destination=payable, amount=5_00, reason="reward", idempotency_key="k"
    )

    with refused(IdempotencyConflict):
        transfer_post(
            source=funded_budget, destination=funding, amount=5_00, reason="reward", idempotency_key="k"
        )


def test_a_key_repeated_within_one_batch_posts_once(funded_budget, payable):
    same = transfer(
        source=funded_budget, destination=payable, amount=5_00, reason="reward", idempotency_key="k"
    )
    other = transfer(
        source=funded_budget, destination=payable, amount=6_00, reason="reward", idempotency_key="k"
    )

    first, replay, conflict = postings_post(postings=[same, same, other])

    assert first.ok and not first.replayed
    assert replay.ok and replay.replayed and replay.transaction.pk == first.transaction.pk
    assert isinstance(conflict.error, IdempotencyConflict)
    assert Transaction.objects.filter(idempotency_key="k").count() == 1
    assert balance_of(funded_budget) == 95_00


def test_the_same_hold_key_with_a_different_amount_is_a_conflict(funded_budget):
    original = hold_reserve(account=funded_budget, amount=10_00, idempotency_key="claim:7")
    assert hold_reserve(account=funded_budget, amount=10_00, idempotency_key="claim:7") == original

    with refused(IdempotencyConflict, match=f"different hold \\(#{original.pk}\\)"):
        hold_reserve(account=funded_budget, amount=11_00, idempotency_key="claim:7")


# --- Holds resolve exactly once -----------------------------------------------------------------


@pytest.fixture
def hold(funded_budget):
    return hold_reserve(account=funded_budget, amount=10_00, reference="claim:7")


def test_a_voided_hold_cannot_be_committed(hold, payable):
    hold_void(hold=hold)

    with refused(HoldAlreadyResolved, match="already voided"):
        hold_commit(hold=hold, destination=payable)


def test_a_committed_hold_cannot_be_voided(hold, payable):
    hold_commit(hold=hold, destination=payable, amount=4_00)

    with refused(HoldAlreadyResolved, match="already committed"):
        hold_void(hold=hold)


def test_a_hold_is_committed_once_and_voided_once(hold, payable):
    hold_commit(hold=hold, destination=payable)
    with refused(HoldAlreadyResolved):
        hold_commit(hold=hold, destination=payable)

    other = hold_reserve(account=hold.account, amount=1_00)
    hold_void(hold=other)
    with refused(HoldAlreadyResolved):
        hold_void(hold=other)


@pytest.mark.parametrize("amount", [10_01, 0, -1, 4.0], ids=["more", "zero", "negative", "float"])
def test_a_commit_must_be_a_whole_amount_between_one_and_the_held_amount(hold, payable, amount):
    with refused(InvalidPosting):
        hold_commit(hold=hold, destination=payable, amount=amount)


@pytest.mark.parametrize("amount", [0, -1, 1.5, True], ids=["zero", "negative", "float", "bool"])
def test_a_hold_must_reserve_a_positive_whole_amount(funded_budget, amount):
    with refused(InvalidPosting):
        hold_reserve(account=funded_budget, amount=amount)


# --- Reversals happen once ----------------------------------------------------------------------


def test_a_transaction_is_reversed_only_once(reward):
    transaction_reverse(original=reward, reason="clawback")

    with refused(AlreadyReversed, match=f"#{reward.pk} is already reversed"):
        transaction_reverse(original=reward, reason="clawback again")


# --- The database refuses what the write path would never do -----------------------------------


def on_postgres_only(tamper, reason):
    return pytest.param(tamper, marks=pytest.mark.postgres, id=reason)


# Triggers refuse both UPDATE and DELETE of entries, transactions and resolved holds.
TAMPERING = [
    pytest.param(
        lambda tx: Entry.objects.filter(transaction=tx).update(amount=1),
        id="ORM update of entries",
    ),
    pytest.param(
        lambda tx: sql("UPDATE ledger_entry SET amount = amount * 2 WHERE transaction_id = %s", tx.pk),
        id="SQL update of an entry",
    ),
    pytest.param(
        lambda tx: Transaction.objects.filter(pk=tx.pk).update(reason="gift"),
        id="ORM update of a transaction",
    ),
    pytest.param(
        lambda tx: sql("UPDATE ledger_transaction SET reason = 'gift' WHERE id = %s", tx.pk),
        id="SQL update of a transaction",
    ),
    # Django's on_delete=PROTECT stops this one before it reaches the database.
    pytest.param(
        lambda tx: Transaction.objects.filter(pk=tx.pk).delete(),
        id="ORM delete of a transaction",
    ),
    on_postgres_only(lambda tx: Entry.objects.filter(transaction=tx).delete(), "ORM delete of entries"),
    on_postgres_only(
        lambda tx: sql("DELETE FROM ledger_entry WHERE transaction_id = %s", tx.pk),
        "SQL delete of an entry",
    ),
    on_postgres_only(
        lambda tx: sql("DELETE FROM ledger_transaction WHERE id = %s", tx.pk),
        "SQL delete of a transaction",
    ),
]


@pytest.mark.parametrize("tamper", TAMPERING)
def test_entries_and_transactions_are_append_only(reward, tamper):
    with refused(DatabaseError), transaction.atomic():
        tamper(reward)


@pytest.mark.parametrize(
    "set_balance",
    [
        lambda account: Account.objects.filter(pk=account.pk).update(balance=F("held") - 1),
        lambda account: sql("UPDATE ledger_account SET balance = held - 1 WHERE id = %s", account.pk),
    ],
    ids=["ORM", "SQL"],
)
def test_a_no_overdraft_balance_below_its_holds_is_refused_by_a_check(funded_budget, set_balance):
    hold_reserve(account=funded_budget, amount=10_00)

    with refused(IntegrityError), transaction.atomic():
        set_balance(funded_budget)


def test_an_account_that_allows_overdraft_may_go_below_zero(db):
    suspense = account_get_or_create(kind=AccountKind.SUSPENSE, currency="EUR", name="Suspense")
    funding = account_get_or_create(kind=AccountKind.BRAND_FUNDING, currency="EUR", brand_id=9)
    assert not suspense.no_overdraft

    transfer_post(source=suspense, destination=funding, amount=3_00, reason="unmatched_deposit")

    assert balance_of(suspense) == -3_00
    assert ledger_drift() == []


def test_held_money_is_never_negative(funded_budget):
    with refused(IntegrityError), transaction.atomic():
        Account.objects.filter(pk=funded_budget.pk).update(held=-1)


def test_an_entry_of_zero_is_refused_by_a_check(reward, payable):
    with refused(IntegrityError), transaction.atomic():
        Entry.objects.create(transaction=reward, account=payable, amount=0, currency="EUR")


def test_an_entry_in_a_currency_other_than_its_accounts_is_refused(reward, payable):
    """A composite foreign key."""
    with refused(IntegrityError), transaction.atomic():
        Entry.objects.create(transaction=reward, account=payable, amount=1, currency="USD")


@pytest.mark.parametrize("resolve", ["commit", "void"])
@pytest.mark.parametrize(
    "tamper",
    [
        lambda hold: Hold.objects.filter(pk=hold.pk).update(
            status=HoldStatus.RESERVED, resolved_at=None, committed_amount=0, commit_transaction=None
        ),
        lambda hold: Hold.objects.filter(pk=hold.pk).update(committed_amount=1),
        lambda hold: sql("UPDATE ledger_hold SET reference = 'moved' WHERE id = %s", hold.pk),
        on_postgres_only(lambda hold: Hold.objects.filter(pk=hold.pk).delete(), "delete"),
    ],
    ids=["reopen", "change_commit", "sql_update", "delete"],
)
def test_a_resolved_hold_never_changes_again(hold, payable, resolve, tamper):
    if resolve == "commit":
        hold_commit(hold=hold, destination=payable, amount=4_00)
    else:
        hold_void(hold=hold)

    with refused(DatabaseError), transaction.atomic():
        tamper(hold)


def test_an_open_holds_account_and_amount_are_fixed(hold, funding):
    with refused(DatabaseError), transaction.atomic():
        Hold.objects.filter(pk=hold.pk).update(amount=1_00)
    with refused(DatabaseError), transaction.atomic():
        Hold.objects.filter(pk=hold.pk).update(account=funding)


# --- PostgreSQL: every transaction balances, checked at COMMIT ----------------------------------


def accounts_for_commit_tests():
    budget = account_get_or_create(
        kind=AccountKind.CAMPAIGN_BUDGET, currency="EUR", brand_id=1, subject="campaign:1"
    )
    payable = account_get_or_create(
        kind=AccountKind.PARTICIPANT_PAYABLE, currency="EUR", brand_id=1, subject="participant:1"
    )
    return budget, payable


def entries_written_by_hand(legs):
    """Bypass the write path: a transaction row and its entries inserted with the ORM.

    (Balances are not touched, so these books would drift; only the COMMIT is under test here.)
    """
    with transaction.atomic():
        tx = Transaction.objects.create(reason="by_hand", fingerprint="-", brand_id=legs[0][0].brand_id)
        for account, amount in legs:
            Entry.objects.create(
                transaction=tx,
                account=account,
                amount=amount,
                currency=account.currency,
                brand_id=tx.brand_id,
            )
    return tx


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_unbalanced_entries_written_around_the_write_path_fail_at_commit():
    budget, payable = accounts_for_commit_tests()

    with refused(IntegrityError, match="does not balance in EUR: debits and credits differ by 1"):
        entries_written_by_hand([(budget, 5_00), (payable, -4_99)])

    assert Transaction.objects.filter(reason="by_hand").count() == 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_balanced_entries_written_leg_by_leg_commit_because_the_check_is_deferred():
    budget, payable = accounts_for_commit_tests()

    tx = entries_written_by_hand([(budget, 2_00), (budget, 3_00), (payable, -5_00)])

    assert Entry.objects.filter(transaction=tx).count() == 3


# --- PostgreSQL: every statement that adds legs has the rules checked over all of its postings' legs


def legs_inserted(tx, legs):
    """One raw INSERT of (account, amount) legs into tx, as the write path writes a batch's legs."""
    sql(
        "INSERT INTO ledger_entry (transaction_id, account_id, amount, currency, brand_id) "
        "SELECT %s, leg.account_id, leg.amount, 'EUR', %s FROM unnest(%s::bigint[], %s::bigint[]) "
        "AS leg(account_id, amount)",
        tx.pk,
        tx.brand_id,
        [account.pk for account, _amount in legs],
        [amount for _account, amount in legs],
    )


def transaction_by_sql(brand_id=1):
    return Transaction.objects.create(reason="by_sql", fingerprint="-", brand_id=brand_id)


def balance_checks_pending():
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM ledger_balance_pending")
        return cursor.fetchone()[0]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_an_unbalanced_posting_inserted_in_one_statement_is_refused_at_commit():
    budget, payable = accounts_for_commit_tests()

    unbalanced = "does not balance in EUR: debits and credits differ by 1"

    with refused(IntegrityError, match=unbalanced), transaction.atomic():
        legs_inserted(transaction_by_sql(), [(budget, 5_00), (payable, -4_99)])

    assert balance_checks_pending() == 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_leg_added_to_a_balanced_posting_by_a_later_statement_is_refused_at_commit():
    budget, payable = accounts_for_commit_tests()

    unbalanced = "does not balance in EUR: debits and credits differ by 1"

    with refused(IntegrityError, match=unbalanced), transaction.atomic():
        tx = transaction_by_sql()
        legs_inserted(tx, [(budget, 5_00), (payable, -5_00)])
        legs_inserted(tx, [(payable, 1)])


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_legs_that_balance_only_with_a_later_statement_commit_and_leave_no_check_behind():
    budget, payable = accounts_for_commit_tests()

    with transaction.atomic():
        tx = transaction_by_sql()
        legs_inserted(tx, [(budget, 5_00), (payable, -4_00)])
        legs_inserted(tx, [(payable, -1_00)])

    amounts = Entry.objects.filter(transaction=tx).values_list("amount", flat=True)
    assert sorted(amounts) == [-4_00, -1_00, 5_00]
    assert balance_checks_pending() == 0


@pytest.mark.postgres
def test_a_leg_of_another_brand_is_refused_when_its_statement_adds_it(reward, payable):
    """The statement's legs are all of the other brand: the check reads the posting's earlier ones."""
    other_brand = account_get_or_create(
        kind=AccountKind.PARTICIPANT_PAYABLE, currency="EUR", brand_id=2, subject="participant:2"
    )

    with refused(IntegrityError, match="between two brands"), transaction.atomic():
        legs_inserted(reward, [(other_brand, 1), (other_brand, -1)])


@pytest.mark.postgres
def test_a_leg_of_the_other_mode_is_refused_when_its_statement_adds_it(reward):
    test_bank = platform_bank(currency="EUR", livemode=False)

    with refused(IntegrityError, match="mixes test and live"), transaction.atomic():
        legs_inserted(reward, [(test_bank, 1), (test_bank, -1)])


@pytest.mark.postgres
def test_an_entry_needs_its_account_and_an_account_with_entries_stays(reward, payable):
    """One composite foreign key, (account_id, currency), holds both."""
    with refused(IntegrityError), transaction.atomic():
        sql(
            "INSERT INTO ledger_entry (transaction_id, account_id, amount, currency, brand_id) "
            "VALUES (%s, %s, 1, 'EUR', 1), (%s, %s, -1, 'EUR', 1)",
            reward.pk,
            10**12,
            reward.pk,
            payable.pk,
        )
    with refused(IntegrityError), transaction.atomic():
        sql("DELETE FROM ledger_account WHERE id = %s", payable.pk)
