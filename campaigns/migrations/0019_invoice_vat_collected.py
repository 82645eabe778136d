"""An invoice's VAT is taken from the brand's funds when it is issued and moved with the fees:
the ledger transaction that took it, when the funds could not, the fee transfer that moves it and
when the provider booked that. New nullable or empty columns, no index: no rewrite, no lock held."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("campaigns", "0018_limit_kinds_for_referral_fraud"),
    ]

    operations = [
        migrations.AddField(
            model_name="invoice",
            name="vat_ledger_transaction_id",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="invoice",
            name="vat_moved_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="invoice",
            name="vat_short_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="invoice",
            name="vat_transfer_reference",
            field=models.CharField(blank=True, default="", max_length=40),
        ),
    ]
