"""The policies as compliance/policies/policies.toml now has them, as each one's next version: negated
lists of bought engagement, a label moved by a pronoun, conditions on orders and the fourth blind set's
everyday brief items (the rule linter). The versions in force until now stay for the record."""

from django.db import migrations

from compliance.migrations._policy_versions import revise

# The file this migration brings to running sites (tests/compliance/test_policy_versions.py).
SOURCE_SHA256 = "5b8a347b665a17f30a66a3b69ea40c10ae1740a4f4463f49f0e500049dba4980"


class Migration(migrations.Migration):
    live_safe_reviewed = "inserts one new version per shipped policy: a handful of rows in a small table"
    dependencies = [("compliance", "0008_policies_revised")]

    operations = [migrations.RunPython(revise, migrations.RunPython.noop)]
