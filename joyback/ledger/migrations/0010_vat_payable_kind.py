"""A platform account for the VAT its invoices charged and it owes the tax office (never its revenue)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ledger", "0009_brand_balance_one_brand"),
    ]

    operations = [
        migrations.AlterField(
            model_name="account",
            name="kind",
            field=models.CharField(
                choices=[
                    ("platform_bank", "Platform bank"),
                    ("brand_funding", "Brand funding"),
                    ("campaign_budget", "Campaign budget"),
                    ("participant_payable", "Reward payable"),
                    ("participant_receivable", "Clawback receivable"),
                    ("payout_in_transit", "Payout in transit"),
                    ("fees", "Fees"),
                    ("suspense", "Suspense"),
                    ("provider_balance", "Provider balance"),
                    ("brand_balance", "Balance account at the provider"),
                    ("vat_payable", "VAT owed to the tax office"),
                ],
                max_length=32,
            ),
        ),
    ]
