import django.db.models.deletion
from django.db import migrations, models

# A brand's mode and its twin are fixed once made: data, keys and ledger accounts were made for
# that mode, so the database refuses a change rather than trusting every code path not to try.
MODE_FIXED = """
CREATE FUNCTION campaigns_brand_mode_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.livemode IS DISTINCT FROM OLD.livemode OR NEW.live_brand_id IS DISTINCT FROM OLD.live_brand_id THEN
        RAISE EXCEPTION 'brand %: test or live is fixed when the brand is made', OLD.id
            USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER campaigns_brand_mode_fixed BEFORE UPDATE OF livemode, live_brand_id ON campaigns_brand
    FOR EACH ROW EXECUTE FUNCTION campaigns_brand_mode_fixed();
"""
MODE_FIXED_DROP = """
DROP TRIGGER IF EXISTS campaigns_brand_mode_fixed ON campaigns_brand;
DROP FUNCTION IF EXISTS campaigns_brand_mode_fixed();
"""


class Migration(migrations.Migration):
    # The brand table holds one row per tenant (thousands at most): its unique index and check
    # are built in moments, and the new column's constant default rewrites nothing.
    live_safe_reviewed = "campaigns_brand is one row per tenant; the index and check build in moments"

    dependencies = [("campaigns", "0009_reach_licence_purchase_gate")]

    operations = [
        migrations.AddField(
            model_name="brand",
            name="live_brand",
            field=models.OneToOneField(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="test_twin",
                to="campaigns.brand",
            ),
        ),
        migrations.AddField(
            model_name="brand",
            name="livemode",
            field=models.BooleanField(db_default=True, default=True),
        ),
        migrations.AddConstraint(
            model_name="brand",
            constraint=models.CheckConstraint(
                condition=models.Q(models.Q(("live_brand__isnull", True), ("livemode", True)))
                | models.Q(models.Q(("live_brand__isnull", False), ("livemode", False))),
                name="campaigns_brand_test_twin_has_live_brand",
            ),
        ),
        migrations.RunSQL(MODE_FIXED, MODE_FIXED_DROP),
    ]
