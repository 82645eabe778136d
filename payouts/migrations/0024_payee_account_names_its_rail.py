"""A payee's bank account is one typed value (payouts.bank_accounts.BankAccount), stored as its JSON
with its rail, {"rail": "sepa", "iban": ..., "bic": ...}: each row stored as the rail's fields
alone, its rail in the plain column beside them, is rewritten with that rail.

In batches of short transactions outside one long one (atomic = False); each batch's rows are
locked while they are rewritten, so an erasure waits for its row instead of being undone. A row
already in the new format, or erased for good ({"erased": true}), is not written, so an interrupted
run just reruns. The conversion is written out here rather than read from the app, so that it stays
what it was when the rows were rewritten.
"""

import json

from django.db import migrations, transaction

import payouts.bank_accounts

BATCH = 500
ERASED = {"erased": True}


def _rows_rewrite(apps, convert) -> None:
    model = apps.get_model("payouts", "PayeeAccount")
    last = 0
    while True:
        with transaction.atomic():
            rows = list(
                model.objects.select_for_update()
                .filter(pk__gt=last)
                .order_by("pk")
                .only("pk", "rail", "account")[:BATCH]
            )
            if not rows:
                return
            for row in rows:
                stored = json.loads(row.account)
                if stored != ERASED and (wanted := convert(row.rail, stored)) != stored:
                    model.objects.filter(pk=row.pk).update(account=json.dumps(wanted))
            last = rows[-1].pk


def rail_named(rail: str, stored: dict) -> dict:
    return stored if "rail" in stored else {"rail": rail, **stored}


def rail_left_to_the_column(rail: str, stored: dict) -> dict:
    return {key: value for key, value in stored.items() if key != "rail"}


def forwards(apps, schema_editor):
    _rows_rewrite(apps, rail_named)


def backwards(apps, schema_editor):
    _rows_rewrite(apps, rail_left_to_the_column)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("payouts", "0023_merge_provider_movements_and_payee_rails"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
        migrations.AlterField(
            model_name="payeeaccount",
            name="account",
            field=payouts.bank_accounts.BankAccountField(
                help_text="The bank account (payouts.bank_accounts), encrypted"
            ),
        ),
    ]
