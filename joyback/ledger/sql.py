"""Every SQL statement of the ledger that the ORM does not write, each with why it cannot."""

from django.db import connection

# Why raw: one statement for a whole batch with its ids back in order (unnest of column arrays); the
# ORM's bulk_create compiles SQL per object, which would run while the hot budget row is locked.
_TRANSACTIONS_INSERT = (
    "INSERT INTO ledger_transaction "
    "(reason, description, reference, idempotency_key, fingerprint, reverses_id, posted_at) "
    "SELECT r, d, ref, k, f, rev, %s FROM unnest("
    "%s::varchar[], %s::varchar[], %s::varchar[], %s::varchar[], %s::varchar[], %s::bigint[]"
    ") AS t(r, d, ref, k, f, rev) RETURNING id"
)
# Why raw: the same, for the entries of the batch.
_ENTRIES_INSERT = (
    "INSERT INTO ledger_entry (transaction_id, account_id, amount, currency) "
    "SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::varchar[])"
)


def transactions_insert(*, now, columns: list[list]) -> list[int]:
    """Insert transactions from column arrays (reason, description, reference, idempotency_key,
    fingerprint, reverses_id); their ids, in the order of the rows."""
    with connection.cursor() as cursor:
        cursor.execute(_TRANSACTIONS_INSERT, [now, *columns])
        # RETURNING follows the order of the unnested rows, as the ORM's own bulk insert relies on.
        return [row_id for (row_id,) in cursor.fetchall()]


def entries_insert(*, entries: list[tuple]) -> None:
    """Insert (transaction_id, account_id, amount, currency) rows in one statement."""
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
