from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    # Built concurrently: claims keep being written while they build.
    atomic = False

    dependencies = [("verification", "0019_sandbox_publish_plural")]

    operations = [
        AddIndexConcurrently(
            model_name="actionclaim",
            index=models.Index(fields=["campaign", "created_at"], name="verification_claim_recent"),
        ),
        AddIndexConcurrently(
            model_name="actionclaim",
            index=models.Index(
                condition=models.Q(("device", ""), _negated=True),
                fields=["campaign", "device", "created_at"],
                name="verification_claim_device",
            ),
        ),
    ]
