"""A campaign's rules, licence terms and visit counters carry its brand (the distribution column
past one primary, docs/deploy.md), filled in batches (joyback.brand_columns)."""

from django.db import migrations

from joyback.brand_columns import brand_column_add, brand_foreign_key


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("campaigns", "0011_landing_visits")]

    operations = [
        operation
        for model_name in ("actionrule", "licenceterms", "landingvisitday")
        for operation in brand_column_add(
            model_name=model_name,
            table=f"campaigns_{model_name}",
            field=brand_foreign_key(null=True),
            parent=("campaigns_campaign", "campaign_id"),
        )
    ]
