"""Every SQL statement of the payouts app that the ORM cannot say, each with the reason it cannot.
The services call these; nothing else in payouts runs SQL of its own."""

import json

import psycopg
from django.db import connection
from django.utils import timezone

from campaigns.models import Brand
from joyback.postgresql.prepared import prepared_fetchall
from payouts.models import (
    BrandFundingReference,
    Notification,
    PayeeAccount,
    PayeeSubmission,
    Payout,
    SandboxBalanceAccount,
    SandboxBankAccount,
    SandboxBankEvent,
    SandboxBankMessage,
    SandboxBankPayment,
)
from payouts.models.transitions import RECONCILIATION_EXCEPTION
from verification.models import ActionClaim, Participant


def _submission_accept(*, first: bool) -> str:
    # first: the claim flow's form, which takes details only from a person who has none on file or
    # waiting (payouts.payees.changes.payee_details_on_file). Asked in this statement rather than
    # before it, the check costs the request no statements of its own: two ORM queries were half of
    # a claim's work in the web process.
    none_on_file = (
        f"AND NOT EXISTS (SELECT 1 FROM {PayeeAccount._meta.db_table} a WHERE a.participant_id = p.id) "  # noqa: S608
        f"AND NOT EXISTS (SELECT 1 FROM {PayeeSubmission._meta.db_table} w WHERE w.participant_id = p.id) "
        if first
        else ""
    )
    insert = (
        f"INSERT INTO {PayeeSubmission._meta.db_table} (id, participant_id, brand_id, details, created_at) "  # noqa: S608
        f"SELECT gen_random_uuid(), p.id, p.brand_id, %s, %s FROM {Participant._meta.db_table} p "
        "WHERE p.id = %s AND p.brand_id = %s "
        f"AND EXISTS (SELECT 1 FROM {ActionClaim._meta.db_table} c WHERE c.participant_id = p.id) "
        f"{none_on_file}RETURNING id, participant_id"
    )
    return (
        f"WITH s AS ({insert}) "  # noqa: S608
        f"SELECT s.id, p.token FROM s JOIN {Participant._meta.db_table} p ON p.id = s.participant_id"
    )


_SUBMISSION_ACCEPT = {first: _submission_accept(first=first) for first in (False, True)}


def payee_submission_insert(values, *, first: bool = False) -> tuple:
    """The ORM has no INSERT ... SELECT ... WHERE EXISTS returning a joined column: one prepared
    statement stores the details only for a participant of the brand with a claim (with `first`,
    only while no details of theirs are on file or waiting), and answers with the new id and the
    participant's token, or (None, None)."""
    return (prepared_fetchall(_SUBMISSION_ACCEPT[first], values) or [(None, None)])[0]


_FUNDING_REFERENCE = (
    f"WITH found AS (SELECT reference FROM {BrandFundingReference._meta.db_table} WHERE brand_id = %s), "  # noqa: S608
    f"made AS (INSERT INTO {BrandFundingReference._meta.db_table} (brand_id, reference, created_at) "
    "SELECT %s, %s, %s WHERE NOT EXISTS (SELECT 1 FROM found) ON CONFLICT DO NOTHING RETURNING reference) "
    "SELECT reference FROM found UNION ALL SELECT reference FROM made"
)


def brand_funding_reference(*, brand_id: int, new: str, now) -> str | None:
    """The ORM's get_or_create reads, then writes on a miss: a page showing the reference asked one
    statement more on a brand's first visit than on the next. One statement answers the brand's
    reference, or stores `new` as it (no write when it has one); None when it could not (another
    brand's reference is `new`, or a request at the same moment stored the brand's first: ask again).
    On the primary: a replica that lags would not see a reference just made."""
    with connection.cursor() as cursor:
        cursor.execute(_FUNDING_REFERENCE, [brand_id, brand_id, new, now])
        row = cursor.fetchone()
    return row[0] if row else None


def transfer_event_insert(params) -> list[tuple]:
    """The ORM's bulk_create(ignore_conflicts=True) does not return the new row's id: INSERT ... ON
    CONFLICT DO NOTHING RETURNING id, prepared, stores a webhook once and says whether it was new."""
    return prepared_fetchall(
        "INSERT INTO payouts_transferevent (provider, event_id, payload, received_at, attempts) "
        "VALUES (%s, %s, %s::jsonb, %s, 0) ON CONFLICT (provider, event_id) DO NOTHING RETURNING id",
        params,
    )


def advisory_xact_locks(keys) -> None:
    """The ORM has no advisory locks: transaction-scoped locks on each key, in the order given."""
    with connection.cursor() as cursor:
        for key in keys:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])


def advisory_xact_lock_pairs(pairs) -> None:
    """The ORM has no advisory locks: transaction-scoped locks on (space, key) pairs, in order."""
    with connection.cursor() as cursor:
        for space, key in pairs:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [space, key])


# Django's psycopg cursors bind parameters on the client: bytes travel as an escaped literal twice
# their size that the server parses back (for a 50 MB statement, more CPU than reading it). A
# statement's file goes as a binary parameter bound by the server, and comes back as binary.
def statement_file_store(*, import_id: int, data: bytes) -> None:
    """The file of a statement import, stored in the caller's transaction: the ORM would send it as
    a literal (above)."""
    connection.ensure_connection()
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute("UPDATE payouts_statementimport SET data = %b WHERE id = %s", [data, import_id])


def statement_file(*, import_id: int) -> bytes:
    """The file of a statement import, as stored: the ORM would read it back as text (hex), twice its
    size to decode."""
    connection.ensure_connection()
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute("SELECT data FROM payouts_statementimport WHERE id = %s", [import_id], binary=True)
        (data,) = cursor.fetchone()
    return bytes(data)


def statement_lines_copy(rows, columns) -> tuple[list[int], int, list[int]]:
    """The ORM has no COPY: statement lines go through a scratch table, because COPY cannot skip a
    line seen before (same entry, same transaction) the way INSERT ... ON CONFLICT does.

    A line that only confirms what its payout already knows (a debit for a payout already settled
    or since returned, in the same amount and currency, the first line for it in the file and the
    first anyone has for that payout) is written matched to it at once: writing it new and matching
    it afterwards wrote every such line twice (a 100,000-line statement is nearly all of them).
    Every other line is written new for the matcher to decide one by one. The "no statement line"
    exceptions the matched lines answer are resolved in the same transaction (the declared step
    "resolve", payouts.models.transitions).

    (ids of the lines written new or matched, in file order; how many were written matched; ids of
    the exceptions resolved)."""
    kept = [column for column in columns if column not in ("state", "brand_id")]
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMPORARY TABLE statementline_incoming ON COMMIT DROP AS "
            "SELECT 0 AS position, {columns} FROM payouts_statementline WITH NO DATA".replace(
                "{columns}", ", ".join(columns)
            )
        )
        with cursor.copy(
            "COPY statementline_incoming (position, {columns}) FROM STDIN".replace(
                "{columns}", ", ".join(columns)
            )
        ) as copy:
            for position, row in enumerate(rows):
                copy.write_row((position, *row))
        cursor.execute("ANALYZE statementline_incoming")
        # In file order, so the lines' ids (and the order the rest are matched in) follow the file.
        cursor.execute(
            """
            WITH confirms AS (
                SELECT DISTINCT ON (i.end_to_end_id) i.position, p.id AS payout_id, p.brand_id
                FROM statementline_incoming i
                JOIN payouts_statement s ON s.id = i.statement_id
                JOIN payouts_payout p ON p.end_to_end_id = i.end_to_end_id
                WHERE i.state = 'new' AND i.kind = 'payout' AND NOT i.credit
                  AND p.status IN ('settled', 'returned')
                  AND p.amount = i.amount AND p.currency = i.currency
                  AND (s.brand_id IS NULL OR s.brand_id = p.brand_id)
                  AND NOT EXISTS (
                      SELECT 1 FROM payouts_statementline o
                      WHERE o.payout_id = p.id AND NOT o.credit AND o.kind IN ('payout', 'batch')
                  )
                ORDER BY i.end_to_end_id, i.position
            )
            INSERT INTO payouts_statementline ({kept}, state, brand_id, payout_id, created_at)
            SELECT {incoming}, CASE WHEN c.payout_id IS NULL THEN i.state ELSE 'matched' END,
                   coalesce(c.brand_id, i.brand_id), c.payout_id, %s
            FROM statementline_incoming i LEFT JOIN confirms c ON c.position = i.position
            ORDER BY i.position ON CONFLICT DO NOTHING
            RETURNING id, state, payout_id
            """.replace("{kept}", ", ".join(kept)).replace(
                "{incoming}", ", ".join(f"i.{column}" for column in kept)
            ),
            [timezone.now()],
        )
        written = sorted(cursor.fetchall())
        cursor.execute("DROP TABLE statementline_incoming")
        ids = [row[0] for row in written if row[1] in ("new", "matched")]
        payout_ids = [row[2] for row in written if row[1] == "matched"]
        resolved = []
        if payout_ids:
            resolve = RECONCILIATION_EXCEPTION.step("resolve")
            cursor.execute(
                """
                UPDATE payouts_reconciliationexception e SET status = %s, resolved_at = now()
                FROM unnest(%s::bigint[]) AS m(payout_id)
                WHERE e.payout_id = m.payout_id AND e.reason = 'no_statement_line' AND e.status = ANY(%s)
                RETURNING e.id
                """,
                [resolve.target, payout_ids, list(resolve.sources)],
            )
            resolved = [row[0] for row in cursor.fetchall()]
    return ids, len(payout_ids), resolved


def application_name_set(name: str) -> None:
    """The ORM cannot set a session parameter: names this connection in pg_stat_activity."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('application_name', %s, false)", [name])


def application_name_reset() -> None:
    """The ORM cannot reset a session parameter: back to the name the connection was opened with."""
    with connection.cursor() as cursor:
        cursor.execute("RESET application_name")


def payouts_settle(*, ids, references, step, now) -> dict[int, str]:
    """A batch of payouts settled in one statement, each with the bank's own reference: an ORM
    update sets one value for all rows and cannot say what each row was before. Only rows still
    in one of the declared step's sources (payouts.models.transitions), locked in id order; payout
    id -> the status it left."""
    table = Payout._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} AS p SET status = %s, reason_code = '', settled_at = %s, "  # noqa: S608
            "next_check_at = NULL, updated_at = %s, "
            "psp_reference = COALESCE(NULLIF(v.reference, ''), p.psp_reference) "
            "FROM unnest(%s::bigint[], %s::varchar[]) AS v(id, reference), "
            f"(SELECT id, status FROM {table} WHERE id = ANY(%s) AND status = ANY(%s) "
            "ORDER BY id FOR UPDATE) AS old "
            "WHERE p.id = v.id AND old.id = p.id RETURNING p.id, old.status",
            [step.target, now, now, list(ids), list(references), list(ids), list(step.sources)],
        )
        return dict(cursor.fetchall())


def notifications_insert(*, rows, kind: str, context: dict, now) -> list[int]:
    """The ORM's bulk_create(ignore_conflicts=True) does not say which rows were new: INSERT ... ON
    CONFLICT DO NOTHING RETURNING stores (participant id, payee id, payout id, brand id, channel,
    key, user id) rows once and answers with the ids of the new ones, which are the ones to send."""
    columns = (list(column) for column in zip(*rows, strict=True))
    participants, payees, payouts, brands, channels, keys, users = columns
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {Notification._meta.db_table} "  # noqa: S608
            "(participant_id, payee_id, payout_id, user_id, brand_id, kind, channel, key, context, "
            "attempts, provider_message_id, created_at) "
            "SELECT r, e, p, u, b, %s, c, k, %s::jsonb, 0, '', %s "
            "FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::bigint[], %s::bigint[], "
            "%s::varchar[], %s::varchar[]) AS t(r, e, p, u, b, c, k) "
            "ON CONFLICT (key) DO NOTHING RETURNING id",
            [kind, json.dumps(context), now, participants, payees, payouts, users, brands, channels, keys],
        )
        return [row_id for (row_id,) in cursor.fetchall()]


def notifications_claim(*, ids, now) -> list[int]:
    """An ORM update does not say which rows it changed: the unsent ones among `ids` marked sent
    (claimed before the message goes)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Notification._meta.db_table} SET sent_at = %s "  # noqa: S608
            "WHERE id = ANY(%s) AND sent_at IS NULL RETURNING id",
            [now, list(ids)],
        )
        return [row_id for (row_id,) in cursor.fetchall()]


_DUE_CLAIM = (
    f"WITH due AS (SELECT id FROM {Participant._meta.db_table} "  # noqa: S608
    "WHERE payout_due_at <= %s ORDER BY payout_due_at LIMIT %s FOR NO KEY UPDATE SKIP LOCKED) "
    f"UPDATE {Participant._meta.db_table} AS p SET payout_due_at = NULL "
    f"FROM due, {Brand._meta.db_table} AS b WHERE p.id = due.id AND b.id = p.brand_id "
    "RETURNING p.id, p.brand_id, b.verified_at"
)


def participants_due_claim(*, now, limit: int) -> list[tuple]:
    """An ORM update neither takes its rows FOR NO KEY UPDATE SKIP LOCKED nor says which rows it
    changed: up to `limit` people due by `now` that no other worker holds, oldest mark first, have
    their mark cleared in one prepared statement, which answers (participant id, brand id, the
    brand's verified_at) for each. Workers racing each other take disjoint people."""
    return prepared_fetchall(_DUE_CLAIM, [now, limit])


_SANDBOX_TRANSFER_READ = (
    f"SELECT (SELECT id FROM {SandboxBalanceAccount._meta.db_table} WHERE account_id = %s), "  # noqa: S608
    f"(SELECT id FROM {SandboxBankPayment._meta.db_table} WHERE idempotency_key = %s), "
    f"(SELECT outcome FROM {SandboxBankAccount._meta.db_table} WHERE account = %s)"
)


def sandbox_transfer_read(*, balance_account_id: str, idempotency_key: str | None, account: str) -> tuple:
    """What the sandbox bank looks up for a transfer request, in one prepared statement where the
    ORM would take three (a query per model): (the brand's balance account id or None, the id of
    the payment the Idempotency-Key already made or None, the tester's outcome for the creditor's
    account or None). Each column is unique, so each answer is one row at most."""
    return prepared_fetchall(_SANDBOX_TRANSFER_READ, [balance_account_id, idempotency_key, account])[0]


_SANDBOX_PAYMENT_FIELDS = (
    "end_to_end_id",
    "scheme",
    "amount",
    "currency",
    "creditor_name",
    "account",
    "outcome",
    "status",
    "reason_code",
    "bank_reference",
    "msg_id",
    "received_at",
    "settled_at",
    "return_due_at",
    "idempotency_key",
    "balance_account_id",
)
_SANDBOX_PAYMENT_BOOK = (
    f"WITH p AS (INSERT INTO {SandboxBankPayment._meta.db_table} "  # noqa: S608
    f"({', '.join(_SANDBOX_PAYMENT_FIELDS)}) "
    f"VALUES ({', '.join(['%s'] * len(_SANDBOX_PAYMENT_FIELDS))}) RETURNING id), "
    f"e AS (INSERT INTO {SandboxBankEvent._meta.db_table} (payment_id, kind, reason_code, created_at) "
    "SELECT p.id, k.kind, k.reason, %s FROM p, "
    "unnest(%s::varchar[], %s::varchar[]) WITH ORDINALITY AS k(kind, reason, n) ORDER BY k.n), "
    f"m AS (INSERT INTO {SandboxBankMessage._meta.db_table} (kind, msg_id, xml, created_at) "
    "SELECT %s, %s, %s, %s WHERE %s) "
    "SELECT id FROM p"
)


def sandbox_payment_book(*, payment, events, message) -> int:
    """A payment order the sandbox bank received, its status events in order and its camt.054 (or
    None), stored in one prepared statement, which is one transaction by itself: the ORM would
    take three inserts in a transaction of their own, five round trips for every transfer. The
    payment's id."""
    fields = [getattr(payment, name) for name in _SANDBOX_PAYMENT_FIELDS]
    kinds, reasons = [kind for kind, _ in events], [reason for _, reason in events]
    if message is None:
        note = ["", "", b"", payment.received_at, False]
    else:
        note = [message.kind, message.msg_id, bytes(message.xml), message.created_at, True]
    params = [*fields, payment.received_at, kinds, reasons, *note]
    return prepared_fetchall(_SANDBOX_PAYMENT_BOOK, params)[0][0]
