import django.db.models.deletion
from django.db import migrations, models

# Keys become the brand's: each existing row takes its API key's brand. Where two of a brand's keys
# used the same Idempotency-Key, the first request's row stays (it is the answer a retry must get)
# and the later copies go; rows live a day at most, so this only touches the last day's traffic.
FILL_BRAND = (
    "UPDATE api_idempotencykey SET brand_id = "
    "(SELECT k.brand_id FROM api_apikey k WHERE k.id = api_idempotencykey.api_key_id)"
)
DROP_LATER_COPIES = (
    "DELETE FROM api_idempotencykey WHERE id NOT IN "
    "(SELECT MIN(id) FROM api_idempotencykey GROUP BY brand_id, key)"
)


class Migration(migrations.Migration):
    dependencies = [
        ("api", "0006_inbound_event_lease"),
    ]

    operations = [
        migrations.AddField(
            model_name="idempotencykey",
            name="brand_id",
            field=models.BigIntegerField(null=True),
        ),
        migrations.RunSQL(FILL_BRAND, migrations.RunSQL.noop),
        migrations.RunSQL(DROP_LATER_COPIES, migrations.RunSQL.noop),
        migrations.AlterField(
            model_name="idempotencykey",
            name="brand_id",
            field=models.BigIntegerField(),
        ),
        migrations.RemoveConstraint(
            model_name="idempotencykey",
            name="api_one_idempotency_key",
        ),
        migrations.AlterField(
            model_name="idempotencykey",
            name="api_key",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="api.apikey",
            ),
        ),
        migrations.AddConstraint(
            model_name="idempotencykey",
            constraint=models.UniqueConstraint(
                fields=("brand_id", "key"), name="api_one_idempotency_key_per_brand"
            ),
        ),
    ]
