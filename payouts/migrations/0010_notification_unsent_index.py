"""An index of the messages still unsent, built without locking the table against writes.

CREATE INDEX CONCURRENTLY cannot run in a transaction, hence atomic = False; a failed build leaves
an INVALID index that the reverse (or DROP INDEX CONCURRENTLY) removes before a retry.
"""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("payouts", "0009_payee_fingerprints_own_key"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="notification",
            index=models.Index(
                condition=models.Q(("sent_at__isnull", True)),
                fields=["created_at"],
                name="payouts_notification_unsent",
            ),
        ),
    ]
