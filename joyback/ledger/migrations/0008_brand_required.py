"""Every hold names its brand (all are on campaign budgets). Transactions and entries keep an
empty brand for the platform's own postings; the rows a machine still on the previous release
wrote after 0007 are filled first."""

from django.db import migrations

from joyback.brand_columns import brand_column_require, brand_fill

from joyback.ledger.sql import ENTRY_BRAND, TRANSACTION_BRAND, brand_id_field


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("ledger", "0007_brand_columns")]

    operations = [
        brand_fill(table="ledger_transaction", update=TRANSACTION_BRAND),
        brand_fill(table="ledger_entry", update=ENTRY_BRAND),
        *brand_column_require(
            model_name="hold",
            table="ledger_hold",
            field=brand_id_field(null=False),
            parent=("ledger_account", "account_id"),
        ),
    ]
