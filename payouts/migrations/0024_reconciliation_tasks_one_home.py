"""The bank channel's scheduled fetch names its task where the task lives, payouts.reconciliation.tasks
(the module that only forwarded the old name is gone)."""

from django.db import migrations

OLD = "payouts.reconciliation_tasks."
NEW = "payouts.reconciliation.tasks."


def _rename(apps, before: str, after: str) -> None:
    Schedule = apps.get_model("django_q", "Schedule")
    for schedule in Schedule.objects.filter(func__startswith=before):
        schedule.func = after + schedule.func.removeprefix(before)
        schedule.save(update_fields=["func"])


def forwards(apps, schema_editor):
    _rename(apps, OLD, NEW)


def backwards(apps, schema_editor):
    _rename(apps, NEW, OLD)


class Migration(migrations.Migration):
    dependencies = [
        ("payouts", "0023_merge_provider_movements_and_payee_rails"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
