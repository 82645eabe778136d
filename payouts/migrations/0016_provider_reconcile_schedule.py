from django.db import migrations


def schedule(apps, schema_editor):
    # The provider's transaction list against the ledger, and its balances against the ledger's
    # provider balance, every 15 minutes.
    apps.get_model("django_q", "Schedule").objects.update_or_create(
        name="payouts-provider-reconcile",
        defaults={
            "func": "payouts.funding.tasks.provider_reconcile_task",
            "schedule_type": "I",
            "minutes": 15,
            "repeats": -1,
        },
    )


def unschedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name="payouts-provider-reconcile").delete()


class Migration(migrations.Migration):
    # One row written: no batches needed, and nothing to hold a lock on.
    atomic = False

    dependencies = [
        ("payouts", "0015_provider_funding"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [migrations.RunPython(schedule, unschedule)]
