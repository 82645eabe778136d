from django.db import migrations, models
from django.db.models import deletion

# Indexes a statement line wrote for nothing: each foreign key's own index repeats the first column
# of a Meta index (payouts_stmtline_state, _brand, _payout), and nothing searches dedupe_key or
# end_to_end_id by prefix (the "_like" pattern indexes PostgreSQL gets for every indexed CharField).
# Dropped concurrently, so no reader of the table waits.
DROPPED = (
    "payouts_statementline_statement_id_443bfe57",
    "payouts_statementline_brand_id_34577d94",
    "payouts_statementline_payout_id_6ec87f70",
    "payouts_statementline_dedupe_key_78490a11_like",
    "payouts_statementline_end_to_end_id_9f42ddd2_like",
)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("payouts", "0032_join_audience_fees_custody"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="statementline",
                    name="statement",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=deletion.PROTECT,
                        related_name="lines",
                        to="payouts.statement",
                    ),
                ),
                migrations.AlterField(
                    model_name="statementline",
                    name="brand",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=deletion.PROTECT,
                        related_name="+",
                        to="campaigns.brand",
                    ),
                ),
                migrations.AlterField(
                    model_name="statementline",
                    name="payout",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=deletion.PROTECT,
                        related_name="statement_lines",
                        to="payouts.payout",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    [f"DROP INDEX CONCURRENTLY IF EXISTS {name}" for name in DROPPED],
                    reverse_sql=[
                        "CREATE INDEX CONCURRENTLY IF NOT EXISTS payouts_statementline_statement_id_443bfe57 "
                        "ON payouts_statementline (statement_id)",
                        "CREATE INDEX CONCURRENTLY IF NOT EXISTS payouts_statementline_brand_id_34577d94 "
                        "ON payouts_statementline (brand_id)",
                        "CREATE INDEX CONCURRENTLY IF NOT EXISTS payouts_statementline_payout_id_6ec87f70 "
                        "ON payouts_statementline (payout_id)",
                        "CREATE INDEX CONCURRENTLY IF NOT EXISTS payouts_statementline_dedupe_key_78490a11_like "
                        "ON payouts_statementline (dedupe_key varchar_pattern_ops)",
                        "CREATE INDEX CONCURRENTLY IF NOT EXISTS payouts_statementline_end_to_end_id_9f42ddd2_like "
                        "ON payouts_statementline (end_to_end_id varchar_pattern_ops)",
                    ],
                ),
            ],
        ),
    ]
