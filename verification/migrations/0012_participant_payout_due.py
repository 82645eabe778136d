from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    # The index is built concurrently: approvals keep writing people while it builds.
    atomic = False

    dependencies = [("verification", "0011_reach_due_index_spark_sweep")]

    operations = [
        migrations.AddField(
            model_name="participant",
            name="payout_due_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        AddIndexConcurrently(
            model_name="participant",
            index=models.Index(
                condition=models.Q(("payout_due_at__isnull", False)),
                fields=["payout_due_at"],
                name="verification_payout_due",
            ),
        ),
    ]
