"""Fraud signals: each a reason code and a detail a reviewer can read.

A signal never rejects on its own: it sends the claim to the brand's review queue, with its reward
held on the budget, and a person decides.
"""

from campaigns.limits import limit_value
from campaigns.models import LimitKind
from verification.sql import claim_facts


def fraud_facts_query(*, campaign, context) -> dict:
    """The fraud counts' part of a claim's facts (verification.sql.claim_facts) for a claim from
    `context`: each count stops at the brand's threshold, which is all the signal needs."""
    brand_id = campaign.brand_id  # each threshold is the brand's own, else the platform's
    return {
        "fraud": True,
        "client_ip": context.client_ip or None,
        "device": context.device or "",
        "device_new": bool(context.device_new),
        "ip_limit": (
            limit_value(kind=LimitKind.FRAUD_CLAIMS_PER_ADDRESS_PER_HOUR, brand_id=brand_id)
            if context.client_ip
            else 0
        ),
        "minute_limit": limit_value(kind=LimitKind.FRAUD_CAMPAIGN_CLAIMS_PER_MINUTE, brand_id=brand_id),
    }


def fraud_signals_at_claim(*, rule, identity, context, evidence: dict, facts=None) -> list[tuple[str, str]]:
    """facts: the claim's facts read with the fraud counts (claim_allowed_check with the context);
    else they are read here."""
    campaign = rule.campaign
    brand_id = campaign.brand_id  # each threshold is the brand's own, else the platform's
    if facts is None or not facts.fraud:
        facts = claim_facts(
            rule_id=rule.pk,
            identity_id=identity.pk,
            person_id=identity.participant_id,
            campaign_id=campaign.pk,
            prerequisite_id=None,
            counted=[],
            under_way=[],
            **fraud_facts_query(campaign=campaign, context=context),
        )
    signals = []
    if context.client_ip:
        recent = facts.ip_recent
        if recent >= limit_value(kind=LimitKind.FRAUD_CLAIMS_PER_ADDRESS_PER_HOUR, brand_id=brand_id):
            signals.append(
                ("ip_velocity", f"at least {recent} earlier claims from {context.client_ip} in the last hour")
            )
    if context.device:
        # The device cookie is the browser itself, whatever address it comes from today.
        others = facts.device_people
        if others >= limit_value(kind=LimitKind.FRAUD_PEOPLE_PER_DEVICE, brand_id=brand_id) - 1:
            signals.append(("device_shared", f"{others + 1} people claimed from one browser today"))
    if context.device_new and context.client_ip and facts.address_shared:
        # A fresh, cookie-less browser per claim is how a farm at one address looks like many people.
        signals.append(
            (
                "device_new_at_address",
                f"a browser new to us, at {context.client_ip}, where someone else claimed today",
            )
        )
    per_minute = facts.per_minute
    if per_minute >= limit_value(kind=LimitKind.FRAUD_CAMPAIGN_CLAIMS_PER_MINUTE, brand_id=brand_id):
        signals.append(
            ("campaign_velocity", f"at least {per_minute} claims on this campaign in the last minute")
        )
    if evidence.get("follower_count") == 0 and evidence.get("video_count") == 0:
        signals.append(("empty_account", "the account has no followers and no videos"))
    return signals


def engagement_signals(
    *, views: int, likes: int, comments: int, followers: int | None, brand_id: int | None
) -> list[tuple[str, str]]:
    """Engagement that looks bought: far more likes per view than real audiences give, or far
    more views than the account's audience explains. The thresholds are the brand's (staff set
    them per brand: a brand whose audience is a fan club likes more than most)."""
    signals = []

    def threshold(kind):
        return limit_value(kind=kind, brand_id=brand_id)

    likes_per_thousand = threshold(LimitKind.FRAUD_MAX_LIKES_PER_THOUSAND_VIEWS)
    comments_per_thousand = threshold(LimitKind.FRAUD_MAX_COMMENTS_PER_THOUSAND_VIEWS)
    views_per_follower = threshold(LimitKind.FRAUD_MAX_VIEWS_PER_FOLLOWER)
    # Compared multiplied out, so no rounding lets a share through that the threshold refuses.
    if views >= 100 and likes * 1000 > views * likes_per_thousand:
        signals.append(("engagement_ratio", f"{likes} likes on {views} views"))
    if views >= 100 and comments * 1000 > views * comments_per_thousand:
        signals.append(("engagement_ratio_comments", f"{comments} comments on {views} views"))
    if followers is not None and views > views_per_follower * max(followers, 1) + 10_000:
        signals.append(("engagement_spike", f"{views} views for an account with {followers} followers"))
    return signals
