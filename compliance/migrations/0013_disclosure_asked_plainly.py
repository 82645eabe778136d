"""The policies as compliance/policies/policies.toml now has them, as each one's next version: a brief's
sentence that names the disclosure, or refers back to it, goes live only when it says where and how
the disclosure stands (`placement` words and phrases); a disclosure kept for a day, added tomorrow,
shown for two seconds, hidden "not completely", put under the hashtags or later switched for another
hashtag goes to JoyBack's review. The versions in force until now stay for the record."""

from django.db import migrations

from compliance.migrations._policy_versions import revise

# The file this migration brings to running sites (tests/compliance/test_policy_versions.py).
SOURCE_SHA256 = "7342b8f15485db4c4015b102c1b9964067ef4f0fcd145eed006f87d48341b760"


class Migration(migrations.Migration):
    live_safe_reviewed = "inserts one new version per shipped policy: a handful of rows in a small table"
    dependencies = [("compliance", "0012_policies_revised")]

    operations = [migrations.RunPython(revise, migrations.RunPython.noop)]
