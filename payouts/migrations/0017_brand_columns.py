"""Payee details and their submissions and name checks, payout events and notifications, privacy
requests and the resolutions of reconciliation exceptions carry their brand (the distribution
column past one primary, docs/deploy.md), filled from their parent in batches
(joyback.brand_columns). A resolution's brand is its exception's, empty where that is (a credit
that matched no brand).

Payout events are append-only: their trigger lets the backfill fill in a missing brand, and
changes nothing else."""

from django.db import migrations

from joyback.brand_columns import BACKFILL_ALLOWED, brand_column_add, brand_foreign_key

APPEND_ONLY = f"""
CREATE OR REPLACE FUNCTION payouts_event_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN{BACKFILL_ALLOWED}
    RAISE EXCEPTION 'payouts_payoutevent is append-only: % refused', TG_OP;
END $$;
"""
APPEND_ONLY_BEFORE = """
CREATE OR REPLACE FUNCTION payouts_event_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'payouts_payoutevent is append-only: % refused', TG_OP;
END $$;
"""
PARTICIPANT = ("verification_participant", "participant_id")
PAYOUT = ("payouts_payout", "payout_id")
PARENTS = {
    "payeeaccount": PARTICIPANT,
    "payeesubmission": PARTICIPANT,
    "vopcheck": ("payouts_payeeaccount", "payee_id"),
    "payoutevent": PAYOUT,
    "notification": PAYOUT,
    "privacyrequest": PARTICIPANT,
    "exceptionresolution": ("payouts_reconciliationexception", "exception_id"),
}


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("payouts", "0016_provider_reconcile_schedule")]

    operations = [
        migrations.RunSQL(APPEND_ONLY, APPEND_ONLY_BEFORE),
        *(
            operation
            for model_name, parent in PARENTS.items()
            for operation in brand_column_add(
                model_name=model_name,
                table=f"payouts_{model_name}",
                field=brand_foreign_key(null=True),
                parent=parent,
            )
        ),
    ]
