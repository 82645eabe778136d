"""The standing payouts sweep, and the payout history made append-only by the database."""

from django.db import migrations

APPEND_ONLY = """
CREATE FUNCTION payouts_event_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'payouts_payoutevent is append-only: % refused', TG_OP;
END $$;
CREATE TRIGGER payouts_event_append_only BEFORE UPDATE OR DELETE ON payouts_payoutevent
    FOR EACH ROW EXECUTE FUNCTION payouts_event_append_only();
"""
APPEND_ONLY_UNDO = """
DROP TRIGGER payouts_event_append_only ON payouts_payoutevent;
DROP FUNCTION payouts_event_append_only();
"""


def history_protect(apps, schema_editor):
    schema_editor.execute(APPEND_ONLY, params=None)


def history_unprotect(apps, schema_editor):
    schema_editor.execute(APPEND_ONLY_UNDO, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("payouts", "0003_payouts_state_machine"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [
        migrations.RunPython(history_protect, history_unprotect),
        # The payouts sweep's schedule it made is declared in joyback/background.py now.
    ]
