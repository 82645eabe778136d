"""A campaign copied into the brand's test data: the same words, countries and rewarded actions, as
a draft funded with nothing, so a live campaign (or a draft) can be tried with play money without
touching it."""

from django.db import transaction
from django.utils.translation import gettext

from campaigns.models import ActionRule, Campaign
from campaigns.modes import brand_test_twin
from campaigns.services.campaigns import campaign_create
from campaigns.services.refusals import CampaignError

# What a rule is, apart from where it hangs (campaign, brand, its prerequisite: made again in the copy).
RULE_FIELDS = (
    "reward_amount",
    "verification_mode",
    "window_hours",
    "min_views",
    "min_likes",
    "min_comments",
    "total_cap",
    "instructions",
    "cashback_basis_points",
    "return_window_days",
    "reach_tiers",
    "reach_per_thousand",
    "reach_person_cap",
    "reach_campaign_cap",
    "recheck_hours",
    "product_rewards",
)


def campaign_copy_to_test(*, campaign: Campaign) -> Campaign:
    """The copy is a draft of the test twin's, its rules the original's (the package's defaults
    replaced)."""
    if not campaign.brand.livemode:
        raise CampaignError(gettext("This campaign is test data already."))
    twin = brand_test_twin(brand=campaign.brand)
    copy = campaign_create(
        brand=twin,
        name=campaign.name,
        package=campaign.package,
        currency=campaign.currency,
        countries=list(campaign.countries),
        languages=list(campaign.languages),
        headline=campaign.headline,
        description=campaign.description,
        texts=dict(campaign.texts or {}),
        disclosure_text=campaign.disclosure_text,
        starts_at=campaign.starts_at,
        ends_at=campaign.ends_at,
        per_identity_period_cap=campaign.per_identity_period_cap,
        per_identity_period_days=campaign.per_identity_period_days,
        share_requires_purchase=campaign.share_requires_purchase,
    )
    with transaction.atomic(durable=True):
        ActionRule.objects.filter(campaign=copy).update(prerequisite=None)
        ActionRule.objects.filter(campaign=copy).delete()
        made = {}
        # Prerequisites first (a login before the shares that need it), in the original's order.
        rules = sorted(
            campaign.rules.all(), key=lambda rule: (rule.prerequisite_id is not None, rule.position)
        )
        for rule in rules:
            made[rule.pk] = ActionRule.objects.create(
                campaign=copy,
                brand=twin,
                trigger=rule.trigger,
                position=rule.position,
                prerequisite=made.get(rule.prerequisite_id),
                **{field: getattr(rule, field) for field in RULE_FIELDS},
            )
    return copy
