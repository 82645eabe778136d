"""Transactions, entries and holds carry their brand (the distribution column past one primary,
docs/deploy.md): a transaction the one brand among its accounts, its entries the transaction's, a
hold its account's. The platform's own postings (its bank, provider balance, suspense) name none.

Entries and transactions are append-only and resolved holds fixed: their triggers let the backfill
(joyback.brand_columns, under its setting) fill in a missing brand, and change nothing else.

A machine still on the previous release posts without brands meanwhile: a hold takes its
account's on insert, an entry its transaction's or, the first on a brand's account, names the
transaction's and its earlier entries' (joyback/ledger/sql.py, ENTRY_FILL)."""

from django.db import migrations

from joyback.brand_columns import BACKFILL_ALLOWED, brand_column_add
from joyback.ledger.sql import ENTRY_BRAND, ENTRY_FILL, TRANSACTION_BRAND, brand_id_field

TRIGGERS = f"""
CREATE OR REPLACE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN{BACKFILL_ALLOWED}
    RAISE EXCEPTION '% is append-only: % refused; post a reversal instead', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'restrict_violation';
END $$;

CREATE OR REPLACE FUNCTION ledger_hold_resolve_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN{BACKFILL_ALLOWED}
    IF TG_OP = 'DELETE' OR OLD.status <> 'reserved'
       OR NEW.account_id <> OLD.account_id OR NEW.amount <> OLD.amount THEN
        RAISE EXCEPTION 'hold % is resolved or its terms are fixed: % refused', OLD.id, TG_OP
            USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END $$;
"""
TRIGGERS_BEFORE = """
CREATE OR REPLACE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused; post a reversal instead', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'restrict_violation';
END $$;

CREATE OR REPLACE FUNCTION ledger_hold_resolve_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' OR OLD.status <> 'reserved'
       OR NEW.account_id <> OLD.account_id OR NEW.amount <> OLD.amount THEN
        RAISE EXCEPTION 'hold % is resolved or its terms are fixed: % refused', OLD.id, TG_OP
            USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END $$;
"""


class Migration(migrations.Migration):
    # Batches of the backfill commit one by one (joyback.brand_columns).
    atomic = False

    dependencies = [("ledger", "0006_account_livemode")]

    operations = [
        migrations.RunSQL(TRIGGERS, TRIGGERS_BEFORE),
        *brand_column_add(
            model_name="transaction",
            table="ledger_transaction",
            field=brand_id_field(null=True),
            update=TRANSACTION_BRAND,
        ),
        *brand_column_add(
            model_name="entry",
            table="ledger_entry",
            field=brand_id_field(null=True),
            update=ENTRY_BRAND,
            insert_fill=ENTRY_FILL,
        ),
        *brand_column_add(
            model_name="hold",
            table="ledger_hold",
            field=brand_id_field(null=True),
            parent=("ledger_account", "account_id"),
        ),
    ]
