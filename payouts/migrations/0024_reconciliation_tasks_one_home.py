"""Once renamed the bank channel's stored schedule; the schedules are now declared in code
(joyback/background.py) and synced at start, which names the task where it lives. Kept empty so
the migration graph stays as it was."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("payouts", "0023_merge_provider_movements_and_payee_rails"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = []
