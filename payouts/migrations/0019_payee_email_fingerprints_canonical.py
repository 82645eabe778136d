"""E-mail fingerprints move to the canonical form of the address (joyback.emails.email_canonical):
pat+win@gmail.com and p.a.t@googlemail.com now match pat@gmail.com in duplicate detection.

In batches of short transactions outside one long one (atomic = False), so a live table is never
locked for the whole run; rows already right are not written, so an interrupted run just reruns
(or `manage.py payee_fingerprints_recompute`, which does the same)."""

from django.db import migrations


def recompute(apps, schema_editor):
    from payouts.fingerprints import payee_fingerprints_recompute

    payee_fingerprints_recompute(model=apps.get_model("payouts", "PayeeAccount"))


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("payouts", "0018_brand_required"),
    ]

    operations = [migrations.RunPython(recompute, migrations.RunPython.noop, elidable=True)]
