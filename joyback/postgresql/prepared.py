"""The busiest writes as server-side prepared statements of their connection.

Django binds parameters on the client, so PostgreSQL parses and plans every statement anew; for a
multi-table INSERT run on every request that is a good part of the database's work. Prepared once
per connection, it is only executed after that."""

import time
from functools import cache

import psycopg
from django.db import connection
from django.db.models.expressions import DatabaseDefault


def prepared_fetchall(statement: str, params) -> list[tuple]:
    """Run the statement prepared on this connection (PostgreSQL only) and return its rows. It is
    logged like Django's own queries wherever those are (DEBUG, tests)."""
    began = time.monotonic()
    connection.validate_no_broken_transaction()
    cursor = connection.prepared_cursor()
    with connection.wrap_database_errors:
        cursor.execute(statement, params, prepare=True)
        rows = cursor.fetchall()
    if connection.queries_logged:
        connection.queries_log.append({"sql": statement, "time": f"{time.monotonic() - began:.3f}"})
    return rows


def prepared_pipeline(*statements: tuple[str, object]) -> list[list[tuple]]:
    """Several (statement, params), each prepared on this connection, sent at once and answered at
    once (libpq's pipeline mode): one round trip where each alone was one, so that a transaction
    holding a busy lock waits less for its own client. The rows of each, in order.

    The server still runs them one after another, each with its own snapshot, so a read sent after
    a lock sees what was committed while the lock was waited for, exactly as in separate calls.
    A statement's error is raised once all are answered; those after it are not run (the caller's
    transaction has failed then anyway). No Django query may run while the pipeline is open (the
    ORM reads a row count right after sending), so none does: only these statements are in it.
    For a transaction already begun: at its start psycopg sends its BEGIN and waits for it first,
    and outside one the statements would commit together, as one implicit transaction."""
    began = time.monotonic()
    connection.validate_no_broken_transaction()
    first = connection.prepared_cursor()
    raw = first.connection
    cursors = [first, *(psycopg.Cursor(raw) for _ in statements[1:])]
    with connection.wrap_database_errors:
        with raw.pipeline():
            for cursor, (statement, params) in zip(cursors, statements, strict=True):
                cursor.execute(statement, params, prepare=True)
        rows = [cursor.fetchall() for cursor in cursors]
    if connection.queries_logged:  # one entry: one round trip, as a test counting them sees it
        sent = ";\n".join(statement.strip() for statement, _ in statements)
        connection.queries_log.append({"sql": sent, "time": f"{time.monotonic() - began:.3f}"})
    return rows


@cache
def _model_columns(model) -> tuple[list[str], list[tuple]]:
    """A model's concrete fields' attribute names, and those whose database value Django converts
    on reading (a JSONField's text): (position, field, its column, its converters)."""
    fields = model._meta.concrete_fields
    converting = []
    for position, field in enumerate(fields):
        column = field.get_col(model._meta.db_table)
        converters = field.get_db_converters(connection) + connection.ops.get_db_converters(column)
        if converters:
            converting.append((position, column, converters))
    return [field.attname for field in fields], converting


def model_columns_sql(model, alias: str) -> str:
    """Every concrete column of `model` under `alias`, in the order model_from_row reads them."""
    return ", ".join(f"{alias}.{field.column}" for field in model._meta.concrete_fields)


def model_width(model) -> int:
    return len(model._meta.concrete_fields)


def model_from_row(model, values):
    """A model instance from its columns as a statement of model_columns_sql returned them, with
    the conversions Django's own queries apply (so it is the instance the ORM would have made)."""
    names, converting = _model_columns(model)
    values = list(values)
    for position, column, converters in converting:
        value = values[position]
        for converter in converters:
            value = converter(value, column, connection)
        values[position] = value
    return model.from_db(connection.alias, names, values)


@cache
def _insert_statement(model, fields: tuple) -> str:
    table, pk = model._meta.db_table, model._meta.pk.column
    columns = ", ".join(field.column for field in fields)
    values = ", ".join(["%s"] * len(fields))
    return f"INSERT INTO {table} ({columns}) VALUES ({values}) RETURNING {pk}"  # noqa: S608 (the model's own)


def prepared_insert(obj) -> None:
    """obj saved as a new row by a prepared INSERT of all its fields, as Model.save() would write
    them (each field's pre_save and database value; a field left to its database default is left
    out); obj.pk is the new row's. For a model without save() logic or signals of its own."""
    (row,) = prepared_fetchall(*insert_statement(obj))
    inserted(obj, row)


def insert_statement(obj) -> tuple[str, list]:
    """prepared_insert's statement and parameters, to send in a prepared_pipeline; inserted() with
    the row it returned then marks obj saved."""
    model = type(obj)
    fields, values = [], []
    for field in model._meta.concrete_fields:
        if field.primary_key and obj.pk is None:
            continue
        value = field.pre_save(obj, True)
        if isinstance(value, DatabaseDefault):
            continue
        fields.append(field)
        values.append(field.get_db_prep_save(value, connection))
    return _insert_statement(model, tuple(fields)), values


def inserted(obj, row: tuple) -> None:
    obj.pk = row[0]
    obj._state.adding, obj._state.db = False, connection.alias
