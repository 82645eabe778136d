"""The database cache table (settings.CACHE_TABLE): the shared cache without Redis, and the fallback
while Redis is unreachable. createcachetable is idempotent, so this migration is safe to rerun."""

from django.core.management import call_command
from django.db import migrations


def cache_table_create(apps, schema_editor):
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = [("users", "0001_initial")]

    operations = [migrations.RunPython(cache_table_create, migrations.RunPython.noop)]
