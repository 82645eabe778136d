"""The policies as compliance/policies/policies.toml now has them, as each one's next version: the
rounds of brief reading and caption shapes since 0006 (asides, everyday wordings, label positions
and words, gifts and names). The versions in force until now stay for the record."""

from django.db import migrations

from compliance.migrations._policy_versions import revise

# The file this migration brings to running sites (tests/compliance/test_policy_versions.py).
SOURCE_SHA256 = "3c25479e90eb9980853ee492f45539b1b5f362f871bbd2cd91de93eb291826fb"


class Migration(migrations.Migration):
    live_safe_reviewed = "inserts one new version per shipped policy: a handful of rows in a small table"
    dependencies = [("compliance", "0006_policies_brief_structure")]

    operations = [migrations.RunPython(revise, migrations.RunPython.noop)]
