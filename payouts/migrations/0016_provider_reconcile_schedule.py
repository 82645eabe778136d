"""Made the provider reconciliation's schedule; joyback/background.py declares it now."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("payouts", "0015_provider_funding"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    # The schedule it made is declared in joyback/background.py now and synced at every start and
    # migrate (joyback/schedules.py); the migration stays, empty, for the databases that applied it.
    operations = []
