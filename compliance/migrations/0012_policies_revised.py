"""The policies as compliance/policies/policies.toml now has them, as each one's next version: spam a
creator removes is moderation (only spamming is bought engagement), "don't get into arguments" keeps
nothing negative out, in Chinese negative comments kept ("不要删") and a disclosure said in quotes at
the start are not refused, and a disclosure kept out of the caption or said only at the end is. The versions in force until now stay for the record."""

from django.db import migrations

from compliance.migrations._policy_versions import revise

# The file this migration brings to running sites (tests/compliance/test_policy_versions.py).
SOURCE_SHA256 = "7e2df0eaa61964a2db810826f946397180dff0f28adfae29ddac01053b06ba23"


class Migration(migrations.Migration):
    live_safe_reviewed = "inserts one new version per shipped policy: a handful of rows in a small table"
    dependencies = [("compliance", "0011_brief_review")]

    operations = [migrations.RunPython(revise, migrations.RunPython.noop)]
