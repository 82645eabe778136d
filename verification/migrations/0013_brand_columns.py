"""Claims and what hangs off them (fraud signals, review decisions, reach top-ups and readings,
licences, Spark Ads codes), TikTok tokens, opt-in codes and TikTok posts carry their brand (the
distribution column past one primary, docs/deploy.md), filled from their parent in batches
(joyback.brand_columns); claims first, as most of the others read theirs."""

from django.db import migrations

from joyback.brand_columns import brand_column_add, brand_foreign_key

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

    dependencies = [("verification", "0012_participant_payout_due")]

    operations = [
        operation
        for model_name, parent in PARENTS.items()
        for operation in brand_column_add(
            model_name=model_name,
            table=f"verification_{model_name}",
            field=brand_foreign_key(null=True),
            parent=parent,
        )
    ]
