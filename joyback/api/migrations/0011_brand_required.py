"""Every webhook delivery and attempt names its brand: NOT NULL, once the rows written by a machine
still on the previous release are filled too."""

from django.db import migrations, models

from joyback.brand_columns import brand_column_require


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("api", "0010_brand_columns")]

    operations = [
        *brand_column_require(
            model_name="webhookdelivery",
            table="api_webhookdelivery",
            field=models.BigIntegerField(),
            parent=("api_webhookendpoint", "endpoint_id"),
        ),
        *brand_column_require(
            model_name="webhookattempt",
            table="api_webhookattempt",
            field=models.BigIntegerField(),
            parent=("api_webhookdelivery", "delivery_id"),
        ),
    ]
