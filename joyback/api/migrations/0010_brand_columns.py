"""Webhook deliveries and their attempts carry their endpoint's brand (the distribution column past
one primary, docs/deploy.md), filled in batches (joyback.brand_columns)."""

from django.db import migrations, models

from joyback.brand_columns import brand_column_add


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("api", "0009_test_and_live_mode")]

    operations = [
        *brand_column_add(
            model_name="webhookdelivery",
            table="api_webhookdelivery",
            field=models.BigIntegerField(null=True, blank=True),
            parent=("api_webhookendpoint", "endpoint_id"),
        ),
        *brand_column_add(
            model_name="webhookattempt",
            table="api_webhookattempt",
            field=models.BigIntegerField(null=True, blank=True),
            parent=("api_webhookdelivery", "delivery_id"),
        ),
    ]
