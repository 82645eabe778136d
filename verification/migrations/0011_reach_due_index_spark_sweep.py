"""The reach shares' next reads are found by an index built without locking the claims table, and
a standing schedule expires Spark Ads codes on time."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("verification", "0010_reach_content_library"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="actionclaim",
            index=models.Index(
                condition=models.Q(("status", "pending")),
                fields=["next_check_at"],
                name="verification_reach_due",
            ),
        ),
        # The Spark Ads codes' schedule it made is declared in joyback/background.py now.
    ]
