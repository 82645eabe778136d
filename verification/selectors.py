from dataclasses import dataclass
from datetime import timedelta

from django.db.models import BigIntegerField, Count, OuterRef, Q, QuerySet, Subquery, Sum, Value
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast, Coalesce, TruncDate

from campaigns.models import POSTING_TRIGGERS, Campaign, Trigger
from compliance.selectors import cases_for_claims
from verification import sql
from verification.models import (
    ActionClaim,
    ClaimStatus,
    ConsentAction,
    ConsentRecord,
    Identity,
    OptinCode,
    Participant,
    ProviderEvent,
    Purchase,
    PurchaseStatus,
    ReferralCode,
    ReviewDecision,
    ShopConnection,
    TikTokPost,
    TikTokToken,
    VideoMetric,
)


def participant_get_by_token(*, token: str) -> Participant | None:
    return Participant.objects.filter(token=token).select_related("brand").first()


def participant_get(*, participant_id, brand_id) -> Participant | None:
    """The participant, with `has_claims` (any action at all) in the same query."""
    if not participant_id or not str(participant_id).isdigit():
        return None
    return sql.participant_with_claims(participant_id=int(participant_id), brand_id=brand_id)


def participant_claims(*, participant: Participant, campaign: Campaign | None = None):
    claims = ActionClaim.objects.filter(participant=participant).select_related(
        "rule", "campaign", "identity"
    )
    if campaign is not None:
        claims = claims.filter(campaign=campaign)
    return claims.order_by("created_at")


@dataclass(frozen=True)
class Step:
    rule: object
    claim: ActionClaim | None
    locked: bool
    case: object = None  # the compliance remediation case of a share, if its disclosure failed
    post: object = None  # the latest video JoyBack posted (or tried to) for this step, if any

    @property
    def state(self) -> str:
        if self.claim is not None:
            return self.claim.status
        return "locked" if self.locked else "todo"


def campaign_steps(*, campaign: Campaign, participant: Participant | None) -> list[Step]:
    claims = {}
    if participant is not None:
        claims = {
            claim.rule_id: claim for claim in participant_claims(participant=participant, campaign=campaign)
        }
    pending = [claim.pk for claim in claims.values() if claim.status == ClaimStatus.PENDING]
    cases = cases_for_claims(claim_ids=pending) if pending else {}
    posts = {}
    if participant is not None:
        # Oldest first, so the latest attempt per rule is the one kept.
        for post in TikTokPost.objects.filter(participant=participant, campaign=campaign).order_by("pk"):
            posts[post.rule_id] = post
    steps = []
    # A referral is no step a person does: the poster's code earns it (verification/referrals.py).
    for rule in campaign.rules.exclude(trigger=Trigger.REFERRAL):
        done = rule.prerequisite_id is None or (
            rule.prerequisite_id in claims and claims[rule.prerequisite_id].status == ClaimStatus.APPROVED
        )
        claim = claims.get(rule.pk)
        steps.append(
            Step(
                rule=rule,
                claim=claim,
                locked=not done,
                case=cases.get(claim.pk) if claim else None,
                post=posts.get(rule.pk),
            )
        )
    return steps


def optin_pending(*, campaign: Campaign, participant: Participant | None) -> OptinCode | None:
    if participant is None or not campaign.rules.filter(trigger=Trigger.WHATSAPP_OPTIN).exists():
        return None
    return OptinCode.objects.filter(campaign=campaign, participant=participant).first()


def campaign_funnel(*, campaign: Campaign) -> dict:
    counts = ActionClaim.objects.filter(campaign=campaign).aggregate(
        actions=Count("pk"),
        verified=Count("pk", filter=Q(status=ClaimStatus.APPROVED)),
        pending=Count("pk", filter=Q(status__in=[ClaimStatus.PENDING, ClaimStatus.NEEDS_REVIEW])),
        rejected=Count("pk", filter=Q(status=ClaimStatus.REJECTED)),
    )
    counts["people"] = ActionClaim.objects.filter(campaign=campaign).values("participant").distinct().count()
    return counts


def campaign_recent_claims(*, campaign: Campaign, limit: int = 15):
    return (
        ActionClaim.objects.filter(campaign=campaign)
        .select_related("rule", "identity")
        .order_by("-created_at")[:limit]
    )


def review_queue_for_brand(*, brand):
    return (
        ActionClaim.objects.filter(campaign__brand=brand, status=ClaimStatus.NEEDS_REVIEW)
        .select_related("campaign", "rule", "identity")
        .prefetch_related("signals")
        .order_by("created_at")
    )


def review_decisions_for_brand(*, brand, limit: int = 20):
    return (
        ReviewDecision.objects.filter(claim__campaign__brand=brand)
        .select_related("claim__rule", "claim__identity", "decided_by")
        .order_by("-created_at")[:limit]
    )


def claim_get_for_brand(*, brand, claim_id: int) -> ActionClaim | None:
    return ActionClaim.objects.filter(campaign__brand=brand, pk=claim_id).first()


# The Cashback API's reads, scoped by the brand id behind the API key.


def participants_for_brand(*, brand_id: int):
    return Participant.objects.filter(brand_id=brand_id).prefetch_related("identities")


def participant_get_for_brand(*, brand_id: int, participant_id: int) -> Participant | None:
    return participants_for_brand(brand_id=brand_id).filter(pk=participant_id).first()


def claims_for_brand(*, brand_id: int):
    return ActionClaim.objects.filter(campaign__brand_id=brand_id).select_related("rule", "purchase")


def claim_get_for_api(*, brand_id: int, claim_id: int) -> ActionClaim | None:
    return claims_for_brand(brand_id=brand_id).filter(pk=claim_id).first()


def provider_events_unfinished():
    """Provider events not processed yet, however often the standing worker tried."""
    return ProviderEvent.objects.filter(processed_at__isnull=True)


def _publish_tokens(participant: Participant):
    return TikTokToken.objects.filter(
        identity__participant=participant, revoked_at__isnull=True, scope__contains="video.publish"
    )


def participant_can_publish(*, participant: Participant | None) -> bool:
    """Whether this person let JoyBack post on their TikTok (video.publish granted, not revoked)."""
    return participant is not None and _publish_tokens(participant).exists()


def publishing_identity(*, participant: Participant | None) -> Identity | None:
    """The TikTok account JoyBack posts on: the one that granted video.publish (the video, and so
    the claim, belong to it), else their first TikTok account (the post is then refused, asking
    for the consent)."""
    if participant is None:
        return None
    token = _publish_tokens(participant).select_related("identity").order_by("pk").first()
    if token is not None:
        return token.identity
    return participant.identities.filter(provider="tiktok").order_by("pk").first()


def shop_connections_for_brand(*, brand):
    return ShopConnection.objects.filter(brand=brand, disconnected_at__isnull=True).select_related("campaign")


def shop_connections_retired(*, brand):
    """Connections the shop's proven owner took over: the brand is told on its shops page."""
    return ShopConnection.objects.filter(brand=brand, retired_reason="taken_over").order_by(
        "-disconnected_at"
    )[:10]


def shop_get_for_brand(*, brand, shop_id: int) -> ShopConnection | None:
    return ShopConnection.objects.filter(brand=brand, pk=shop_id).select_related("campaign").first()


def shop_get_connected(*, public_id: str) -> ShopConnection | None:
    """The connection a delivery or claim link names, while it is connected."""
    return (
        ShopConnection.objects.filter(public_id=public_id, disconnected_at__isnull=True)
        .select_related("brand", "campaign")
        .first()
    )


def shop_deliveries_recent(*, shop: ShopConnection, limit: int = 20) -> list[ProviderEvent]:
    return list(
        ProviderEvent.objects.filter(provider=shop.kind, payload__connection=shop.pk).order_by("-pk")[:limit]
    )


def shop_order_purchases(*, shop: ShopConnection, limit: int = 20) -> list[Purchase]:
    """The shop's orders that earn cashback, newest first, with their claims."""
    prefix = f"{shop.kind}:{shop.domain}:"
    purchases = list(
        Purchase.objects.filter(brand_id=shop.brand_id, order_id__startswith=prefix)
        .select_related("identity", "claim")
        .order_by("-pk")[:limit]
    )
    for purchase in purchases:
        purchase.shop_order_id = purchase.order_id.removeprefix(prefix)  # as the shop names it
    return purchases


# The brand's claims and people tables, and the shared videos' reach on the overview.


def claims_filtered(*, brand, filters: dict):
    """The brand's claims, newest first, narrowed by the table's filters."""
    claims = ActionClaim.objects.filter(campaign__brand=brand).select_related("campaign", "rule", "identity")
    if text := filters.get("q"):
        found = Q(identity__display_name__icontains=text) | Q(identity__subject__iexact=text)
        if text.lstrip("#").isdigit():
            found |= Q(pk=int(text.lstrip("#")))
        claims = claims.filter(found)
    if status := filters.get("status"):
        claims = claims.filter(status=status)
    if campaign := filters.get("campaign"):
        claims = claims.filter(campaign_id=campaign)
    if step := filters.get("step"):
        claims = claims.filter(rule__trigger=step)
    if since := filters.get("since"):
        claims = claims.filter(created_at__gte=since)
    if until := filters.get("until"):
        claims = claims.filter(created_at__lt=until)
    return claims.order_by("-created_at", "-pk")


def people_filtered(*, brand, filters: dict):
    """The brand's participants with their accounts and what they did, newest first."""
    people = Participant.objects.filter(brand=brand)
    if text := filters.get("q"):
        people = people.filter(
            Q(identities__display_name__icontains=text) | Q(identities__subject__iexact=text)
        ).distinct()
    if campaign := filters.get("campaign"):
        people = people.filter(claims__campaign_id=campaign).distinct()
    if since := filters.get("since"):
        people = people.filter(created_at__gte=since)
    if until := filters.get("until"):
        people = people.filter(created_at__lt=until)
    return (
        people.annotate(
            actions=Count("claims", distinct=True),
            verified=Count("claims", filter=Q(claims__status=ClaimStatus.APPROVED), distinct=True),
        )
        .prefetch_related("identities")
        .order_by("-created_at", "-pk")
    )


def people_earned(*, participant_ids) -> dict[int, list[tuple[str, int]]]:
    """{participant: [(currency, minor units of verified rewards)]}."""
    rows = (
        ActionClaim.objects.filter(participant_id__in=participant_ids, status=ClaimStatus.APPROVED)
        .values("participant_id", "currency")
        .annotate(total=Sum("amount"))
        .order_by("currency")
    )
    earned: dict[int, list] = {}
    for row in rows:
        earned.setdefault(row["participant_id"], []).append((row["currency"], row["total"]))
    return earned


def _latest_count(name: str, metric: str):
    """A video's count as last measured: its latest re-check (shares paid by reach keep one per
    read), else at the window's close, else at the submit."""
    latest = VideoMetric.objects.filter(claim=OuterRef("pk"), found=True).order_by("-at", "-pk")
    return Coalesce(
        Subquery(latest.values(metric)[:1]),
        Cast(KeyTextTransform(name, KeyTextTransform("recheck", "evidence")), BigIntegerField()),
        Cast(KeyTextTransform(name, KeyTextTransform("video", "evidence")), BigIntegerField()),
        Value(0),
    )


def shared_videos(*, campaign_ids, since, until):
    """Videos people shared for the campaigns in the window, with their views, likes and comments
    as the TikTok Display API last reported them."""
    return (
        ActionClaim.objects.filter(
            campaign_id__in=campaign_ids,
            rule__trigger__in=POSTING_TRIGGERS,
            created_at__gte=since,
            created_at__lt=until,
        )
        .exclude(evidence__video__isnull=True)
        .annotate(
            views=_latest_count("view_count", "views"),
            likes=_latest_count("like_count", "likes"),
            comments=_latest_count("comment_count", "comments"),
            day=TruncDate("created_at"),
        )
    )


def reach_by_day(*, campaign_ids, since, until) -> dict:
    rows = (
        shared_videos(campaign_ids=campaign_ids, since=since, until=until)
        .values("day")
        .annotate(videos=Count("pk"), views=Sum("views"), likes=Sum("likes"), comments=Sum("comments"))
    )
    return {row["day"]: row for row in rows}


def steps_started_by_campaign(*, campaign_ids, since, until) -> dict[int, set]:
    """{campaign: participants who started a step in the window}: a claim made, a WhatsApp code
    asked for, or a video sent to be posted."""
    started: dict[int, set] = {}
    sources = (
        ActionClaim.objects.filter(campaign_id__in=campaign_ids, created_at__gte=since, created_at__lt=until),
        OptinCode.objects.filter(campaign_id__in=campaign_ids, created_at__gte=since, created_at__lt=until),
        TikTokPost.objects.filter(campaign_id__in=campaign_ids, created_at__gte=since, created_at__lt=until),
    )
    for rows in sources:
        for campaign_id, participant_id in rows.values_list("campaign_id", "participant_id").distinct():
            started.setdefault(campaign_id, set()).add(participant_id)
    return started


def verified_by_campaign(*, campaign_ids, since, until) -> dict[int, dict]:
    """{campaign: {"actions": verified actions, "people": participants}} decided in the window."""
    verified: dict[int, dict] = {}
    rows = ActionClaim.objects.filter(
        campaign_id__in=campaign_ids,
        status=ClaimStatus.APPROVED,
        decided_at__gte=since,
        decided_at__lt=until,
    ).values_list("campaign_id", "participant_id")
    for campaign_id, participant_id in rows:
        entry = verified.setdefault(campaign_id, {"actions": 0, "people": set()})
        entry["actions"] += 1
        entry["people"].add(participant_id)
    return verified


def rewarded_people_by_campaign(*, campaign_ids) -> dict[int, set]:
    """{campaign: participants with a verified reward there, whenever}."""
    rewarded: dict[int, set] = {}
    rows = (
        ActionClaim.objects.filter(campaign_id__in=campaign_ids, status=ClaimStatus.APPROVED)
        .values_list("campaign_id", "participant_id")
        .distinct()
    )
    for campaign_id, participant_id in rows:
        rewarded.setdefault(campaign_id, set()).add(participant_id)
    return rewarded


def sales_by_campaign(*, campaign_ids, since, until) -> dict[int, int]:
    """{campaign: what its buyers spent} for purchases the shop or the Cashback API reported in the
    window, in the campaign's currency, refunds (whole or in part) taken off."""
    sales: dict[int, int] = {}
    rows = (
        ActionClaim.objects.filter(
            campaign_id__in=campaign_ids,
            purchase__isnull=False,
            purchase__created_at__gte=since,
            purchase__created_at__lt=until,
        )
        .exclude(purchase__status=PurchaseStatus.REFUNDED)
        .values_list("campaign_id", "purchase_id")
        .distinct()
    )
    purchases = {
        purchase.pk: purchase
        for purchase in Purchase.objects.filter(pk__in=[purchase_id for _campaign, purchase_id in rows])
    }
    for campaign_id, purchase_id in rows:
        purchase = purchases[purchase_id]
        refunded = sum(int(amount) for amount in (purchase.refunds or {}).values())
        sales[campaign_id] = sales.get(campaign_id, 0) + max(purchase.amount - refunded, 0)
    return sales


def referral_sales(*, code) -> list[ActionClaim]:
    """The orders a poster's code brought, newest first, as the poster may see them: when, the
    order's amount, what it earns them and its state; nothing about the buyer."""
    return list(
        ActionClaim.objects.filter(referral_code=code)
        .select_related("referred_purchase")
        .order_by("-created_at", "-pk")[:100]
    )


def referral_campaigns_of(*, participant: Participant) -> list[Campaign]:
    """The campaigns a person acted in that pay for referred sales: where they have a code."""
    acted = ActionClaim.objects.filter(participant=participant, referred_purchase__isnull=True).exclude(
        status=ClaimStatus.REJECTED
    )
    return list(
        Campaign.objects.filter(pk__in=acted.values("campaign"), rules__trigger=Trigger.REFERRAL)
        .select_related("brand")
        .distinct()
        .order_by("pk")
    )


@dataclass
class PosterSales:
    """One poster's referred sales in the window, against what their videos were paid for reach."""

    participant_id: int
    poster: str
    code: str
    currency: str
    videos: list = None  # [(video id, views)] of their shared videos in the campaigns
    sales: int = 0  # referred orders not taken back whole
    revenue: int = 0  # what those buyers spent, refunds taken off
    referral_cost: int = 0  # what the referrals earn the poster (paid, owed or held)
    reach_paid: int = 0  # what their shared videos were paid (reach top-ups and share rewards)
    views: int = 0

    @property
    def cost(self) -> int:
        return self.referral_cost + self.reach_paid

    @property
    def cost_per_sale(self) -> int | None:
        if not self.sales:
            return None
        quotient, remainder = divmod(self.cost, self.sales)
        return quotient + (1 if 2 * remainder >= self.sales else 0)


def referral_sales_by_poster(*, campaign_ids, since, until) -> list[PosterSales]:
    """Referred sales made in the window by poster (their code) and video: orders, revenue net of
    refunds, what the referrals cost, and the reach the poster's videos were paid for. Buyers are
    never named."""
    counted = [ClaimStatus.APPROVED, ClaimStatus.PENDING, ClaimStatus.NEEDS_REVIEW]
    rows: dict[int, PosterSales] = {}
    codes = (
        ReferralCode.objects.filter(campaign_id__in=campaign_ids)
        .select_related("identity", "campaign")
        .order_by("pk")
    )
    for code in codes:
        rows.setdefault(
            code.participant_id,
            PosterSales(
                participant_id=code.participant_id,
                poster=code.identity.display_name or f"#{code.participant_id}",
                code=code.code,
                currency=code.campaign.currency,
                videos=[],
            ),
        )
    referrals = ActionClaim.objects.filter(
        campaign_id__in=campaign_ids,
        referred_purchase__isnull=False,
        created_at__gte=since,
        created_at__lt=until,
    ).select_related("referred_purchase")
    for claim in referrals:
        row = rows.get(claim.participant_id)
        if row is None:
            continue
        purchase = claim.referred_purchase
        if claim.status in counted:
            row.referral_cost += claim.amount
        if purchase.status != PurchaseStatus.REFUNDED:
            refunded = sum(int(amount) for amount in (purchase.refunds or {}).values())
            kept = max(purchase.amount - refunded, 0)
            if kept:
                row.sales += 1
                row.revenue += kept
    videos = shared_videos(campaign_ids=campaign_ids, since=since - timedelta(days=365), until=until).filter(
        participant_id__in=list(rows)
    )
    for share in videos:
        row = rows[share.participant_id]
        row.videos.append(
            (str((share.evidence.get("video") or {}).get("video_id") or share.pk), share.views or 0)
        )
        row.views += share.views or 0
        if share.status == ClaimStatus.APPROVED:
            row.reach_paid += share.reach_paid or share.amount
        elif share.reach_paid:
            row.reach_paid += share.reach_paid
    return sorted(rows.values(), key=lambda row: (-row.revenue, row.participant_id))


# The consent ledger's reads: a person's current consent on a channel is their latest row.


def consents_latest(*, brand) -> QuerySet:
    """Each (person, channel)'s latest consent row of the brand: given or withdrawn."""
    latest = (
        ConsentRecord.objects.filter(brand=brand)
        .order_by("participant_id", "channel", "-at", "-pk")
        .distinct("participant_id", "channel")
        .values("pk")
    )
    return ConsentRecord.objects.filter(pk__in=Subquery(latest))


def consents_current(*, brand, channel: str | None = None) -> QuerySet:
    """The consents in force: the latest row is a consent given, for a contact not erased."""
    rows = (
        consents_latest(brand=brand)
        .filter(action=ConsentAction.GIVEN)
        .exclude(identity__subject__startswith="erased:")
    )
    return rows.filter(channel=channel) if channel else rows


def consent_in_force(*, participant_id: int, channel: str) -> bool:
    """Whether the person may be messaged on the channel now: read before every send."""
    latest = (
        ConsentRecord.objects.filter(participant_id=participant_id, channel=channel)
        .order_by("-at", "-pk")
        .values_list("action", "identity__subject")
        .first()
    )
    return latest is not None and latest[0] == ConsentAction.GIVEN and not latest[1].startswith("erased:")


def person_consents(*, participant) -> list[ConsentRecord]:
    """The person's latest row per channel, for their status page."""
    return list(
        ConsentRecord.objects.filter(participant=participant)
        .order_by("channel", "-at", "-pk")
        .distinct("channel")
        .select_related("campaign")
    )
