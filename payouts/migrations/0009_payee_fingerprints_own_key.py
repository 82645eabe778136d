"""Duplicate-detection fingerprints move to their own key (PAYEE_FINGERPRINT_KEY).

In batches of short transactions outside one long one (atomic = False), so a live table is never
locked for the whole run; rows already right are not written, so an interrupted run just reruns.
"""

from django.db import migrations


def recompute(apps, schema_editor):
    from payouts.fingerprints import payee_fingerprints_recompute

    payee_fingerprints_recompute(model=apps.get_model("payouts", "PayeeAccount"))


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("payouts", "0008_payout_controls"),
    ]

    operations = [migrations.RunPython(recompute, migrations.RunPython.noop, elidable=True)]
