"""Each brand's balance account at the payment provider is mirrored as its own asset, and the
database refuses a transaction whose entries touch two brands' accounts: one brand's money never
moves to another's (the platform's own accounts, which name no brand, excepted: its fee is an
internal transfer from a brand's balance account to the platform's)."""

from django.db import migrations, models

# Statement-level, with the inserted legs as a transition table, as ledger_entry_one_mode (0006):
# one check per insert however many legs it writes, each leg's account read by its primary key.
ONE_BRAND = """
CREATE FUNCTION ledger_entry_one_brand() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    crossing bigint;
BEGIN
    SELECT i.transaction_id INTO crossing
      FROM (SELECT DISTINCT transaction_id FROM new_entries) i
     CROSS JOIN LATERAL (
        SELECT count(DISTINCT leg.brand_id) AS brands
          FROM (SELECT (SELECT a.brand_id FROM ledger_account a WHERE a.id = e.account_id) AS brand_id
                  FROM ledger_entry e WHERE e.transaction_id = i.transaction_id) leg) t
     WHERE t.brands > 1
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'ledger transaction % moves money between two brands'' accounts', crossing
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER ledger_entry_one_brand AFTER INSERT ON ledger_entry
    REFERENCING NEW TABLE AS new_entries FOR EACH STATEMENT EXECUTE FUNCTION ledger_entry_one_brand();

CREATE FUNCTION ledger_account_brand_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.brand_id IS DISTINCT FROM OLD.brand_id THEN
        RAISE EXCEPTION 'account %: its brand is fixed when the account is made', OLD.id
            USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER ledger_account_brand_fixed BEFORE UPDATE OF brand_id ON ledger_account
    FOR EACH ROW EXECUTE FUNCTION ledger_account_brand_fixed();
"""
ONE_BRAND_DROP = """
DROP TRIGGER IF EXISTS ledger_entry_one_brand ON ledger_entry;
DROP FUNCTION IF EXISTS ledger_entry_one_brand();
DROP TRIGGER IF EXISTS ledger_account_brand_fixed ON ledger_account;
DROP FUNCTION IF EXISTS ledger_account_brand_fixed();
"""


class Migration(migrations.Migration):
    dependencies = [("ledger", "0008_brand_required")]

    operations = [
        migrations.AlterField(
            model_name="account",
            name="kind",
            field=models.CharField(
                choices=[
                    ("platform_bank", "Platform bank"),
                    ("brand_funding", "Brand funding"),
                    ("campaign_budget", "Campaign budget"),
                    ("participant_payable", "Reward payable"),
                    ("participant_receivable", "Clawback receivable"),
                    ("payout_in_transit", "Payout in transit"),
                    ("fees", "Fees"),
                    ("suspense", "Suspense"),
                    ("provider_balance", "Provider balance"),
                    ("brand_balance", "Balance account at the provider"),
                ],
                max_length=32,
            ),
        ),
        migrations.RunSQL(ONE_BRAND, ONE_BRAND_DROP),
    ]
