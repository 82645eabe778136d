"""A standing schedule behind the one-off re-checks: any share whose window closed while no worker
ran, or whose schedule was lost, is still decided within minutes."""

from django.db import migrations


def schedule(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    Schedule.objects.update_or_create(
        name="verification-recheck-due",
        defaults={
            "func": "verification.tasks.recheck_due",
            "schedule_type": "I",
            "minutes": 5,
            "repeats": -1,
        },
    )


def unschedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name="verification-recheck-due").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("verification", "0002_fraudsignal_reviewdecision_sandboxtiktokvideo_and_more"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [migrations.RunPython(schedule, unschedule)]
