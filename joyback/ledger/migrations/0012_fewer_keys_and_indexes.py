"""An entry's account is checked by one foreign key, (account_id, currency), and found by one index,
(account_id, transaction_id): the plain account_id foreign key and index each did the same work
again on every leg (a check at COMMIT, an index entry), for nothing the other two do not hold.
Likewise a transaction's idempotency key is found by its unique index; the pattern index beside it
(for LIKE, which nothing asks of a key) only cost every posting one more index entry.

Dropping a foreign key holds the tables' locks for a catalogue change only (lock_timeout bounds
the wait for them); the index goes concurrently. Back: the index is built concurrently, the
foreign key added NOT VALID and then validated, which blocks no writes.
"""

import django.db.models.deletion
from django.db import migrations, models

FOREIGN_KEY = "ledger_entry_account_id_e9f5e345_fk_ledger_account_id"
INDEX = "ledger_entry_account_id_e9f5e345"
KEY_PATTERN_INDEX = "ledger_transaction_idempotency_key_7c87dd47_like"


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("ledger", "0011_entry_rules_per_statement")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="entry",
                    name="account",
                    field=models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="entries",
                        to="ledger.account",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    f"SET lock_timeout = '5s'; ALTER TABLE ledger_entry DROP CONSTRAINT IF EXISTS {FOREIGN_KEY}; "
                    "RESET lock_timeout",
                    f"ALTER TABLE ledger_entry ADD CONSTRAINT {FOREIGN_KEY} FOREIGN KEY (account_id) "
                    "REFERENCES ledger_account (id) DEFERRABLE INITIALLY DEFERRED NOT VALID; "
                    f"ALTER TABLE ledger_entry VALIDATE CONSTRAINT {FOREIGN_KEY}",
                ),
                migrations.RunSQL(
                    f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}",
                    f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {INDEX} ON ledger_entry (account_id)",
                ),
                migrations.RunSQL(
                    f"DROP INDEX CONCURRENTLY IF EXISTS {KEY_PATTERN_INDEX}",
                    f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {KEY_PATTERN_INDEX} "
                    "ON ledger_transaction (idempotency_key varchar_pattern_ops)",
                ),
            ],
        ),
    ]
