import django.db.models.deletion
from django.db import migrations, models

# The claims table is live and large: its new columns come without a default (no rewrite), their
# indexes are built concurrently, their foreign keys added NOT VALID and validated after (no long
# lock), and the one-reward rule's partial unique index is built anew beside the old one before the
# old one is dropped, so the rule holds the whole time.
CLAIMS = "verification_actionclaim"
DATABASE = [
    f'ALTER TABLE "{CLAIMS}" ADD COLUMN "referred_purchase_id" bigint NULL',
    f'ALTER TABLE "{CLAIMS}" ADD COLUMN "referral_code_id" bigint NULL',
    f'CREATE UNIQUE INDEX CONCURRENTLY "verification_actionclaim_referred_purchase_id_key" '
    f'ON "{CLAIMS}" ("referred_purchase_id")',
    f'CREATE INDEX CONCURRENTLY "verification_actionclaim_referral_code_id_aca5d9e7" '
    f'ON "{CLAIMS}" ("referral_code_id")',
    f'ALTER TABLE "{CLAIMS}" ADD CONSTRAINT "verification_actionc_referred_purchase_id_b5fd1226_fk_verificat" '
    'FOREIGN KEY ("referred_purchase_id") REFERENCES "verification_purchase" ("id") '
    "DEFERRABLE INITIALLY DEFERRED NOT VALID",
    f'ALTER TABLE "{CLAIMS}" VALIDATE CONSTRAINT "verification_actionc_referred_purchase_id_b5fd1226_fk_verificat"',
    f'ALTER TABLE "{CLAIMS}" ADD CONSTRAINT "verification_actionc_referral_code_id_aca5d9e7_fk_verificat" '
    'FOREIGN KEY ("referral_code_id") REFERENCES "verification_referralcode" ("id") '
    "DEFERRABLE INITIALLY DEFERRED NOT VALID",
    f'ALTER TABLE "{CLAIMS}" VALIDATE CONSTRAINT "verification_actionc_referral_code_id_aca5d9e7_fk_verificat"',
    f'CREATE UNIQUE INDEX CONCURRENTLY "verification_one_reward_per_identity_new" ON "{CLAIMS}" '
    '("rule_id", "identity_id") WHERE ("purchase_id" IS NULL AND "referred_purchase_id" IS NULL)',
    'DROP INDEX CONCURRENTLY "verification_one_reward_per_identity"',
    'ALTER INDEX "verification_one_reward_per_identity_new" RENAME TO "verification_one_reward_per_identity"',
]
REVERSE = [
    'DROP INDEX CONCURRENTLY IF EXISTS "verification_one_reward_per_identity"',
    f'CREATE UNIQUE INDEX CONCURRENTLY "verification_one_reward_per_identity" ON "{CLAIMS}" '
    '("rule_id", "identity_id") WHERE "purchase_id" IS NULL',
    f'ALTER TABLE "{CLAIMS}" DROP COLUMN "referral_code_id"',
    f'ALTER TABLE "{CLAIMS}" DROP COLUMN "referred_purchase_id"',
]


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("verification", "0020_referral_codes"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(DATABASE, reverse_sql=REVERSE)],
            state_operations=[
                migrations.RemoveConstraint(
                    model_name="actionclaim", name="verification_one_reward_per_identity"
                ),
                migrations.AddField(
                    model_name="actionclaim",
                    name="referred_purchase",
                    field=models.OneToOneField(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="referral_claim",
                        to="verification.purchase",
                    ),
                ),
                migrations.AddField(
                    model_name="actionclaim",
                    name="referral_code",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="claims",
                        to="verification.referralcode",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="actionclaim",
                    constraint=models.UniqueConstraint(
                        condition=models.Q(("purchase__isnull", True), ("referred_purchase__isnull", True)),
                        fields=("rule", "identity"),
                        name="verification_one_reward_per_identity",
                    ),
                ),
            ],
        ),
    ]
