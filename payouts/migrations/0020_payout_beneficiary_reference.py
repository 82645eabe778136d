"""Each payout's short reference for the payee's statement on rails that take 15 characters; payouts
made before have none (the adapter derives theirs from the EndToEndId), so nothing is rewritten,
and the unique index is built concurrently."""

from django.db import migrations, models

import payouts.models.payouts

UNIQUE = """
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS payouts_payout_beneficiary_reference_key
    ON payouts_payout (beneficiary_reference)
"""
UNIQUE_DROP = "DROP INDEX CONCURRENTLY IF EXISTS payouts_payout_beneficiary_reference_key"


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("payouts", "0019_provider_movement_exceptions")]

    operations = [
        migrations.AddField(
            model_name="payout",
            name="beneficiary_reference",
            field=models.CharField(max_length=15, null=True),  # noqa: DJ001 - none before this
        ),
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(UNIQUE, UNIQUE_DROP)],
            state_operations=[
                migrations.AlterField(
                    model_name="payout",
                    name="beneficiary_reference",
                    field=models.CharField(
                        default=payouts.models.payouts.new_beneficiary_reference,
                        max_length=15,
                        null=True,
                        unique=True,
                    ),
                ),
            ],
        ),
    ]
