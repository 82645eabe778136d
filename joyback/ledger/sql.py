"""Every SQL statement of the ledger that the ORM does not write, each with why it cannot.

The statements of a posting run as server-side prepared statements of their connection
(joyback.postgresql.prepared): a reward posts on every approval, and parsing and planning them
anew each time was a good part of the database's work. Lists travel as arrays, so that a
statement's text does not change with the number of rows it writes.
"""

from django.db import connection, models

from joyback.brand_columns import BACKFILL_SETTING, parent_update
from joyback.ledger.models import Account, Transaction
from joyback.postgresql.prepared import (
    model_columns_sql,
    model_from_row,
    prepared_fetchall,
    prepared_pipeline,
)

_ACCOUNT_COLUMNS = [field.column for field in Account._meta.concrete_fields]
ACCOUNT_FIELDS = [field.attname for field in Account._meta.concrete_fields]

# Why raw: the accounts locked in id order and read in one statement; the ORM's select_for_update
# compiles the query anew on every call, while the hot budget row waits for it.
_ACCOUNTS_LOCK = (
    f"SELECT {', '.join(_ACCOUNT_COLUMNS)} FROM ledger_account "  # noqa: S608 (the model's own columns)
    "WHERE id = ANY(%s::bigint[]) ORDER BY id FOR NO KEY UPDATE"
)


def bigints(values) -> str:
    """Integers (or None) as the text of a bigint[]: for a batch's thousand ids and amounts, psycopg's
    array dumper, which adapts element by element, cost more of a call's time than the statement."""
    return "{" + ",".join("NULL" if value is None else str(int(value)) for value in values) + "}"


def accounts_lock(*, account_ids: list[int]) -> list[tuple]:
    """Row-lock these accounts in ascending id order; their rows (ACCOUNT_FIELDS), in that order."""
    return prepared_fetchall(_ACCOUNTS_LOCK, [bigints(sorted(set(account_ids)))])


def accounts_lock_statement(*, account_ids: list[int]) -> tuple[str, list]:
    """accounts_lock's statement and parameters, to send in a prepared_pipeline."""
    return _ACCOUNTS_LOCK, [bigints(sorted(set(account_ids)))]


def accounts_lock_after(*statements, account_ids: list[int]) -> tuple[list[list[tuple]], list[tuple]]:
    """The caller's prepared (statement, params), then accounts_lock, in one round trip: the rows
    of each of the caller's, and the accounts' rows."""
    *rows, locked = prepared_pipeline(*statements, accounts_lock_statement(account_ids=account_ids))
    return rows, locked


# An account's terms as a posting plans against them: what accounts_lock reads but the fields a
# posting never looks at (its created_at alone, a timestamp parsed in Python, cost more than the
# rest of a row).
PLAN_FIELDS = ["id", "kind", "currency", "name", "no_overdraft", "balance", "held"]
# Why raw: as _ACCOUNTS_LOCK.
_PLAN_LOCK = (
    f"SELECT {', '.join(PLAN_FIELDS)} FROM ledger_account "  # noqa: S608 (the model's own columns)
    "WHERE id = ANY(%s::bigint[]) ORDER BY id FOR NO KEY UPDATE"
)
# Why raw: the same rows read without a lock (a batch plans against them before it locks).
_PLAN_READ = (
    f"SELECT {', '.join(PLAN_FIELDS)} FROM ledger_account "  # noqa: S608 (the model's own columns)
    "WHERE id = ANY(%s::bigint[]) ORDER BY id"
)


def plan_lock(*, account_ids: list[int]) -> list[tuple]:
    """accounts_lock, the rows' PLAN_FIELDS only."""
    return prepared_fetchall(_PLAN_LOCK, [bigints(sorted(set(account_ids)))])


def plan_read(*, account_ids: list[int]) -> list[tuple]:
    """The rows' PLAN_FIELDS as committed now, without a lock."""
    return prepared_fetchall(_PLAN_READ, [bigints(sorted(set(account_ids)))])


# Why raw: the keys as one array parameter, so the statement is prepared once; the ORM's __in
# compiles a statement with a placeholder per key on every call (500 for a batch).
_TRANSACTIONS_BY_KEY = (
    f"SELECT {model_columns_sql(Transaction, 't')} FROM ledger_transaction t "  # noqa: S608 (the model's columns)
    "WHERE t.idempotency_key = ANY(%s::varchar[])"
)


def transactions_by_key(*, keys: list[str]) -> dict[str, Transaction]:
    """The transactions already posted under these idempotency keys, by key."""
    rows = prepared_fetchall(_TRANSACTIONS_BY_KEY, [keys])
    found = (model_from_row(Transaction, row) for row in rows)
    return {transaction.idempotency_key: transaction for transaction in found}


def balance_checks_now() -> None:
    """The deferred check that every transaction sums to zero run now for what this transaction
    wrote so far, and deferred again for what it writes later (SET CONSTRAINTS has no ORM word)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SET CONSTRAINTS ledger_entry_balanced IMMEDIATE; SET CONSTRAINTS ledger_entry_balanced DEFERRED"
        )


_COLUMNS = ", ".join(_ACCOUNT_COLUMNS)
# Why raw: a brand's account made when it is missing, or the one already there, in one statement
# and without a savepoint: INSERT ... ON CONFLICT DO NOTHING, with a read of the row it conflicted
# with. The ORM's get_or_create reads, then inserts inside a savepoint (four round trips).
_ACCOUNT_OPEN = (
    "WITH made AS (INSERT INTO ledger_account "  # noqa: S608 (only the model's own columns are formatted in)
    "(kind, currency, brand_id, subject, name, no_overdraft, balance, held, livemode, created_at) "
    "VALUES (%(kind)s, %(currency)s, %(brand_id)s, %(subject)s, %(name)s, %(no_overdraft)s, 0, 0, "
    "%(livemode)s, %(now)s) "
    "ON CONFLICT (kind, currency, brand_id, subject) WHERE brand_id IS NOT NULL DO NOTHING "
    f"RETURNING {_COLUMNS}) "
    f"SELECT {_COLUMNS} FROM made UNION ALL (SELECT {_COLUMNS} FROM ledger_account "
    "WHERE kind = %(kind)s AND currency = %(currency)s AND brand_id = %(brand_id)s "
    "AND subject = %(subject)s) LIMIT 1"
)


def account_open(
    *,
    kind: str,
    currency: str,
    brand_id: int,
    subject: str,
    name: str,
    no_overdraft: bool,
    livemode: bool,
    now,
) -> tuple | None:
    """The brand's account (ACCOUNT_FIELDS), made if missing; None when another transaction made it
    while this statement ran (its row is not in this statement's snapshot: read it again)."""
    rows = prepared_fetchall(
        _ACCOUNT_OPEN,
        {
            "kind": kind,
            "currency": currency,
            "brand_id": brand_id,
            "subject": subject,
            "name": name,
            "no_overdraft": no_overdraft,
            "livemode": livemode,
            "now": now,
        },
    )
    return rows[0] if rows else None


# Why raw: one statement for a whole batch with its ids back in order (unnest of column arrays); the
# ORM's bulk_create compiles SQL per object, which would run while the hot budget row is locked. A
# key another writer committed meanwhile is skipped (ON CONFLICT), not an error: no savepoint is
# needed around the insert, and the caller sees which keys were taken from the rows returned.
_TRANSACTIONS_INSERT = (
    "INSERT INTO ledger_transaction "
    "(reason, description, reference, idempotency_key, fingerprint, reverses_id, brand_id, posted_at) "
    "SELECT r, d, ref, k, f, rev, b, %s FROM unnest("
    "%s::varchar[], %s::varchar[], %s::varchar[], %s::varchar[], %s::varchar[], %s::bigint[], %s::bigint[]"
    ") AS t(r, d, ref, k, f, rev, b) ON CONFLICT (idempotency_key) DO NOTHING RETURNING id, idempotency_key"
)
# Why raw: the batch's entries and the balance change of every account it touched, in one statement
# (a data-modifying WITH): the ORM has no multi-row insert from arrays, and its bulk_update writes
# values, not increments.
_ENTRIES_INSERT = (
    "WITH entries AS (INSERT INTO ledger_entry (transaction_id, account_id, amount, currency, brand_id) "
    "SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::varchar[], %s::bigint[])) "
    "UPDATE ledger_account AS a SET balance = a.balance + v.delta, held = a.held + v.held "
    "FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[]) AS v(id, delta, held) WHERE a.id = v.id "
    "RETURNING a.id"
)
# Why raw: an UPDATE from arrays sets a different delta on each row at once; the ORM's bulk_update
# writes values, not increments, and would need a CASE per row.
_BALANCES_ADD = (
    "UPDATE ledger_account AS a SET balance = a.balance + v.delta, held = a.held + v.held "
    "FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[]) AS v(id, delta, held) WHERE a.id = v.id "
    "RETURNING a.id"
)


# Why raw: one posting whole in one statement (its transaction, entries and balance changes: data-
# modifying WITH clauses), the common case of a single reward; nothing is written when its key is
# taken (ON CONFLICT), and then no row comes back.
_POSTING_INSERT = (
    "WITH t AS (INSERT INTO ledger_transaction "
    "(reason, description, reference, idempotency_key, fingerprint, reverses_id, brand_id, posted_at) "
    "VALUES (%s, %s, %s, %s, %s, %s::bigint, %s::bigint, %s) "
    "ON CONFLICT (idempotency_key) DO NOTHING RETURNING id, idempotency_key), "
    "e AS (INSERT INTO ledger_entry (transaction_id, account_id, amount, currency, brand_id) "
    "SELECT t.id, x.a, x.m, x.c, %s::bigint FROM t, unnest(%s::bigint[], %s::bigint[], %s::varchar[]) "
    "AS x(a, m, c)), "
    "u AS (UPDATE ledger_account AS a SET balance = a.balance + v.delta, held = a.held + v.held "
    "FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[]) AS v(id, delta, held) "
    "WHERE a.id = v.id AND EXISTS (SELECT FROM t)) "
    "SELECT id, idempotency_key FROM t"
)


def posting_insert(
    *, now, row: list, legs: list[tuple], changes: list[tuple[int, int, int]], after=()
) -> list[tuple]:
    """One transaction (reason, description, reference, idempotency_key, fingerprint, reverses_id,
    brand_id), its legs (account_id, amount, currency) and the balance changes, in one statement;
    [(id, idempotency_key)], or [] when its key was taken. after: the caller's (statement, params),
    sent with it in one round trip and run after it (postings_post's)."""
    params = [
        *row,
        now,
        row[6],
        *(list(column) for column in zip(*legs, strict=True)),
        *_changes_columns(changes),
    ]
    if after:
        return prepared_pipeline((_POSTING_INSERT, params), *after)[0]
    return prepared_fetchall(_POSTING_INSERT, params)


def transactions_insert(*, now, columns: list[list]) -> list[tuple[int, str | None]]:
    """Insert transactions from column arrays (reason, description, reference, idempotency_key,
    fingerprint, reverses_id, brand_id); (id, idempotency_key) of the rows inserted, in the order of
    the rows given. A row whose key is already taken is left out."""
    # RETURNING follows the order of the unnested rows, as the ORM's own bulk insert relies on.
    reasons, descriptions, references, keys, fingerprints, reverses, brands = columns
    return prepared_fetchall(
        _TRANSACTIONS_INSERT,
        [now, reasons, descriptions, references, keys, fingerprints, bigints(reverses), bigints(brands)],
    )


def _changes_columns(changes: list[tuple[int, int, int]]) -> list[str]:
    return [
        bigints(change[0] for change in changes),
        bigints(change[1] for change in changes),
        bigints(change[2] for change in changes),
    ]


def entries_insert(*, entries: list[tuple], changes: list[tuple[int, int, int]]) -> None:
    """Insert (transaction_id, account_id, amount, currency, brand_id) rows and add (account id,
    balance delta, held delta) to each account, in one statement."""
    transaction_ids, account_ids, amounts, currencies, brands = zip(*entries, strict=True)
    prepared_fetchall(
        _ENTRIES_INSERT,
        [
            bigints(transaction_ids),
            bigints(account_ids),
            bigints(amounts),
            list(currencies),
            bigints(brands),
            *_changes_columns(changes),
        ],
    )


def balances_add(*, changes: list[tuple[int, int, int]]) -> None:
    """Add (account id, balance delta, held delta) to each account, in one statement."""
    prepared_fetchall(_BALANCES_ADD, _changes_columns(changes))


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
