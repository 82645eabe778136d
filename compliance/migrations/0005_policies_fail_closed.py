"""The policies as compliance/policies/policies.toml now has them, as each one's next version: fail
closed (the cues that send a disclosure to review, and China's one accepted mark "广告"). The
versions in force until now stay for the record (every past verdict names the version it was made under)."""

from django.db import migrations

from compliance.migrations._policy_versions import revise


class Migration(migrations.Migration):
    live_safe_reviewed = "inserts one new version per shipped policy: a handful of rows in a small table"
    dependencies = [("compliance", "0004_policies_language_matching")]

    operations = [migrations.RunPython(revise, migrations.RunPython.noop)]
