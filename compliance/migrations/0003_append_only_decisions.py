"""Compliance decisions are append-only, held by PostgreSQL: UPDATE and DELETE are refused.

The hash chain makes any edit visible as well.
"""

from django.db import migrations

POSTGRES = """
CREATE FUNCTION compliance_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused; record a new decision instead', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'restrict_violation';
END $$;

CREATE TRIGGER compliance_decision_append_only BEFORE UPDATE OR DELETE ON compliance_compliancedecision
    FOR EACH ROW EXECUTE FUNCTION compliance_append_only();
"""

POSTGRES_UNDO = """
DROP TRIGGER compliance_decision_append_only ON compliance_compliancedecision;
DROP FUNCTION compliance_append_only();
"""


def install(apps, schema_editor):
    schema_editor.execute(POSTGRES, params=None)


def uninstall(apps, schema_editor):
    schema_editor.execute(POSTGRES_UNDO, params=None)


class Migration(migrations.Migration):
    dependencies = [("compliance", "0002_load_policies")]

    operations = [migrations.RunPython(install, uninstall)]
