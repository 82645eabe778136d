"""The busiest writes as server-side prepared statements of their connection.

Django binds parameters on the client, so PostgreSQL parses and plans every statement anew; for a
multi-table INSERT run on every request that is a good part of the database's work. Prepared once
per connection, it is only executed after that."""

import time

from django.db import connection


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
