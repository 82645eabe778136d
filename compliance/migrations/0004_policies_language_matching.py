"""The policies as compliance/policies/policies.toml now has them, as each one's next version:
whole-word matching with the Chinese compounds, sponsor connectors, the linter's word pairs, and the
label as advice where the law asks only for a clear caption. The versions in force until now stay
for the record (every past verdict names the version it was made under)."""

from django.db import migrations

from compliance.migrations._policy_versions import revise


class Migration(migrations.Migration):
    live_safe_reviewed = "inserts one new version per shipped policy: a handful of rows in a small table"
    dependencies = [("compliance", "0003_append_only_decisions")]

    operations = [migrations.RunPython(revise, migrations.RunPython.noop)]
