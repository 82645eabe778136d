"""Keep the hot paths fast on PostgreSQL.

The balance trigger's query is planned once per connection; planned against a young, near-empty
entry table it would keep a sequential scan for the connection's life, and every commit would
read the whole table. Balance rows are updated in place many times a second: free space on their
pages lets PostgreSQL keep those updates on the page (HOT) instead of bloating the index.
"""

from django.db import migrations

TUNING = """
ALTER FUNCTION ledger_entry_balanced() SET enable_seqscan = off;
ALTER TABLE ledger_account SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0.01);
"""


def install(apps, schema_editor):
    schema_editor.execute(TUNING, params=None)


class Migration(migrations.Migration):
    dependencies = [("ledger", "0002_database_rules")]

    operations = [migrations.RunPython(install, migrations.RunPython.noop)]
