"""Property: whatever TikTok says about a post, in whatever order and however often, its held reward
ends exactly one way. Public: one claim holding it, still reserved for the window. Failed: the hold
voided, no claim. Neither yet: still held. Never two claims, never a hold resolved twice."""

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from campaigns.services.funding import campaign_budget_account
from joyback.ledger.models import Hold
from joyback.ledger.services import hold_reserve
from verification import posting
from verification.models import ActionClaim, TikTokPost
from verification.providers.tiktok import PublishStatus
from verification.services.participants import identity_attach, participant_create

pytestmark = pytest.mark.django_db

WORDS = {
    "processing": PublishStatus(status="PROCESSING_UPLOAD"),
    "complete": PublishStatus(status="PUBLISH_COMPLETE"),
    "public": PublishStatus(status="PUBLISH_COMPLETE", post_id="7300000000000000042"),
    "public_other_id": PublishStatus(status="PUBLISH_COMPLETE", post_id="7300000000000000043"),
    "failed": PublishStatus(status="FAILED", fail_reason="spam_risk_too_many_posts"),
    "internal": PublishStatus(status="FAILED", fail_reason="internal"),
    "gone": PublishStatus(status="NO_LONGER_PUBLIC", post_id="7300000000000000042"),
}
_people = itertools.count()


def a_post_under_way(campaign) -> TikTokPost:
    """A post uploaded and waiting for TikTok's word, its reward held, for a new person each time."""
    rule = campaign.rules.get(trigger="ugc_share")
    identity = identity_attach(
        participant=participant_create(brand=campaign.brand),
        provider="tiktok",
        subject=f"oid-{next(_people)}",
    )
    post = TikTokPost.objects.create(
        campaign=campaign,
        rule=rule,
        participant=identity.participant,
        identity=identity,
        caption="Ad · Paid partnership with Alpaca Coffee",
        video_size=2048,
        status="processing",
        publish_id=f"v_pub_file~v2-1.{post_number()}",
    )
    hold = hold_reserve(
        account=campaign_budget_account(campaign=campaign),
        amount=rule.reward_amount,
        idempotency_key=f"tiktok-post-hold:{post.pk}",
        reference=f"tiktok-post:{post.pk}",
    )
    TikTokPost.objects.filter(pk=post.pk).update(hold_id=hold.pk)
    return TikTokPost.objects.get(pk=post.pk)


_posts = itertools.count()


def post_number():
    return next(_posts)


@pytest.fixture
def roomy(make_live_campaign):
    """Room for every example's hold: holds of posts under way stay reserved between examples."""
    return make_live_campaign(slug="roomy", budget=100_000_00)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(said=st.lists(st.sampled_from(sorted(WORDS)), max_size=8))
def test_a_posts_reward_ends_exactly_one_way(roomy, said):
    post = a_post_under_way(roomy)

    for word in said:
        posting.tiktok_post_status(publish_id=post.publish_id, status=WORDS[word])

    post.refresh_from_db()
    hold = Hold.objects.get(pk=post.hold_id)
    claims = list(ActionClaim.objects.filter(rule=post.rule, identity=post.identity))
    first_final = next((w for w in said if w in ("public", "public_other_id", "failed", "internal")), None)
    if first_final in ("public", "public_other_id"):
        assert post.status == "public" and len(claims) == 1
        assert claims[0].hold_id == hold.pk and hold.status == "reserved"
        assert claims[0].evidence["video"]["video_id"] == WORDS[first_final].post_id  # the first word stands
        assert claims[0].evidence["label"] == "set_by_joyback"
    elif first_final in ("failed", "internal"):
        assert post.status == "failed" and not claims and hold.status == "voided"
    else:
        assert post.status in ("processing", "published") and not claims and hold.status == "reserved"
