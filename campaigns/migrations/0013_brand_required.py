"""Every rule, licence version and visit counter names its brand: NOT NULL, once the rows written
by a machine still on the previous release are filled too."""

from django.db import migrations

from joyback.brand_columns import brand_column_require, brand_foreign_key


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("campaigns", "0012_brand_columns")]

    operations = [
        operation
        for model_name in ("actionrule", "licenceterms", "landingvisitday")
        for operation in brand_column_require(
            model_name=model_name,
            table=f"campaigns_{model_name}",
            field=brand_foreign_key(null=False),
            parent=("campaigns_campaign", "campaign_id"),
        )
    ]
