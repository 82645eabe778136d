"""A rolling deploy of the release that gives the tables scoped through a parent their brand_id
(joyback.brand_columns): machines still on the previous release keep writing rows without the
column, during the migrations and after NOT NULL, and each row gets its parent's brand; the
migration that requires the column succeeds though such a row arrives between its fill and its
check."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from joyback import sql
from joyback.ledger.models import Account, Entry, Hold, Transaction
from joyback.ledger.services import account_for
from payouts.models import PayoutEvent
from verification.models import ActionClaim


def columns(table: str) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = %s ORDER BY ordinal_position",
            [table],
        )
        return [name for (name,) in cursor.fetchall() if name not in {"id", "brand_id"}]


def old_insert(table: str, *, like, **values) -> int:
    """Insert a row the way the previous release did: every column but brand_id, copied from the
    row `like` (an id) but for `values`; the new row's id."""
    names = columns(table)
    selected = ", ".join("%s" if name in values else name for name in names)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({', '.join(names)}) "
            f"SELECT {selected} FROM {table} WHERE id = %s RETURNING id",
            [*(values[name] for name in names if name in values), like],
        )
        return cursor.fetchone()[0]


def old_posting(legs: list[tuple[Account, int]]) -> int:
    """A posting as the previous release wrote it: the transaction, then its entries in one
    statement, neither with a brand."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO ledger_transaction (reason, description, reference, fingerprint, posted_at) "
            "VALUES ('by the previous release', '', '', '-', now()) RETURNING id"
        )
        (transaction_id,) = cursor.fetchone()
        cursor.execute(
            "INSERT INTO ledger_entry (transaction_id, account_id, amount, currency) "
            "SELECT %s, * FROM unnest(%s::bigint[], %s::bigint[], %s::varchar[])",
            [
                transaction_id,
                [account.pk for account, _ in legs],
                [amount for _, amount in legs],
                [account.currency for account, _ in legs],
            ],
        )
    return transaction_id


def old_hold(account: Account) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO ledger_hold (account_id, amount, status, committed_amount, reference, created_at) "
            "VALUES (%s, 100, 'reserved', 0, '', now()) RETURNING id",
            [account.pk],
        )
        return cursor.fetchone()[0]


def rows_to_copy(owed, summer):
    """A person owed a reward: their claim, another rule of the campaign, a payout event, the
    campaign's budget and the platform's bank account."""
    owed()
    claim = ActionClaim.objects.get()
    return (
        claim,
        summer.rules.exclude(pk=claim.rule_id).first(),
        PayoutEvent.objects.first(),
        Account.objects.get(brand_id=summer.brand_id, kind="campaign_budget"),
        account_for(kind="platform_bank", currency="EUR", brand_id=None, name="Platform bank"),
    )


@pytest.mark.postgres
@pytest.mark.django_db
def test_rows_the_previous_release_writes_get_their_parents_brand(owed, summer):
    claim, other_rule, event, budget, bank = rows_to_copy(owed, summer)
    suspense = account_for(kind="suspense", currency="EUR", brand_id=None, name="Suspense")

    new_claim = old_insert("verification_actionclaim", like=claim.pk, rule_id=other_rule.pk)
    new_event = old_insert("payouts_payoutevent", like=event.pk)
    hold = old_hold(budget)
    # The platform's leg comes first: the transaction learns its brand from the second.
    brands = old_posting([(bank, 1_00), (budget, -1_00)])
    platforms = old_posting([(bank, 1_00), (suspense, -1_00)])

    assert ActionClaim.objects.get(pk=new_claim).brand_id == summer.brand_id
    assert PayoutEvent.objects.get(pk=new_event).brand_id == summer.brand_id
    assert Hold.objects.get(pk=hold).brand_id == summer.brand_id
    assert Transaction.objects.get(pk=brands).brand_id == summer.brand_id
    assert set(Entry.objects.filter(transaction_id=brands).values_list("brand_id", flat=True)) == {
        summer.brand_id
    }
    assert Transaction.objects.get(pk=platforms).brand_id is None
    assert set(Entry.objects.filter(transaction_id=platforms).values_list("brand_id", flat=True)) == {None}


COLUMNS_ADDED = [
    ("ledger", "0007_brand_columns"),
    ("api", "0010_brand_columns"),
    ("campaigns", "0012_brand_columns"),
    ("verification", "0013_brand_columns"),
    ("payouts", "0017_brand_columns"),
]


def migrate(targets=None):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets or executor.loader.graph.leaf_nodes())


def nullable(table: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT is_nullable FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = %s AND column_name = 'brand_id'",
            [table],
        )
        return cursor.fetchone()[0] == "YES"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_column_is_required_though_the_previous_release_writes_between_fill_and_check(
    owed, summer, monkeypatch
):
    claim, other_rule, event, budget, bank = rows_to_copy(owed, summer)
    migrate(COLUMNS_ADDED)

    # A machine on the previous release writes right after the second fill has read which rows it
    # fills, before the check that every row has a brand.
    old_writes = {
        "ledger_transaction": lambda: old_posting([(bank, 1_00), (budget, -1_00)]),
        "ledger_hold": lambda: old_hold(budget),
        "verification_actionclaim": lambda: old_insert(
            "verification_actionclaim", like=claim.pk, rule_id=other_rule.pk
        ),
        "payouts_payoutevent": lambda: old_insert("payouts_payoutevent", like=event.pk),
    }
    written = {}
    ranges_read = sql.brand_fill_ranges

    def ranges_then_an_old_write(*, connection, table, batch):
        ranges = ranges_read(connection=connection, table=table, batch=batch)
        if table in old_writes and table not in written:
            written[table] = old_writes[table]()
        return ranges

    monkeypatch.setattr(sql, "brand_fill_ranges", ranges_then_an_old_write)
    migrate()

    assert written.keys() == old_writes.keys()
    assert Transaction.objects.get(pk=written["ledger_transaction"]).brand_id == summer.brand_id
    assert Hold.objects.get(pk=written["ledger_hold"]).brand_id == summer.brand_id
    assert ActionClaim.objects.get(pk=written["verification_actionclaim"]).brand_id == summer.brand_id
    assert PayoutEvent.objects.get(pk=written["payouts_payoutevent"]).brand_id == summer.brand_id
    assert not any(
        nullable(table) for table in ("ledger_hold", "verification_actionclaim", "payouts_payoutevent")
    )
