"""A campaign's rewarded actions (rules): each package's defaults, and what a rule needs."""

from django.conf import settings
from django.db import transaction
from django.utils.module_loading import import_string
from django.utils.translation import gettext

from campaigns.brief import BriefError, brief_clean
from campaigns.models import (
    ActionRule,
    Campaign,
    CampaignStatus,
    Package,
    Trigger,
    VerificationMode,
)
from campaigns.services.refusals import CampaignError, launch_problems_refuse

LOGIN_RULE = dict(trigger=Trigger.TIKTOK_LOGIN, reward_amount=1_00)
SHARE_RULE = dict(
    trigger=Trigger.UGC_SHARE,
    reward_amount=5_00,
    verification_mode=VerificationMode.ENGAGEMENT,
    window_hours=72,
    min_views=500,
)

PACKAGE_RULES = {
    Package.ALL_IN_ONE: [LOGIN_RULE, dict(trigger=Trigger.WHATSAPP_OPTIN, reward_amount=1_00), SHARE_RULE],
    Package.TIKTOK_ONLY: [LOGIN_RULE, SHARE_RULE],
    Package.WHATSAPP_REWARD: [dict(trigger=Trigger.WHATSAPP_OPTIN, reward_amount=2_00)],
    Package.CASHBACK: [dict(trigger=Trigger.PURCHASE, reward_amount=5_00, return_window_days=14)],
}


# Engagement on a post can only be measured once the post exists, and the post is tied to the
# TikTok identity: so every TikTok engagement action needs the login first.
NEEDS_TIKTOK_LOGIN = frozenset({Trigger.UGC_SHARE, Trigger.LIKE, Trigger.COMMENT, Trigger.VIEW_THRESHOLD})

# The actions whose person posts a video, and so reads a brief.
BRIEF_TRIGGERS = frozenset({Trigger.UGC_SHARE, Trigger.VIEW_THRESHOLD})

# Likes and comments cost a bot nothing: they are only ever paid up to a cap the brand sets.
ALWAYS_CAPPED = frozenset({Trigger.LIKE, Trigger.COMMENT})


def rule_write(*, campaign: Campaign, trigger: str, reward_amount: int, position: int = 0, **fields):
    if "brief" in fields:
        try:
            fields["brief"] = brief_clean(fields["brief"] or {})
        except BriefError as error:
            raise CampaignError(str(error)) from None
        if fields["brief"] and trigger not in BRIEF_TRIGGERS:
            raise CampaignError(gettext("Only a rule for a posted video has a brief."))
    if trigger in ALWAYS_CAPPED and not fields.get("total_cap"):
        raise CampaignError(gettext("Likes and comments are cheap to fake: give their rule a total cap."))
    if trigger in NEEDS_TIKTOK_LOGIN:
        login = campaign.rules.filter(trigger=Trigger.TIKTOK_LOGIN).first()
        if login is None:
            raise CampaignError(
                gettext("A %(action)s needs a TikTok login rule first.") % {"action": Trigger(trigger).label}
            )
        fields["prerequisite"] = login
    if fields.get("verification_mode", VerificationMode.INSTANT) == VerificationMode.INSTANT:
        fields["window_hours"] = 0
    elif not fields.get("window_hours"):
        raise CampaignError(gettext("An engagement rule needs a window of at least one hour."))
    rule, _ = ActionRule.objects.update_or_create(
        campaign=campaign,
        trigger=trigger,
        defaults={
            "reward_amount": reward_amount,
            "position": position,
            "brand_id": campaign.brand_id,
            **fields,
        },
    )
    return rule


def rule_save(*, campaign: Campaign, trigger: str, reward_amount: int, **fields) -> ActionRule:
    if campaign.status == CampaignStatus.ENDED:
        raise CampaignError(gettext("An ended campaign cannot change."))
    if reward_amount <= 0:
        raise CampaignError(gettext("A reward must be more than zero."))
    before = campaign.rules.filter(trigger=trigger).values_list("pk", "instructions").first()
    try:
        with transaction.atomic(durable=True):
            position = fields.pop("position", campaign.rules.count())
            rule = rule_write(
                campaign=campaign, trigger=trigger, reward_amount=reward_amount, position=position, **fields
            )
            if campaign.status != CampaignStatus.DRAFT:
                # Launched already: a rule change must pass what the launch had to pass.
                launch_problems_refuse(campaign)
            return rule
    except CampaignError as refused:
        words = (fields.get("instructions") or "").strip()
        if before is None or not refused.problems or not all(p.reviewable for p in refused.problems):
            raise
        if not words or words == before[1].strip():
            raise
        # New words of a running campaign that only a person can clear: the campaign keeps its
        # words, and the new ones go to JoyBack's review (settings.CAMPAIGN_WORDS_PROPOSED).
        for path in getattr(settings, "CAMPAIGN_WORDS_PROPOSED", []):
            import_string(path)(rule_id=before[0], words=words)
        raise CampaignError(
            gettext(
                "JoyBack's team reviews the new instructions before people see them; the campaign runs "
                "with the ones it has until then. Once they are approved, save them again."
            ),
            problems=refused.problems,
        ) from None


def rule_delete(*, rule: ActionRule) -> None:
    if rule.campaign.status != CampaignStatus.DRAFT:
        raise CampaignError(gettext("Rules can only be removed while the campaign is a draft."))
    if rule.dependants.exists():
        raise CampaignError(gettext("Remove the actions that need this one first."))
    rule.delete()
