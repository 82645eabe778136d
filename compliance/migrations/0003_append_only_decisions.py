"""Compliance decisions are append-only, held by PostgreSQL: UPDATE and DELETE are refused.

On SQLite a trigger refuses UPDATE only (DELETE stays possible there because Django's test flush
empties tables with DELETE, as for the ledger). The hash chain makes any edit visible either way.
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

SQLITE = """
CREATE TRIGGER compliance_decision_append_only BEFORE UPDATE ON compliance_compliancedecision
BEGIN
    SELECT RAISE(ABORT, 'compliance_compliancedecision is append-only: UPDATE refused');
END;
"""


def install(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES, params=None)
    elif schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(SQLITE)


def uninstall(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES_UNDO, params=None)
    elif schema_editor.connection.vendor == "sqlite":
        schema_editor.execute("DROP TRIGGER compliance_decision_append_only")


class Migration(migrations.Migration):
    dependencies = [("compliance", "0002_load_policies")]

    operations = [migrations.RunPython(install, uninstall)]
