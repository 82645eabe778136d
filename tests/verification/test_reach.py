"""Shares paid by reach: tiers topped up at each read of the video's views, never twice, never above
the caps; a drop pays nothing back and takes nothing back; bought-looking growth waits for a person."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from campaigns.reach import reach_tiers_parse, reach_value
from campaigns.selectors import campaign_dry_run
from campaigns.services.funding import campaign_budget_account
from campaigns.services.rules import rule_save
from joyback.ledger.models import Hold
from joyback.ledger.selectors import ledger_drift
from tests.verification.test_engagement import DISCLOSED, counts, share, shared_claim
from tests.verification.test_tiktok_login import authorize
from verification.models import ActionClaim, ReachTopUp, SandboxTikTokUser, VideoMetric
from verification.reach import reach_recheck
from verification.sandbox.tiktok.display_api import video_post, video_share_url
from verification.services.participants import participant_payable_account
from verification.services.review import claim_review

pytestmark = pytest.mark.django_db

TIERS = [[1_000, 1_00], [10_000, 5_00]]


def reach_rule(campaign, **fields):
    """The campaign's share pays 1.00 at 1,000 views and 5.00 at 10,000, at most 8.00 a video."""
    values = (
        dict(
            reward_amount=8_00,
            verification_mode="engagement",
            window_hours=72,
            reach_tiers=TIERS,
            recheck_hours=12,
        )
        | fields
    )
    return rule_save(campaign=campaign, trigger="ugc_share", **values)


@pytest.fixture
def tiered(summer):
    reach_rule(summer)
    return summer


@pytest.fixture
def video(client, tiered):
    client.get(authorize(client, tiered.slug, display_name="Pat Creator"))
    pat = SandboxTikTokUser.objects.get(display_name="Pat Creator")
    return video_post(user=pat, caption=DISCLOSED, view_count=10)


def paid(claim):
    claim.refresh_from_db()
    return claim.reach_paid


def owed(claim):
    return participant_payable_account(participant=claim.participant, currency="EUR").balance


def window_closed(claim):
    ActionClaim.objects.filter(pk=claim.pk).update(check_at=timezone.now() - timedelta(seconds=1))


def test_a_reach_share_holds_the_most_it_can_earn_and_reads_its_views_over_the_window(
    client, tiered, video, django_capture_on_commit_callbacks
):
    from django_q.models import Schedule

    with django_capture_on_commit_callbacks(execute=True):
        claim = shared_claim(client, tiered, video)

    assert (claim.status, claim.amount, claim.reach_paid) == ("pending", 8_00, 0)
    assert Hold.objects.get(pk=claim.hold_id).amount == 8_00
    assert (
        claim.next_check_at == claim.created_at + timedelta(hours=12) or claim.next_check_at < claim.check_at
    )
    assert Schedule.objects.filter(name__startswith=f"reach-recheck-{claim.pk}-").count() == 1


def test_each_read_tops_up_only_the_difference_and_a_tier_is_never_paid_twice(client, tiered, video):
    claim = shared_claim(client, tiered, video)
    login = owed(claim)

    counts(video, view_count=1_500)
    reach_recheck(claim_id=claim.pk)
    reach_recheck(claim_id=claim.pk)  # the same views read again: nothing more
    assert paid(claim) == 1_00
    counts(video, view_count=12_000)
    reach_recheck(claim_id=claim.pk)

    assert paid(claim) == 5_00
    assert list(ReachTopUp.objects.filter(claim=claim).values_list("level", "amount")) == [
        (1_00, 1_00),
        (5_00, 4_00),
    ]
    assert owed(claim) - login == 5_00
    hold = Hold.objects.get(pk=ActionClaim.objects.get(pk=claim.pk).hold_id)
    assert (hold.status, hold.amount) == ("reserved", 3_00)  # what the video can still earn
    assert campaign_budget_account(campaign=tiered).held == 3_00
    assert ledger_drift() == []


def test_a_drop_in_views_pays_nothing_back_and_takes_nothing_back(client, tiered, video):
    claim = shared_claim(client, tiered, video)
    counts(video, view_count=12_000)
    reach_recheck(claim_id=claim.pk)
    before = owed(claim)

    counts(video, view_count=900)  # TikTok recounted: invalid views taken back
    reach_recheck(claim_id=claim.pk)
    counts(video, view_count=11_000)
    reach_recheck(claim_id=claim.pk)

    assert paid(claim) == 5_00
    assert owed(claim) == before
    assert ReachTopUp.objects.filter(claim=claim).count() == 1
    assert list(VideoMetric.objects.filter(claim=claim).values_list("views", flat=True)) == [
        12_000,
        900,
        11_000,
    ]


def test_a_video_never_earns_above_its_cap(client, summer):
    reach_rule(summer, reach_tiers=[], reach_per_thousand=1_00, reward_amount=3_00)
    client.get(authorize(client, summer.slug, display_name="Pat Creator"))
    video = video_post(user=SandboxTikTokUser.objects.get(display_name="Pat Creator"), caption=DISCLOSED)
    claim = shared_claim(client, summer, video)

    counts(video, view_count=2_000)
    reach_recheck(claim_id=claim.pk)
    assert paid(claim) == 2_00
    counts(video, view_count=50_000)
    reach_recheck(claim_id=claim.pk)

    assert paid(claim) == 3_00
    assert ActionClaim.objects.get(pk=claim.pk).hold_id is None  # nothing left to hold


def test_the_window_end_settles_the_share_at_what_it_was_paid_and_releases_the_hold(client, tiered, video):
    claim = shared_claim(client, tiered, video)
    counts(video, view_count=3_000)
    reach_recheck(claim_id=claim.pk)
    window_closed(claim)

    claim = reach_recheck(claim_id=claim.pk)

    assert (claim.status, claim.reason, claim.amount, claim.reach_paid) == (
        "approved",
        "reach_paid",
        1_00,
        1_00,
    )
    assert campaign_budget_account(campaign=tiered).held == 0
    assert campaign_budget_account(campaign=tiered).balance == 100_00 - 1_00 - 1_00
    assert reach_recheck(claim_id=claim.pk).reach_paid == 1_00  # settled once
    assert ledger_drift() == []


def test_a_video_that_reached_no_tier_is_not_rewarded_and_its_hold_goes_back(client, tiered, video):
    claim = shared_claim(client, tiered, video)
    counts(video, view_count=999)
    window_closed(claim)

    claim = reach_recheck(claim_id=claim.pk)

    assert (claim.status, claim.reason) == ("rejected", "below_threshold")
    assert campaign_budget_account(campaign=tiered).held == 0


def test_bought_looking_engagement_stops_the_top_up_with_a_reason_for_the_reviewer(
    client, tiered, video, alice
):
    claim = shared_claim(client, tiered, video)
    counts(video, view_count=1_500)
    reach_recheck(claim_id=claim.pk)
    counts(video, view_count=12_000, like_count=9_000)

    claim = reach_recheck(claim_id=claim.pk)

    assert (claim.status, claim.reason, claim.reach_paid) == ("needs_review", "engagement_ratio", 1_00)
    assert claim.signals.get().detail == "9000 likes on 12000 views"
    queue = client.get(reverse("verification:review_queue", args=[tiered.brand.slug]))
    assert queue.status_code in (200, 302)

    claim = claim_review(claim=claim, decided_by=alice, decision="approve", reason="a real viral video")

    assert (claim.status, claim.reach_paid) == ("pending", 5_00)  # the stopped reading paid; reads go on


def test_a_rejected_reach_share_gives_back_what_its_top_ups_paid(client, tiered, video, alice):
    claim = shared_claim(client, tiered, video)
    counts(video, view_count=1_500)
    reach_recheck(claim_id=claim.pk)
    counts(video, view_count=12_000, like_count=9_000)
    claim = reach_recheck(claim_id=claim.pk)

    claim = claim_review(claim=claim, decided_by=alice, decision="reject", reason="bought likes")

    assert (claim.status, claim.amount) == ("rejected", 1_00)
    assert campaign_budget_account(campaign=tiered).held == 0
    assert campaign_budget_account(campaign=tiered).balance == 100_00 - 1_00  # only the login stays paid
    assert ledger_drift() == []


def test_views_growing_faster_than_an_audience_can_wait_for_a_person(client, tiered, video, settings):
    settings.FRAUD_MAX_VIEWS_PER_HOUR = 1_000
    claim = shared_claim(client, tiered, video)
    counts(video, view_count=9_000)

    claim = reach_recheck(claim_id=claim.pk)

    assert (claim.status, claim.reason) == ("needs_review", "view_velocity")


def _second_person_shares(client, campaign, name="Sam Creator"):
    other = type(client)(REMOTE_ADDR="198.51.100.23")  # another household: not a new browser at Pat's
    other.get(authorize(other, campaign.slug, display_name=name))
    video = video_post(user=SandboxTikTokUser.objects.get(display_name=name), caption=DISCLOSED)
    share(other, campaign, video_share_url(video))
    return other


def test_the_campaign_cap_limits_what_all_videos_together_can_earn(client, summer):
    reach_rule(summer, reach_campaign_cap=10_00)
    client.get(authorize(client, summer.slug, display_name="Pat Creator"))
    video = video_post(user=SandboxTikTokUser.objects.get(display_name="Pat Creator"), caption=DISCLOSED)
    first = shared_claim(client, summer, video)

    _second_person_shares(client, summer)

    second = ActionClaim.objects.get(rule__trigger="ugc_share", identity__display_name="Sam Creator")
    assert (first.amount, second.amount) == (8_00, 2_00)  # the second gets what the cap leaves


def test_a_share_past_the_campaign_cap_is_refused_with_a_message_and_nothing_held(client, summer):
    reach_rule(summer, reach_campaign_cap=8_00)
    client.get(authorize(client, summer.slug, display_name="Pat Creator"))
    video = video_post(user=SandboxTikTokUser.objects.get(display_name="Pat Creator"), caption=DISCLOSED)
    shared_claim(client, summer, video)
    held = campaign_budget_account(campaign=summer).held

    other = _second_person_shares(client, summer)

    steps = other.get(reverse("verification:steps", args=[summer.slug]), headers={"HX-Request": "true"})
    assert "reach rewards of this campaign are used up" in steps.content.decode()
    assert not ActionClaim.objects.filter(
        identity__display_name="Sam Creator", rule__trigger="ugc_share"
    ).exists()
    assert campaign_budget_account(campaign=summer).held == held


def test_the_person_cap_limits_what_one_person_earns_by_reach(client, summer):
    reach_rule(summer, reach_person_cap=4_00)
    client.get(authorize(client, summer.slug, display_name="Pat Creator"))
    video = video_post(user=SandboxTikTokUser.objects.get(display_name="Pat Creator"), caption=DISCLOSED)
    claim = shared_claim(client, summer, video)
    counts(video, view_count=12_000)

    reach_recheck(claim_id=claim.pk)

    assert claim.amount == 4_00 and paid(claim) == 4_00


def test_the_dry_run_shows_how_far_the_budget_goes_at_each_tier(tiered):
    dry = campaign_dry_run(campaign=tiered, budget=100_00)

    row = next(row for row in dry.rows if row.rule.trigger == "ugc_share")
    assert [(t.views, t.value, t.videos) for t in row.tiers] == [(1_000, 1_00, 100), (10_000, 5_00, 20)]
    assert (row.rewards, row.spend) == (12, 96_00)  # the worst case: every video at its cap


def test_the_dry_run_honours_the_campaign_cap(summer):
    reach_rule(summer, reach_campaign_cap=20_00)

    row = next(
        row
        for row in campaign_dry_run(campaign=summer, budget=100_00).rows
        if row.rule.trigger == "ugc_share"
    )

    assert row.spend <= 20_00 and [t.videos for t in row.tiers] == [20, 4]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1000 = 1.00\n500 = 2.00", "more views and a higher reward"),
        ("a thousand = one", "write “views = reward”"),
        ("1000 = 0", "more than zero"),
    ],
)
def test_tiers_a_brand_cannot_mean_are_refused_with_a_clear_message(text, message):
    from campaigns.reach import TiersInvalid

    with pytest.raises(TiersInvalid, match=message):
        reach_tiers_parse(text)


def test_a_brand_sets_a_tiered_rule_on_its_campaign_page(client, alice, summer):
    client.force_login(alice)
    url = reverse("campaign_rule_save", args=[summer.brand.slug, summer.pk])
    form = {
        "trigger": "ugc_share",
        "reward": "8.00",
        "verification_mode": "engagement",
        "window_hours": "72",
        "min_views": "0",
        "min_likes": "0",
        "reach_tiers": "1,000 = 1.00\n10,000 = 5.00",
        "reach_campaign_cap": "50.00",
    }

    response = client.post(url, form)

    assert response.status_code == 302, response.content.decode()[:2000]
    rule = summer.rules.get(trigger="ugc_share")
    assert (rule.reach_tiers, rule.reach_campaign_cap, rule.pays_by_reach) == (TIERS, 50_00, True)
    page = client.get(response["Location"]).content.decode()
    assert "up to" in page and "videos at 10000 views" in page


def test_a_tier_above_the_cap_per_video_is_refused_and_nothing_changes(client, alice, summer):
    client.force_login(alice)
    url = reverse("campaign_rule_save", args=[summer.brand.slug, summer.pk])
    form = {
        "trigger": "ugc_share",
        "reward": "2.00",
        "verification_mode": "engagement",
        "window_hours": "72",
        "min_views": "0",
        "min_likes": "0",
        "reach_tiers": "1000 = 1.00\n10000 = 5.00",
    }

    response = client.post(url, form)

    assert response.status_code == 400
    assert "more than the most one video earns" in response.content.decode()
    assert summer.rules.get(trigger="ugc_share").reach_tiers == []


def test_reach_value_is_the_best_tier_plus_the_rate_capped():
    class Rule:
        reach_tiers = TIERS
        reach_per_thousand = 10
        reward_amount = 6_00

    assert [reach_value(rule=Rule, views=v) for v in (0, 999, 1_000, 9_999, 10_000, 200_000)] == [
        0,
        0,
        1_10,
        1_00 + 90,
        5_00 + 1_00,
        6_00,
    ]


def test_a_video_growing_on_tiktok_is_topped_up_as_it_grows_and_a_recount_takes_nothing(
    client, tiered, video
):
    from verification.models import SandboxTikTokVideo

    claim = shared_claim(client, tiered, video)
    growing = SandboxTikTokVideo.objects.filter(pk=video.pk)
    growing.update(views_per_hour=500, report_lag_minutes=60, create_time=timezone.now() - timedelta(hours=4))

    reach_recheck(claim_id=claim.pk)  # 10 + 500 views an hour for the 3 hours TikTok has counted
    assert paid(claim) == 1_00
    growing.update(create_time=timezone.now() - timedelta(hours=25), dip_every=4)  # the share read it once
    reach_recheck(claim_id=claim.pk)  # 12,010 views
    assert paid(claim) == 5_00
    reach_recheck(claim_id=claim.pk)  # the third read: a recount a twentieth lower, below 12,000

    assert paid(claim) == 5_00
    assert list(VideoMetric.objects.filter(claim=claim).values_list("views", flat=True)) == [
        1_510,
        12_010,
        11_410,
    ]


def test_a_video_on_its_way_through_joyback_takes_its_room_in_the_campaign_cap(
    client, summer, settings, tmp_path
):
    from tests.verification.test_tiktok_posting import connect, mp4, post_video
    from verification.models import TikTokPost

    settings.STORAGES = {
        **settings.STORAGES,
        "video_uploads": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "uploads")},
        },
    }
    reach_rule(summer, reach_campaign_cap=10_00)
    connect(client, summer)
    post_video(client, summer, mp4())
    post = TikTokPost.objects.get()
    assert Hold.objects.get(pk=post.hold_id).amount == 8_00

    _second_person_shares(client, summer)

    assert (
        ActionClaim.objects.get(identity__display_name="Sam Creator", rule__trigger="ugc_share").amount
        == 2_00
    )
