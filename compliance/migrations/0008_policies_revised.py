"""The policies as compliance/policies/policies.toml now has them, as each one's next version: label
notices and deals after a label (captions), reminders and polite frames and strangers' wordings of
every brief kind (the rule linter). The versions in force until now stay for the record."""

from django.db import migrations

from compliance.migrations._policy_versions import revise

# The file this migration brings to running sites (tests/compliance/test_policy_versions.py).
SOURCE_SHA256 = "7ff08baa449c6264121152119dbd7a02af04dbaf4d97bacc2247aaac1e61a0e3"


class Migration(migrations.Migration):
    live_safe_reviewed = "inserts one new version per shipped policy: a handful of rows in a small table"
    dependencies = [("compliance", "0007_policies_revised")]

    operations = [migrations.RunPython(revise, migrations.RunPython.noop)]
