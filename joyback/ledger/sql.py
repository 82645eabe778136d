"""Every SQL statement of the ledger that the ORM does not write, each with why it cannot."""

from django.db import connection, models

from joyback.brand_columns import BACKFILL_SETTING, parent_update

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
# Why raw: a trigger function, which the ORM has no word for. The fill trigger of ledger_entry
# (joyback.brand_columns), for the postings of a machine still on the previous release: it inserts
# the transaction first, then its entries, none with a brand. An entry takes its transaction's
# brand; the first entry on a brand's account names it, and with it the transaction and the
# entries inserted before it (a deposit's bank leg), as the backfill would (the append-only
# triggers let it, under the backfill's setting, only where a brand is missing). A transaction so
# needs no trigger of its own: it cannot know its brand before its entries. A platform posting's
# entries look up their transaction and account and stay without one.
ENTRY_FILL = f"""
DECLARE
    posting_brand bigint;
    backfill text;
BEGIN
    SELECT brand_id INTO posting_brand FROM ledger_transaction WHERE id = NEW.transaction_id;
    IF posting_brand IS NULL THEN
        SELECT brand_id INTO posting_brand FROM ledger_account WHERE id = NEW.account_id;
        IF posting_brand IS NULL THEN
            RETURN NEW;
        END IF;
        backfill := current_setting('{BACKFILL_SETTING}', true);
        PERFORM set_config('{BACKFILL_SETTING}', 'on', true);
        UPDATE ledger_transaction SET brand_id = posting_brand WHERE id = NEW.transaction_id;
        UPDATE ledger_entry SET brand_id = posting_brand
         WHERE transaction_id = NEW.transaction_id AND brand_id IS NULL;
        PERFORM set_config('{BACKFILL_SETTING}', coalesce(backfill, ''), true);
    END IF;
    NEW.brand_id := posting_brand;
    RETURN NEW;
END"""  # noqa: S608 (the setting's name is the project's, not input)


def brand_id_field(*, null: bool) -> models.BigIntegerField:
    """The ledger's brand_id column as the migrations declare it."""
    return models.BigIntegerField(null=True, blank=True) if null else models.BigIntegerField()
