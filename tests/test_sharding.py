"""Past one primary, the plan (docs/deploy.md) distributes the brand-scoped tables by brand on
Citus: each must carry the brand id that would be its distribution column. Read from the models,
so a new table has to say where it stands:

- distributed: it has a brand_id column (a foreign key to the brand, or a plain integer where an
  app may not import campaigns);
- reference or platform tables: the same for every brand, or the platform's own (each with why);
- before distribution: brand-scoped through a parent, which names the brand; the column is added
  and backfilled from that parent (co-located with it) before the tables are distributed.

The tables that carry their parent's brand are in tests/brand_columns.py, checked after every test
that used the database.
"""

import pytest
from django.apps import apps

from campaigns.models import Brand
from tests.brand_columns import SCOPED_THROUGH, brand_columns_wrong
from tests.conftest import rewarded_in_browser
from verification.models import ActionClaim

PROJECT_APPS = {"users", "ledger", "api", "campaigns", "compliance", "verification", "payouts"}

# Copied to every node (Citus reference tables), or kept on the coordinator: not per brand.
REFERENCE_OR_PLATFORM = {
    "campaigns.Brand": "the distribution key itself: distributed by its own id",
    "users.User": "a person signs in once and may be a member of several brands: a reference table",
    "users.StaffGrant": "a permission for platform staff, asked and confirmed by staff: the platform's",
    "payouts.TaxReport": "the platform operator's yearly file to a tax authority, for every brand",
    "compliance.Policy": "the disclosure rules of a country, the same for every brand: a reference table",
    "verification.ProviderEvent": "a provider's webhook as received, before it is known which brand it "
    "concerns; processed into brand rows (claims): the intake stays on the coordinator",
    "payouts.TransferEvent": "the payment provider's webhook as received, before it is matched to a payout: "
    "the intake stays on the coordinator",
    "payouts.PaymentBatch": "one pain.001 file carries the payouts of many brands: the platform's own",
    "payouts.PspFeedCursor": "the platform's position in the provider's feed: one row",
    "verification.SandboxTikTokUser": "the sandbox's stand-in for TikTok: not in production",
    "verification.SandboxWhatsAppMessage": "the sandbox's stand-in for WhatsApp: not in production",
    "payouts.SandboxCrmProfile": "the sandbox's stand-in for Klaviyo: not in production",
    "verification.SandboxTikTokGrant": "the sandbox's stand-in for TikTok: not in production",
    "verification.SandboxTikTokVideo": "the sandbox's stand-in for TikTok: not in production",
    "verification.SandboxTikTokPublish": "the sandbox's stand-in for TikTok: not in production",
    "payouts.SandboxBankAccount": "the sandbox's stand-in for the bank: not in production",
    "payouts.SandboxBankPayment": "the sandbox's stand-in for the bank: not in production",
    "payouts.SandboxBankEvent": "the sandbox's stand-in for the bank: not in production",
    "payouts.SandboxBankMessage": "the sandbox's stand-in for the bank: not in production",
    "verification.SandboxTikTokAdCode": "the sandbox's stand-in for TikTok: not in production",
    "payouts.SandboxBalanceAccount": "the sandbox's stand-in for the provider: not in production",
    "payouts.SandboxLegalEntity": "the sandbox's stand-in for the provider: not in production",
    "payouts.SandboxFundingTransfer": "the sandbox's stand-in for the provider: not in production",
    "payouts.SandboxFundingEvent": "the sandbox's stand-in for the provider: not in production",
    "campaigns.InvoiceSequence": "the platform's invoice numbers, one row per issuer: the platform's own",
    "payouts.ProviderBalanceCheck": "the provider's balance of all brands' virtual accounts against the "
    "ledger: a platform check, one row per run",
}

# Brand-scoped through this parent (a path of foreign keys to a table with brand_id), before the
# column is added, backfilled from the parent and set by the services (joyback.brand_columns;
# tests/brand_columns.py then checks the services write it). Every such table has its column now.
BEFORE_DISTRIBUTION: dict[str, str] = {}


def project_models() -> dict:
    return {
        model._meta.label: model
        for model in apps.get_models()
        if model._meta.app_label in PROJECT_APPS and model._meta.managed and not model._meta.proxy
    }


def has_brand_id(model) -> bool:
    return any(field.column == "brand_id" for field in model._meta.concrete_fields)


def follow(model, path: str):
    """The model at the end of a Django lookup path (forward or reverse relations)."""
    for name in path.split("__"):
        model = model._meta.get_field(name).related_model
    return model


def test_every_table_is_distributed_by_brand_or_says_why_not():
    unclassified = sorted(
        label
        for label, model in project_models().items()
        if not has_brand_id(model) and label not in REFERENCE_OR_PLATFORM and label not in BEFORE_DISTRIBUTION
    )

    assert unclassified == [], (
        "these tables have no brand_id column: give them one (their distribution column), or list them "
        "in tests/test_sharding.py (a reference or platform table, or one scoped through a parent)"
    )


def test_the_lists_name_tables_that_exist_and_still_need_listing():
    models = project_models()
    listed = {**REFERENCE_OR_PLATFORM, **BEFORE_DISTRIBUTION}

    assert sorted(set(listed) - set(models)) == []  # renamed or removed: the lists follow
    # A table that gained its brand_id leaves the lists (it is distributed now).
    assert (
        sorted(label for label in listed if label != "campaigns.Brand" and has_brand_id(models[label])) == []
    )


def test_a_table_scoped_through_a_parent_reaches_one_that_names_the_brand():
    models = project_models()
    for label, path in BEFORE_DISTRIBUTION.items():
        parent = follow(models[label], path)
        assert has_brand_id(parent), (
            f"{label} through {path} reaches {parent._meta.label}, which has no brand_id"
        )


def test_the_distributed_tables_reference_brands_by_the_brands_id():
    # A foreign key named brand points at the brand table (a plain integer column is checked by the
    # tests of its app, which may not import campaigns).
    for model in project_models().values():
        for field in model._meta.concrete_fields:
            if field.column == "brand_id" and field.is_relation:
                assert field.related_model is Brand, f"{model._meta.label}.{field.name}"


def test_the_tables_that_carry_a_parents_brand_have_the_column_and_reach_that_parent():
    models = project_models()
    for label, path in SCOPED_THROUGH.items():
        assert has_brand_id(models[label]), label
        assert has_brand_id(follow(models[label], path)), f"{label} through {path}"


@pytest.mark.django_db
def test_the_check_after_each_test_finds_a_row_that_names_another_brand(client, summer, bison):
    rewarded_in_browser(client, summer)
    claim = ActionClaim.objects.get()

    ActionClaim.objects.filter(pk=claim.pk).update(brand=bison)
    assert brand_columns_wrong() == [f"verification.ActionClaim: [{claim.pk}]"]
    ActionClaim.objects.filter(pk=claim.pk).update(brand=summer.brand)
    assert brand_columns_wrong() == []
