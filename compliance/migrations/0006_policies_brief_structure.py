"""The policies as compliance/policies/policies.toml now has them, as each one's next version: a
brief's sentences read by their structure (`[languages.*.brief]`: the tasks a brand may ask, the
elements of each blocked kind in four languages). The versions in force until now stay for the record."""

from django.db import migrations

from compliance.migrations._policy_versions import revise


class Migration(migrations.Migration):
    live_safe_reviewed = "inserts one new version per shipped policy: a handful of rows in a small table"
    dependencies = [("compliance", "0005_policies_fail_closed")]

    operations = [migrations.RunPython(revise, migrations.RunPython.noop)]
