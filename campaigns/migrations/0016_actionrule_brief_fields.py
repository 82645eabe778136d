"""A rule's brief as fields (show the product, tag, hashtags, post within hours, keep public, the
label, language, length, the flavour, the price may be said): a JSON column with a database default,
so rows written by the release before this one stay valid."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("campaigns", "0015_merge_limits_and_team_invitations")]

    operations = [
        migrations.AddField(
            model_name="actionrule",
            name="brief",
            field=models.JSONField(blank=True, db_default={}, default=dict),
        ),
    ]
