"""Every SQL statement of compliance that the ORM does not write, each with why it cannot."""

from django.db import connection
from django.db.models.expressions import RawSQL

CHAIN_LOCK = 74_201  # first key of the advisory lock that serialises one brand's chain


def decision_chain_lock(*, brand_id: int) -> None:
    """Held to COMMIT: the next writer of this brand's chain reads this row as its previous."""
    # Why raw: an advisory lock is a PostgreSQL function with no ORM counterpart (and there is no
    # row to lock before a brand's first decision).
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [CHAIN_LOCK, brand_id])


def row_written():
    """An expression for the row's version in PostgreSQL (`xmin`, new on every write of the row),
    as text: what tells a process that a policy's terms it read before were written over."""
    # Why raw: xmin is a PostgreSQL system column the ORM has no field for.
    return RawSQL("xmin::text", ())
