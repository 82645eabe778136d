from django.db import migrations


def sweep_all(apps, schema_editor):
    # The one-minute safety net now sweeps every kind of standing work, not only provider events.
    apps.get_model("django_q", "Schedule").objects.filter(name="verification-provider-events").update(
        name="standing-work", func="joyback.queue.standing_work_sweep"
    )


def sweep_provider_events(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name="standing-work").update(
        name="verification-provider-events", func="verification.tasks.provider_events_sweep"
    )


class Migration(migrations.Migration):
    dependencies = [("verification", "0006_provider_event_processing")]

    operations = [migrations.RunPython(sweep_all, sweep_provider_events)]
