"""The policies as compliance/policies/policies.toml now has them, as each one's next version: the
things a video is made of that a brief may name, a disclosure shrunk or flashed in a corner (the rule
linter), and "#publi" opening a caption read as a tag; the versions in force until now stay for the record."""

from django.db import migrations

from compliance.migrations._policy_versions import revise

# The file this migration brings to running sites (tests/compliance/test_policy_versions.py).
SOURCE_SHA256 = "1700aa6284ddc75f107485c04a69857b5c2a99d61a5c87dd95997babd69a153c"


class Migration(migrations.Migration):
    live_safe_reviewed = "inserts one new version per shipped policy: a handful of rows in a small table"
    dependencies = [("compliance", "0009_policies_revised")]

    operations = [migrations.RunPython(revise, migrations.RunPython.noop)]
