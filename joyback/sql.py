"""Every SQL statement of the `joyback` package itself (sessions, health, the standing worker, the
migration lock, the re-encryption command) that the ORM does not write, each with why it cannot."""

from uuid import UUID

from django.db import DEFAULT_DB_ALIAS, connection, connections

# Why raw: the ORM builds this query anew on every page of the claim flow, which cost more than the
# database took to answer it.
_SESSION_SELECT = "SELECT session_data FROM {table} WHERE session_key = %s AND expire_date > %s"


def session_data_get(*, using: str, table: str, session_key: str, now) -> str | None:
    """A live session's encoded data, or None when it is unknown or expired."""
    with connections[using].cursor() as cursor:
        cursor.execute(_SESSION_SELECT.format(table=table), [session_key, now])
        row = cursor.fetchone()
    return row[0] if row else None


def querysets_any_exist(*, querysets) -> bool:
    """Whether any of the querysets has a row, in one statement."""
    # Why raw: the ORM selects EXISTS of one queryset at a time; one SELECT of several EXISTS of
    # unrelated tables is one round trip where an idle worker would otherwise make one per table.
    parts, params = [], []
    for rows in querysets:
        sql, part_params = rows.values("pk")[:1].query.sql_with_params()
        parts.append(f"EXISTS ({sql})")
        params.extend(part_params)
    if not parts:
        return False
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT " + " OR ".join(parts), params)
        return bool(cursor.fetchone()[0])


def standing_work_wait_seconds(*, querysets, gathered, now) -> float | None:
    """In one statement: 0 when any of `querysets` has a row; else the seconds until the first of
    the `gathered` kinds has a batch, each given as (rows, arrived field, window seconds, batch
    size): its oldest row due by `now` has waited the window, or a batch's worth are due (0 then);
    None when nothing is due at all."""
    # Why raw: as querysets_any_exist, one round trip for every kind; and the ORM cannot aggregate
    # over a sliced queryset inside another statement's column list (each `sql` is the ORM's own,
    # its values passed as parameters).
    parts, params = [], []
    for rows in querysets:
        sql, part_params = rows.values("pk")[:1].query.sql_with_params()
        parts.append(f"EXISTS ({sql})")
        params.extend(part_params)
    columns = [" OR ".join(parts) if parts else "false"]
    for rows, arrived, seconds, count in gathered:
        due = rows.filter(**{f"{arrived}__lte": now}).order_by(arrived).values(arrived)[: max(count, 1)]
        sql, part_params = due.query.sql_with_params()
        columns.append(
            "(SELECT CASE WHEN count(*) >= %s THEN 0 "  # noqa: S608
            "ELSE extract(epoch FROM min(due.arrived) - %s::timestamptz) + %s END "
            f"FROM ({sql}) AS due(arrived))"
        )
        params.extend([count, now, seconds, *part_params])
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(columns), params)
        any_ready, *waits = cursor.fetchone()
    if any_ready:
        return 0
    waits = [max(0.0, float(wait)) for wait in waits if wait is not None]
    return min(waits) if waits else None


# Why raw (both): advisory locks are PostgreSQL functions with no ORM counterpart.
def advisory_lock_try(key: int) -> bool:
    """A session lock on `key` unless another session holds it: held until advisory_unlock or the
    connection's end, not to the commit."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [key])
        return bool(cursor.fetchone()[0])


def advisory_unlock(key: int) -> None:
    """The lock advisory_lock_try took, given back (an advisory lock: no ORM counterpart)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_unlock(%s)", [key])


def advisory_xact_lock(key: int) -> None:
    """Waits for the transaction-scoped lock on `key`, held to the commit (an advisory lock: no
    ORM counterpart)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])


def database_ping() -> None:
    """Raises unless the database answers."""
    # Why raw: a probe of the connection itself, about no table or model.
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def replica_state(*, using: str) -> tuple[bool, bool, float | None]:
    """(in recovery, streaming from a primary, seconds its replay is behind) of the server behind
    `using`; the lag is 0 when everything received is replayed, None on a primary."""
    # Why raw: server functions about replication, about no table or model.
    with connections[using].cursor() as cursor:
        cursor.execute(
            "SELECT pg_is_in_recovery(), "
            "EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming'), "
            "CASE WHEN NOT pg_is_in_recovery() THEN NULL "
            "WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0 "
            "ELSE extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8 END"
        )
        return cursor.fetchone()


def encrypted_columns_batch(model, columns: list[str], *, after, size: int) -> list[tuple]:
    """(pk, *values) of the next `size` rows after primary key `after`, values as stored."""
    # Why raw: the ORM decrypts an encrypted field as it reads it; this reads the stored ciphertext.
    table, pk = model._meta.db_table, model._meta.pk.column
    quote = connection.ops.quote_name
    selected = ", ".join(quote(c) for c in [pk, *columns])
    where = f"WHERE {quote(pk)} > %s " if after is not None else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {selected} FROM {quote(table)} {where}ORDER BY {quote(pk)} LIMIT %s",  # noqa: S608
            [*([after] if after is not None else []), size],
        )
        return cursor.fetchall()


def encrypted_column_swap(model, column: str, *, pk, old: str, new: str) -> None:
    """Write `new` (ciphertext) where the column still holds `old` (compare and set)."""
    # Why raw: the ORM would encrypt the value again and compare decrypted values, not ciphertexts.
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {quote(model._meta.db_table)} SET {quote(column)} = %s "  # noqa: S608
            f"WHERE {quote(model._meta.pk.column)} = %s AND {quote(column)} = %s",
            [new, pk, old],
        )


def brand_fill_ranges(*, connection, table: str, batch: int) -> list[tuple]:
    """Inclusive (first, last) id ranges covering a table's rows without a brand (the brand_id
    backfill of joyback.brand_columns): `batch` integers apart, or 256 slices of the UUID space for
    a table keyed by UUIDs."""
    # Why raw: a migration's historical models have no such reads of the catalogue, and the range of
    # ids is one aggregate over a table the ORM would name per app.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT data_type FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = %s AND column_name = 'id'",
            [table],
        )
        if cursor.fetchone()[0] == "uuid":
            return [(UUID(int=i << 120), UUID(int=((i + 1) << 120) - 1)) for i in range(256)]
        cursor.execute(f"SELECT min(id), max(id) FROM {table} WHERE brand_id IS NULL")  # noqa: S608
        first, last = cursor.fetchone()
    if first is None:
        return []
    return [(start, start + batch - 1) for start in range(first, last + 1, batch)]


def brand_fill_batch(*, connection, setting: str, update: str, ids: tuple) -> None:
    """One batch of the brand_id backfill: `update` over one id range, with the setting that lets
    the append-only tables' triggers accept it."""
    # Why raw: an UPDATE ... FROM the parent table (the ORM updates from a subquery per row), and a
    # SET LOCAL, which the ORM has no word for.
    with connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL {setting} = 'on'")
        cursor.execute(update, list(ids))
