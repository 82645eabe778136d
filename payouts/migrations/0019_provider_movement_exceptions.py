"""A movement on a brand's virtual account that is not a deposit: one exception per provider
transfer, kept unique by an index built concurrently."""

from django.conf import settings
from django.db import migrations, models

ONE_PER_TRANSFER = """
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS payouts_recexc_one_per_provider_transfer
    ON payouts_reconciliationexception (provider_transfer_id) WHERE NOT (provider_transfer_id = '')
"""
ONE_PER_TRANSFER_DROP = "DROP INDEX CONCURRENTLY IF EXISTS payouts_recexc_one_per_provider_transfer"


class Migration(migrations.Migration):
    # The unique index is built concurrently, outside a transaction.
    atomic = False

    dependencies = [
        ("campaigns", "0013_brand_required"),
        ("payouts", "0018_brand_required"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="reconciliationexception",
            name="provider_transfer_id",
            field=models.CharField(blank=True, default="", max_length=64),
        ),
        migrations.AlterField(
            model_name="reconciliationexception",
            name="reason",
            field=models.CharField(
                choices=[
                    ("unknown_line", "Unknown statement line"),
                    ("amount_mismatch", "Amount differs from the payout"),
                    ("currency_mismatch", "Currency differs from the payout"),
                    ("duplicate", "Booked twice"),
                    ("state_mismatch", "Booked, but the payout did not go out"),
                    ("no_statement_line", "Sent long ago, not on any statement"),
                    ("sequence_gap", "A statement is missing in the sequence"),
                    ("opening_mismatch", "Opening balance differs from the previous closing balance"),
                    ("bank_drift", "The ledger's bank balance differs from the bank's"),
                    ("provider_unmatched", "Booked by the payment provider, not in the ledger"),
                    ("provider_amount", "The provider booked another amount than the ledger"),
                    ("provider_movement", "Money moved on a virtual account that is not a deposit"),
                ],
                max_length=20,
            ),
        ),
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(ONE_PER_TRANSFER, ONE_PER_TRANSFER_DROP)],
            state_operations=[
                migrations.AddConstraint(
                    model_name="reconciliationexception",
                    constraint=models.UniqueConstraint(
                        condition=models.Q(("provider_transfer_id", ""), _negated=True),
                        fields=("provider_transfer_id",),
                        name="payouts_recexc_one_per_provider_transfer",
                    ),
                ),
            ],
        ),
    ]
