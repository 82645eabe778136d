"""A standing schedule behind the one-off webhook retries, which also forgets old idempotency keys."""

from django.db import migrations


def schedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.update_or_create(
        name="api-webhook-sweep",
        defaults={
            "func": "joyback.api.tasks.webhook_sweep",
            "schedule_type": "I",
            "minutes": 10,
            "repeats": -1,
        },
    )


def unschedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name="api-webhook-sweep").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("api", "0001_initial"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [migrations.RunPython(schedule, unschedule)]
