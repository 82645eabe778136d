"""Every payee detail, submission, name check, payout event, notification and privacy request
names its brand: NOT NULL, once the rows written by a machine still on the previous release are
filled too. A resolution keeps an empty brand where its exception has none; its rows from that
machine are filled, and its foreign key validated."""

from django.db import migrations

from joyback.brand_columns import (
    brand_column_require,
    brand_fill,
    brand_foreign_key,
    brand_foreign_key_validate,
    parent_update,
)

PARTICIPANT = ("verification_participant", "participant_id")
PAYOUT = ("payouts_payout", "payout_id")
PARENTS = {
    "payeeaccount": PARTICIPANT,
    "payeesubmission": PARTICIPANT,
    "vopcheck": ("payouts_payeeaccount", "payee_id"),
    "payoutevent": PAYOUT,
    "notification": PAYOUT,
    "privacyrequest": PARTICIPANT,
}
RESOLUTION = "payouts_exceptionresolution"


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("payouts", "0017_brand_columns")]

    operations = [
        *(
            operation
            for model_name, parent in PARENTS.items()
            for operation in brand_column_require(
                model_name=model_name,
                table=f"payouts_{model_name}",
                field=brand_foreign_key(null=False),
                parent=parent,
            )
        ),
        brand_fill(
            table=RESOLUTION,
            update=parent_update(
                table=RESOLUTION, parent_table="payouts_reconciliationexception", parent_column="exception_id"
            ),
        ),
        *brand_foreign_key_validate(table=RESOLUTION, field=brand_foreign_key(null=True)),
    ]
