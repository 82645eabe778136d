"""Every claim and the rows that hang off it name their brand: NOT NULL, once the rows written by a
machine still on the previous release are filled too."""

from django.db import migrations

from joyback.brand_columns import brand_column_require, brand_foreign_key

CLAIM = ("verification_actionclaim", "claim_id")
CAMPAIGN = ("campaigns_campaign", "campaign_id")
PARENTS = {
    "actionclaim": CAMPAIGN,
    "fraudsignal": CLAIM,
    "reviewdecision": CLAIM,
    "tiktoktoken": ("verification_identity", "identity_id"),
    "optincode": CAMPAIGN,
    "tiktokpost": CAMPAIGN,
    "reachtopup": CLAIM,
    "videometric": CLAIM,
    "licencegrant": ("verification_participant", "participant_id"),
    "sparkadscode": CLAIM,
}


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("verification", "0013_brand_columns")]

    operations = [
        operation
        for model_name, parent in PARENTS.items()
        for operation in brand_column_require(
            model_name=model_name,
            table=f"verification_{model_name}",
            field=brand_foreign_key(null=False),
            parent=parent,
        )
    ]
