"""The policies as compliance/policies/policies.toml now has them, as each one's next version: spam a
creator removes is moderation (only spamming is bought engagement), "don't get into arguments" keeps
nothing negative out, and in Chinese, negative comments kept ("不要删"), a disclosure said in quotes
at the start, and "不搞互赞群" (we don't do like-exchange groups) are not refused. The versions in force until now stay for the record."""

from django.db import migrations

from compliance.migrations._policy_versions import revise

# The file this migration brings to running sites (tests/compliance/test_policy_versions.py).
SOURCE_SHA256 = "136cc724a38ebdd689a5f1d6bc9ce3b53d7ab9339fb48e3bcaa4cb24662c4172"


class Migration(migrations.Migration):
    live_safe_reviewed = "inserts one new version per shipped policy: a handful of rows in a small table"
    dependencies = [("compliance", "0011_brief_review")]

    operations = [migrations.RunPython(revise, migrations.RunPython.noop)]
