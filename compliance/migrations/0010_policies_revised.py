"""The policies as compliance/policies/policies.toml now has them, as each one's next version: the
things a video is made of that a brief may name, a disclosure shrunk, skipped or denied when asked,
health effects, a script said against one's own experience, critical comments deleted, a fee unchanged
by the verdict (the rule linter), and "#publi" opening a caption read as a tag. The versions in force
until now stay for the record."""

from django.db import migrations

from compliance.migrations._policy_versions import revise

# The file this migration brings to running sites (tests/compliance/test_policy_versions.py).
SOURCE_SHA256 = "dd4ea3e55f7f564e1fe57758a3b579d4d50905305db8b9b082d0cd992a6e0f41"


class Migration(migrations.Migration):
    live_safe_reviewed = "inserts one new version per shipped policy: a handful of rows in a small table"
    dependencies = [("compliance", "0009_policies_revised")]

    operations = [migrations.RunPython(revise, migrations.RunPython.noop)]
