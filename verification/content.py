"""What a brand gets from a share besides reach: the licence the person granted, a Spark Ads code,
the content library; and the purchase gate that keeps a share's reward for the brand's buyers."""

import csv
import io
from datetime import UTC, datetime, timedelta

from django.core.cache import cache
from django.db import transaction
from django.db.models import Prefetch, Q
from django.utils import timezone

from campaigns.licence import licence_terms_current
from campaigns.models import POSTING_TRIGGERS, ActionRule, Brand, Campaign, LicenceTerms
from compliance.selectors import disclosure_status_for_claims
from joyback.modes import provider_routed_for
from verification.models import (
    ActionClaim,
    LicenceGrant,
    Participant,
    Purchase,
    PurchaseStatus,
    SparkAdsCode,
    VideoMetric,
)
from verification.providers import tiktok
from verification.services.refusals import ClaimRefused

SPARK_DAYS = (7, 30, 60, 365)  # the periods TikTok offers when a creator generates a code
EMBED_CACHE_SECONDS = 6 * 3600  # a cover image's signed URL lives six hours on TikTok


# Shares only buyers can earn.


def purchase_gate(*, rule: ActionRule, participant: Participant) -> list[Purchase]:
    """The person's confirmed purchases from the brand when the campaign asks for one before a share;
    refused, with what to do, when there is none. [] when the campaign does not ask."""
    campaign = rule.campaign
    if not campaign.share_requires_purchase or rule.trigger not in POSTING_TRIGGERS:
        return []
    purchases = Purchase.objects.filter(brand_id=campaign.brand_id, identity__participant=participant)
    confirmed = list(purchases.filter(status=PurchaseStatus.CONFIRMED).order_by("pk"))
    if confirmed:
        return confirmed
    if purchases.filter(status=PurchaseStatus.PENDING).exists():
        raise ClaimRefused("purchase_pending")
    raise ClaimRefused("purchase_required")


def purchase_gate_refusal(*, rule: ActionRule, participant: Participant | None) -> str:
    """What the share step says instead of its form while the gate is closed; "" when open."""
    if not rule.campaign.share_requires_purchase or rule.trigger not in POSTING_TRIGGERS:
        return ""
    if participant is None:
        return ClaimRefused("purchase_required").message
    try:
        purchase_gate(rule=rule, participant=participant)
    except ClaimRefused as refusal:
        return refusal.message
    return ""


def share_reward(*, rule: ActionRule, purchases: list[Purchase]) -> int:
    """The reward (a reach share's most per video) by the product bought: the best listed product
    of the person's confirmed purchases, else the rule's reward."""
    prices = rule.product_rewards or {}
    listed = [prices[product] for purchase in purchases for product in purchase.products if product in prices]
    return max(listed) if listed else rule.reward_amount


# The licence.


def licence_terms_for_share(*, campaign: Campaign, accepted: bool) -> LicenceTerms | None:
    terms = licence_terms_current(campaign=campaign)
    if terms is not None and not accepted:
        raise ClaimRefused("licence_required")
    return terms


def licence_grant_record(*, claim: ActionClaim, terms: LicenceTerms, language: str) -> LicenceGrant:
    """Inside the share's transaction: the version shown, in which language, when, by whom."""
    return LicenceGrant.objects.create(
        claim=claim,
        brand_id=claim.brand_id,
        terms=terms,
        participant_id=claim.participant_id,
        identity_id=claim.identity_id,
        language=(language or "en")[:10],
        granted_at=timezone.now(),
    )


def licence_revoke(*, participant: Participant, grant_id: int) -> LicenceGrant:
    """The person takes the licence back for the future, from their status page."""
    with transaction.atomic(durable=True):
        grant = LicenceGrant.objects.select_for_update().filter(pk=grant_id, participant=participant).first()
        if grant is None:
            raise LicenceGrant.DoesNotExist
        if grant.revoked_at is not None:
            raise ClaimRefused("licence_revoked")
        grant.revoked_at = timezone.now()
        grant.save(update_fields=["revoked_at"])
        # A Spark Ads code lets the brand run the video as an ad: without the licence it may not.
        SparkAdsCode.objects.filter(claim_id=grant.claim_id, expired_at__isnull=True).update(
            expired_at=grant.revoked_at
        )
    return grant


# Spark Ads authorisation codes.


def spark_code_check(*, code: str, days: int | None, video_id: str, livemode: bool) -> tiktok.AdCode:
    """TikTok's word on the code: it must be authorised for this very video."""
    if days not in SPARK_DAYS:
        raise ClaimRefused("spark_days")
    if not tiktok.AD_CODE_PATTERN.fullmatch(code.strip()):
        raise ClaimRefused("spark_code")
    try:
        with provider_routed_for(livemode=livemode):
            answer = tiktok.ad_code_info(auth_code=code.strip())
    except tiktok.TikTokError:
        raise ClaimRefused("spark_code") from None
    if answer.item_id != video_id or answer.status != "AUTHORIZED":
        raise ClaimRefused("spark_code")
    return answer


def spark_code_record(*, claim: ActionClaim, code: str, days: int, answer: tiktok.AdCode) -> SparkAdsCode:
    now = timezone.now()
    # TikTok's end of the authorisation wins over the period the person picked, when it says one.
    expires_at = (
        datetime.fromtimestamp(answer.auth_end_time, tz=UTC)
        if answer.auth_end_time
        else now + timedelta(days=days)
    )
    return SparkAdsCode.objects.create(
        claim=claim,
        brand_id=claim.brand_id,
        code=code.strip(),
        valid_days=days,
        authorised_at=now,
        expires_at=expires_at,
        evidence={"item_id": answer.item_id, "status": answer.status, "auth_end_time": answer.auth_end_time},
    )


def spark_codes_expire(*, now=None) -> int:
    """Codes past their validity, or whose licence was taken back, are marked expired (a
    conditional update: run twice, counted once)."""
    now = now or timezone.now()
    with transaction.atomic(durable=True):
        return SparkAdsCode.objects.filter(
            Q(expires_at__lte=now) | Q(claim__licence__revoked_at__isnull=False), expired_at__isnull=True
        ).update(expired_at=now)


# The content library: every shared video of the brand, what may be done with it, how it did.

LIBRARY_FILTERS = ("campaign", "licence", "disclosure", "code")


def content_library(*, brand: Brand, filters: dict | None = None, claim_id: int | None = None):
    """The brand's shares, newest first, each with licence, code, metrics and disclosure status
    attached (`licence_grant`, `code`, `metric_rows`, `disclosure`)."""
    filters = filters or {}
    claims = (
        ActionClaim.objects.filter(campaign__brand=brand, rule__trigger__in=POSTING_TRIGGERS)
        .select_related("campaign", "rule", "identity", "licence__terms", "spark_code")
        .prefetch_related(Prefetch("metrics", queryset=VideoMetric.objects.order_by("at", "pk")))
        .order_by("-created_at", "-pk")
    )
    if claim_id is not None:
        claims = claims.filter(pk=claim_id)
    campaign_id = str(filters.get("campaign") or "")
    if campaign_id.isdigit():
        claims = claims.filter(campaign_id=int(campaign_id))
    now = timezone.now()
    licence = filters.get("licence") or ""
    if licence == "active":
        claims = claims.filter(licence__revoked_at__isnull=True, licence__isnull=False)
    elif licence == "revoked":
        claims = claims.filter(licence__revoked_at__isnull=False)
    elif licence == "none":
        claims = claims.filter(licence__isnull=True)
    code = filters.get("code") or ""
    if code == "valid":
        claims = claims.filter(
            spark_code__isnull=False,
            spark_code__expired_at__isnull=True,
            spark_code__expires_at__gt=now,
            licence__revoked_at__isnull=True,
        )
    elif code == "expired":
        claims = claims.filter(
            Q(spark_code__expired_at__isnull=False)
            | Q(spark_code__expires_at__lte=now)
            | Q(spark_code__isnull=False, licence__revoked_at__isnull=False)
        )
    rows = list(claims[:500])
    statuses = disclosure_status_for_claims(claim_ids=[claim.pk for claim in rows])
    disclosure = filters.get("disclosure") or ""
    for claim in rows:
        claim.disclosure = statuses.get(claim.pk, {})
        claim.licence_grant = getattr(claim, "licence", None) if _has(claim, "licence") else None
        claim.code = claim.spark_code if _has(claim, "spark_code") else None
        claim.code_valid = bool(
            claim.code
            and claim.code.expired_at is None
            and claim.code.expires_at > now
            and not (claim.licence_grant and claim.licence_grant.revoked_at)
        )
        claim.metric_rows = [metric for metric in claim.metrics.all() if metric.found]
        claim.counts_now = _counts_now(claim)
        claim.views_now = claim.counts_now["views"]
        claim.readings = len(claim.metric_rows) or sum(
            1 for read in (claim.evidence.get("video"), claim.evidence.get("recheck")) if _read(read)
        )
    if disclosure:
        rows = [claim for claim in rows if claim.disclosure.get("verdict", "") == disclosure]
    return rows


def _read(read) -> bool:
    """A read of the video's counts (a video posted through JoyBack has none at its submit)."""
    return isinstance(read, dict) and read.get("view_count") is not None


def _counts_now(claim: ActionClaim) -> dict:
    """The video's counts as last measured, in the overview's order (verification.selectors.
    _latest_count): its latest reading, else at the window's close, else at the submit."""
    if claim.metric_rows:
        last = claim.metric_rows[-1]
        return {"views": last.views, "likes": last.likes, "comments": last.comments, "shares": last.shares}
    read = next(
        (read for read in (claim.evidence.get("recheck"), claim.evidence.get("video")) if _read(read)), {}
    )
    return {
        "views": read.get("view_count", 0) or 0,
        "likes": read.get("like_count", 0) or 0,
        "comments": read.get("comment_count", 0) or 0,
        "shares": read.get("share_count", 0) or 0,
    }


def _has(claim: ActionClaim, name: str) -> bool:
    try:
        return getattr(claim, name) is not None
    except (LicenceGrant.DoesNotExist, SparkAdsCode.DoesNotExist):
        return False


def content_library_claim(*, brand: Brand, claim_id: int) -> ActionClaim | None:
    rows = content_library(brand=brand, claim_id=claim_id)
    return rows[0] if rows else None


CSV_COLUMNS = [
    "claim",
    "campaign",
    "creator",
    "video_url",
    "shared_at",
    "status",
    "disclosure",
    "label_state",
    "licence_version",
    "organic_reuse",
    "paid_ads",
    "licence_days",
    "territories",
    "licence_granted_at",
    "licence_revoked_at",
    "spark_code",
    "spark_code_expires_at",
    "spark_code_valid",
    "views",
    "likes",
    "comments",
    "shares",
    "metrics_read",
    "paid_minor",
    "currency",
]


def content_library_csv(*, rows) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for claim in rows:
        grant, code = claim.licence_grant, claim.code
        video = claim.evidence.get("video", {})
        writer.writerow(
            _csv_safe(value)
            for value in [
                claim.pk,
                claim.campaign.name,
                claim.identity.display_name or claim.identity.subject,
                video.get("share_url") or claim.evidence.get("submitted_url", ""),
                claim.created_at.isoformat(),
                claim.status,
                claim.disclosure.get("verdict", ""),
                claim.disclosure.get("label_state", ""),
                grant.terms.version if grant else "",
                grant.terms.organic_reuse if grant else "",
                grant.terms.paid_ads if grant else "",
                grant.terms.duration_days if grant else "",
                " ".join(grant.terms.territories) if grant else "",
                grant.granted_at.isoformat() if grant else "",
                grant.revoked_at.isoformat() if grant and grant.revoked_at else "",
                code.code if claim.code_valid else "",
                code.expires_at.isoformat() if code else "",
                claim.code_valid,
                claim.counts_now["views"],
                claim.counts_now["likes"],
                claim.counts_now["comments"],
                claim.counts_now["shares"],
                claim.readings,
                claim.reach_paid
                if claim.rule.pays_by_reach
                else (claim.amount if claim.status == "approved" else 0),
                claim.currency,
            ]
        )
    return out.getvalue()


def _csv_safe(value):
    """A cell a spreadsheet would run as a formula is quoted with a leading apostrophe."""
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def video_embed(*, url: str, livemode: bool) -> tiktok.Embed | None:
    """TikTok's oEmbed card for a shared video, cached as long as its cover image lives (apart per
    mode: a test brand's card comes from the sandbox)."""
    key = f"tiktok-oembed:{'live' if livemode else 'test'}:{url}"
    cached = cache.get(key)
    if cached is not None:
        return cached or None
    try:
        with provider_routed_for(livemode=livemode):
            embed = tiktok.oembed(url=url)
    except tiktok.TikTokError:
        return None
    cache.set(key, embed or "", EMBED_CACHE_SECONDS)
    return embed
