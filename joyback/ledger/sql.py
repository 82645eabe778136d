"""Every SQL statement of the ledger that the ORM does not write, each with why it cannot."""

from django.db import connection, models

from joyback.brand_columns import parent_update

# Why raw: one statement for a whole batch with its ids back in order (unnest of column arrays); the
# ORM's bulk_create compiles SQL per object, which would run while the hot budget row is locked.
_TRANSACTIONS_INSERT = (
    "INSERT INTO ledger_transaction "
    "(reason, description, reference, idempotency_key, fingerprint, reverses_id, brand_id, posted_at) "
    "SELECT r, d, ref, k, f, rev, b, %s FROM unnest("
    "%s::varchar[], %s::varchar[], %s::varchar[], %s::varchar[], %s::varchar[], %s::bigint[], %s::bigint[]"
    ") AS t(r, d, ref, k, f, rev, b) RETURNING id"
)
# Why raw: the same, for the entries of the batch.
_ENTRIES_INSERT = (
    "INSERT INTO ledger_entry (transaction_id, account_id, amount, currency, brand_id) "
    "SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::varchar[], %s::bigint[])"
)


def transactions_insert(*, now, columns: list[list]) -> list[int]:
    """Insert transactions from column arrays (reason, description, reference, idempotency_key,
    fingerprint, reverses_id, brand_id); their ids, in the order of the rows."""
    with connection.cursor() as cursor:
        cursor.execute(_TRANSACTIONS_INSERT, [now, *columns])
        # RETURNING follows the order of the unnested rows, as the ORM's own bulk insert relies on.
        return [row_id for (row_id,) in cursor.fetchall()]


def entries_insert(*, entries: list[tuple]) -> None:
    """Insert (transaction_id, account_id, amount, currency, brand_id) rows in one statement."""
    with connection.cursor() as cursor:
        cursor.execute(_ENTRIES_INSERT, [list(column) for column in zip(*entries, strict=True)])


def balances_add(*, changes: list[tuple[int, int, int]]) -> None:
    """Add (account id, balance delta, held delta) to each account, in one statement."""
    # Why raw: an UPDATE ... FROM (VALUES ...) sets a different delta on each row at once; the ORM's
    # bulk_update writes values, not increments, and would need a CASE per row.
    values = ", ".join(["(%s::bigint, %s::bigint, %s::bigint)"] * len(changes))
    params = [value for change in changes for value in change]
    with connection.cursor() as cursor:
        # Only placeholders are formatted into the statement; the numbers travel as params.
        statement = (
            "UPDATE ledger_account AS a SET balance = a.balance + v.delta, held = a.held + v.held "  # noqa: S608
            f"FROM (VALUES {values}) AS v(id, delta, held) WHERE a.id = v.id"
        )
        cursor.execute(statement, params)


# The brand_id backfill of migrations 0007 and 0008 (joyback.brand_columns), per range of ids.
# Why raw: an UPDATE ... FROM a grouped join, one statement per batch; the ORM updates from
# subqueries per row.
# A transaction's brand from its entries' accounts, by the entries' transaction_id index; a
# posting made before the one-brand rule that touched two brands takes the lower id.
TRANSACTION_BRAND = """
UPDATE ledger_transaction AS t SET brand_id = b.brand_id
  FROM (SELECT e.transaction_id, min(a.brand_id) AS brand_id
          FROM ledger_entry e JOIN ledger_account a ON a.id = e.account_id
         WHERE a.brand_id IS NOT NULL AND e.transaction_id BETWEEN %s AND %s
         GROUP BY e.transaction_id) AS b
 WHERE t.id = b.transaction_id AND t.brand_id IS NULL
"""
ENTRY_BRAND = parent_update(
    table="ledger_entry", parent_table="ledger_transaction", parent_column="transaction_id"
)
HOLD_BRAND = parent_update(table="ledger_hold", parent_table="ledger_account", parent_column="account_id")


def brand_id_field(*, null: bool) -> models.BigIntegerField:
    """The ledger's brand_id column as the migrations declare it."""
    return models.BigIntegerField(null=True, blank=True) if null else models.BigIntegerField()
