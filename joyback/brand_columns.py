"""Migrations that give a table scoped through a parent its own brand_id: the column it will be
distributed by on Citus (docs/deploy.md, tests/test_sharding.py). Safe on a live database, and on
a rolling deploy while machines still on the previous release write rows without the column, so
the migrations that use these run with atomic = False:

1. the column is added nullable, without an index, and its foreign key NOT VALID: no scan, and
   the table's lock is held for a catalogue change only;
2. a BEFORE INSERT trigger, WHEN (NEW.brand_id IS NULL), names the brand of a row inserted
   without one after its parent's: the rows a machine on the previous release writes from then
   on, during the fill, during the check and after NOT NULL (constraints are checked after BEFORE
   triggers), so those machines keep working until the last one is upgraded. A row that sets its
   brand (the new release's code) pays the WHEN and nothing else;
3. it is filled from the parent in batches of ids, each batch its own short transaction;
4. where every row has a brand, NOT NULL is enforced through a CHECK ... NOT VALID that is then
   validated (which blocks no writes), so SET NOT NULL finds a valid check and skips its scan;
   the foreign key is validated the same way.

The fill runs again right before the check, for rows inserted between the column and its trigger
(or by a transaction that began before the trigger was made and committed after the first fill).

The triggers are a bridge for one release: the release after this one, when no machine writes
rows without a brand any more, drops them (brand_fill_trigger_drop). Each is named
<table>_0_brand_fill: PostgreSQL fires a table's BEFORE INSERT triggers in the order of their
names, and the 0 puts it before the project's others (<table>_...), so one added later sees the
brand. The append-only tables' triggers are BEFORE UPDATE OR DELETE; they let a fill trigger name
the brand of an earlier row that has none (the ledger's entries, joyback/ledger/sql.py), as they
let the backfill (BACKFILL_ALLOWED).
"""

from functools import partial

from django.db import migrations, models, transaction

from joyback import sql

BATCH = 10_000

# The append-only tables refuse every UPDATE; their triggers let a backfill name the brand of a
# row that has none, and nothing else (joyback/ledger and payouts migrations).
BACKFILL_SETTING = "joyback.brand_backfill"
# The first lines of such a trigger's function body.
BACKFILL_ALLOWED = f"""
    IF TG_OP = 'UPDATE' AND current_setting('{BACKFILL_SETTING}', true) = 'on'
       AND OLD.brand_id IS NULL AND to_jsonb(NEW) - 'brand_id' = to_jsonb(OLD) - 'brand_id' THEN
        RETURN NEW;
    END IF;"""


def _batches_run(apps, schema_editor, *, table: str, update: str) -> None:
    """Run `update` (placeholders: the first and the last id of a range) over the table in batches."""
    connection = schema_editor.connection
    for first, last in sql.brand_fill_ranges(connection=connection, table=table, batch=BATCH):
        # atomic = False: each batch commits on its own, so no lock outlives one batch.
        with transaction.atomic(using=connection.alias):
            sql.brand_fill_batch(
                connection=connection, setting=BACKFILL_SETTING, update=update, ids=(first, last)
            )


def parent_update(*, table: str, parent_table: str, parent_column: str) -> str:
    """The one UPDATE ... FROM that names each row's brand after its parent's, for one id range."""
    return (
        f"UPDATE {table} AS t SET brand_id = p.brand_id FROM {parent_table} AS p "  # noqa: S608
        f"WHERE p.id = t.{parent_column} AND p.brand_id IS NOT NULL AND t.brand_id IS NULL "
        "AND t.id BETWEEN %s AND %s"
    )


def brand_fill(*, table: str, update: str) -> migrations.RunPython:
    return migrations.RunPython(
        partial(_batches_run, table=table, update=update), migrations.RunPython.noop, elidable=False
    )


def _update(table: str, parent: tuple[str, str] | None, update: str | None) -> str:
    if update is not None:
        return update
    parent_table, parent_column = parent
    return parent_update(table=table, parent_table=parent_table, parent_column=parent_column)


def parent_fill(*, parent_table: str, parent_column: str) -> str:
    """The body of a fill trigger that names a new row's brand after its parent's."""
    return f"""
BEGIN
    SELECT p.brand_id INTO NEW.brand_id FROM {parent_table} AS p WHERE p.id = NEW.{parent_column};
    RETURN NEW;
END"""  # noqa: S608 (the names are the migration's, not input)


def _trigger_sql(table: str, body: str) -> list[str]:
    return [
        f"CREATE FUNCTION {table}_brand_fill() RETURNS trigger LANGUAGE plpgsql AS $${body}$$",
        f"CREATE TRIGGER {table}_0_brand_fill BEFORE INSERT ON {table} "
        f"FOR EACH ROW WHEN (NEW.brand_id IS NULL) EXECUTE FUNCTION {table}_brand_fill()",
    ]


def _trigger_drop_sql(table: str) -> list[str]:
    return [
        f"DROP TRIGGER IF EXISTS {table}_0_brand_fill ON {table}",
        f"DROP FUNCTION IF EXISTS {table}_brand_fill()",
    ]


def _trigger_body(parent: tuple[str, str] | None, insert_fill: str | None) -> str | None:
    if insert_fill is not None:
        return insert_fill
    if parent is None:
        return None
    parent_table, parent_column = parent
    return parent_fill(parent_table=parent_table, parent_column=parent_column)


def brand_fill_trigger(*, table: str, body: str) -> migrations.RunSQL:
    """The BEFORE INSERT trigger that names the brand of a row a machine on the previous release
    inserts without one; `body` is its function's (plpgsql, through its END)."""
    return migrations.RunSQL(_trigger_sql(table, body), _trigger_drop_sql(table))


def brand_fill_trigger_drop(
    *, table: str, parent: tuple[str, str] | None = None, insert_fill: str | None = None
):
    """Drop a table's fill trigger, once no machine inserts rows without a brand (the release after
    the one that added the column). Give the same `parent` or `insert_fill` as brand_column_add so
    that the migration runs back."""
    body = _trigger_body(parent, insert_fill)
    return migrations.RunSQL(
        _trigger_drop_sql(table), _trigger_sql(table, body) if body else migrations.RunSQL.noop
    )


def brand_column_add(
    *,
    model_name: str,
    table: str,
    field,
    parent: tuple[str, str] | None = None,
    update: str | None = None,
    insert_fill: str | None = None,
) -> list:
    """Add brand_id (a foreign key to the brand, or a plain integer where the app may not import
    campaigns), nullable and unindexed, and fill it from `parent` (its table and the column that
    points at it), or with `update` (two placeholders: the first and last id of a range).

    A row inserted without a brand from now on gets its parent's through a trigger, or through
    `insert_fill` (a trigger function's body, plpgsql through its END) where the
    table is filled with `update`. A table with `update` and no `insert_fill` gets no trigger: its
    rows are named by another table's (the ledger's transactions, by their entries')."""
    name = "brand" if field.is_relation else "brand_id"
    add_sql = [f"ALTER TABLE {table} ADD COLUMN brand_id bigint NULL"]
    if field.is_relation:
        add_sql.append(
            f"ALTER TABLE {table} ADD CONSTRAINT {table}_brand_id_fk FOREIGN KEY (brand_id) "
            "REFERENCES campaigns_brand (id) DEFERRABLE INITIALLY DEFERRED NOT VALID"
        )
    body = _trigger_body(parent, insert_fill)
    # The trigger comes first: a row inserted after the fill has read its ranges is named by it.
    trigger = [brand_fill_trigger(table=table, body=body)] if body else []
    return [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.AddField(model_name=model_name, name=name, field=field)],
            database_operations=[
                migrations.RunSQL(add_sql, reverse_sql=[f"ALTER TABLE {table} DROP COLUMN brand_id"])
            ],
        ),
        *trigger,
        brand_fill(table=table, update=_update(table, parent, update)),
    ]


def brand_column_require(
    *, model_name: str, table: str, field, parent: tuple[str, str] | None = None, update: str | None = None
) -> list:
    """Enforce NOT NULL (and validate the foreign key) once every row has its brand; `field` is the
    final one, not null."""
    name = "brand" if field.is_relation else "brand_id"
    check = f"{table}_brand_id_not_null"
    require_sql = [
        f"ALTER TABLE {table} ADD CONSTRAINT {check} CHECK (brand_id IS NOT NULL) NOT VALID",
        f"ALTER TABLE {table} VALIDATE CONSTRAINT {check}",
        f"ALTER TABLE {table} ALTER COLUMN brand_id SET NOT NULL",
        f"ALTER TABLE {table} DROP CONSTRAINT {check}",
    ]
    return [
        brand_fill(table=table, update=_update(table, parent, update)),
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.AlterField(model_name=model_name, name=name, field=field)],
            database_operations=[
                migrations.RunSQL(
                    require_sql, reverse_sql=[f"ALTER TABLE {table} ALTER COLUMN brand_id DROP NOT NULL"]
                )
            ],
        ),
        *brand_foreign_key_validate(table=table, field=field),
    ]


def brand_foreign_key_validate(*, table: str, field) -> list:
    if not field.is_relation:
        return []
    return [
        migrations.RunSQL(
            f"ALTER TABLE {table} VALIDATE CONSTRAINT {table}_brand_id_fk", migrations.RunSQL.noop
        )
    ]


def brand_foreign_key(*, null: bool) -> models.ForeignKey:
    return models.ForeignKey(
        "campaigns.brand",
        null=null,
        blank=null,
        db_index=False,
        on_delete=models.PROTECT,
        related_name="+",
    )
