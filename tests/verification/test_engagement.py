"""Pat shares a disclosed video; the reward is held, then paid or released when the window closes."""

import pytest
from django.urls import reverse
from django.utils import timezone
from django_q.models import Schedule

from campaigns.services.funding import campaign_budget_account
from joyback.ledger.models import Hold
from joyback.ledger.selectors import ledger_drift
from tests.verification.test_tiktok_login import authorize
from verification.models import ActionClaim, SandboxTikTokUser, SandboxTikTokVideo, TikTokToken
from verification.sandbox.tiktok.display_api import video_post, video_share_url
from verification.services.shares import engagement_recheck

pytestmark = pytest.mark.django_db

DISCLOSED = "Ad · Paid partnership with Alpaca Coffee. Loving the summer range!"


@pytest.fixture
def connected(client, summer):
    """Pat's browser has connected TikTok (rewarded 1.00) and Pat has posted a disclosed video."""
    client.get(authorize(client, summer.slug, display_name="Pat Creator"))
    pat = SandboxTikTokUser.objects.get(display_name="Pat Creator")
    return video_post(user=pat, caption=DISCLOSED, view_count=10)


def share(client, summer, url):
    return client.post(
        reverse("verification:share_submit", args=[summer.slug]), {"video_url": url}, follow=True
    )


def shared_claim(client, summer, video):
    share(client, summer, video_share_url(video))
    return ActionClaim.objects.get(rule__trigger="ugc_share")


def steps_html(client, summer) -> str:
    """The steps as the landing page loads them after the redirect."""
    url = reverse("verification:steps", args=[summer.slug])
    return client.get(url, headers={"HX-Request": "true"}).content.decode()


def counts(video, **values):
    SandboxTikTokVideo.objects.filter(pk=video.pk).update(**values)


def test_a_share_holds_its_reward_and_schedules_the_recheck(
    client, summer, connected, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = share(client, summer, video_share_url(connected))

    claim = ActionClaim.objects.get(rule__trigger="ugc_share")
    assert "We check your video when its window closes" in response.content.decode()
    assert (claim.status, claim.reason, claim.evidence["video"]["view_count"]) == (
        "pending",
        "awaiting_window",
        10,
    )
    assert Hold.objects.get(pk=claim.hold_id).status == "reserved"
    assert campaign_budget_account(campaign=summer).held == 5_00
    assert Schedule.objects.get(name=f"engagement-recheck-{claim.pk}").next_run == claim.check_at


def test_reaching_the_thresholds_pays_the_held_reward(client, summer, connected):
    claim = shared_claim(client, summer, connected)
    counts(connected, view_count=900, like_count=80)

    claim = engagement_recheck(claim_id=claim.pk)

    budget = campaign_budget_account(campaign=summer)
    assert (claim.status, claim.reason) == ("approved", "thresholds_met")
    assert Hold.objects.get(pk=claim.hold_id).status == "committed"
    assert (budget.held, budget.balance) == (0, 100_00 - 1_00 - 5_00)
    assert ledger_drift() == []


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"view_count": 499}, "below_threshold"),
        ({"deleted": True}, "post_deleted"),
    ],
)
def test_a_share_that_did_not_earn_it_releases_the_hold(client, summer, connected, change, reason):
    claim = shared_claim(client, summer, connected)
    counts(connected, view_count=900)
    counts(connected, **change)

    claim = engagement_recheck(claim_id=claim.pk)

    assert (claim.status, claim.reason) == ("rejected", reason)
    assert Hold.objects.get(pk=claim.hold_id).status == "voided"
    assert campaign_budget_account(campaign=summer).held == 0
    assert claim.ledger_transaction_id is None


def test_engagement_that_looks_bought_goes_to_review(client, summer, connected):
    claim = shared_claim(client, summer, connected)
    counts(connected, view_count=1000, like_count=900)

    claim = engagement_recheck(claim_id=claim.pk)

    assert (claim.status, claim.reason) == ("needs_review", "engagement_ratio")
    assert claim.signals.get().detail == "900 likes on 1000 views"
    assert Hold.objects.get(pk=claim.hold_id).status == "reserved"


def test_a_recheck_runs_once_even_if_called_twice(client, summer, connected):
    claim = shared_claim(client, summer, connected)
    counts(connected, view_count=900)

    engagement_recheck(claim_id=claim.pk)
    again = engagement_recheck(claim_id=claim.pk)

    assert again.status == "approved"
    assert campaign_budget_account(campaign=summer).balance == 100_00 - 1_00 - 5_00


def test_an_expired_token_is_refreshed_for_the_recheck(client, summer, connected):
    claim = shared_claim(client, summer, connected)
    token = TikTokToken.objects.get()
    old_refresh = token.refresh_token
    TikTokToken.objects.filter(pk=token.pk).update(access_expires_at=timezone.now())
    counts(connected, view_count=900)

    assert engagement_recheck(claim_id=claim.pk).status == "approved"
    assert TikTokToken.objects.get().refresh_token != old_refresh  # the rotated one was kept


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("https://example.com/not-tiktok", "Paste the link of your TikTok video"),
        ("https://www.tiktok.com/@someone/video/7300000000000000001", "could not find this video"),
    ],
)
def test_a_bad_share_is_refused_with_a_message_and_nothing_held(client, summer, connected, url, message):
    response = share(client, summer, url)
    step = client.get(reverse("verification:steps", args=[summer.slug]), headers={"HX-Request": "true"})

    assert response.redirect_chain[-1][0].endswith("#steps")
    # Said in the video step itself, next to the link as it was typed, and said once.
    html = step.content.decode()
    assert message in html
    assert f'value="{url}"' in html
    assert 'aria-invalid="true"' in html
    again = client.get(reverse("verification:steps", args=[summer.slug]), headers={"HX-Request": "true"})
    assert message not in again.content.decode()
    assert not ActionClaim.objects.filter(rule__trigger="ugc_share").exists()
    assert campaign_budget_account(campaign=summer).held == 0


def test_an_undisclosed_video_is_held_and_the_person_told_what_to_change(client, summer, connected):
    # Was refused outright before the compliance checker: now the reward is reserved and a
    # remediation case gives the person 24 hours (tests/compliance/test_remediation.py follows it).
    SandboxTikTokVideo.objects.filter(pk=connected.pk).update(caption="Summer vibes")

    response = share(client, summer, video_share_url(connected))

    claim = ActionClaim.objects.get(rule__trigger="ugc_share")
    assert (claim.status, claim.reason) == ("pending", "disclosure_fix")
    assert Hold.objects.get(pk=claim.hold_id).status == "reserved"
    assert "needs a fix" in response.content.decode()
    steps = client.get(reverse("verification:steps", args=[summer.slug])).content.decode()
    assert "Ad · Paid partnership with Alpaca Coffee" in steps and "I fixed it" in steps


def test_a_disclosure_gone_at_window_close_opens_remediation_instead_of_paying(client, summer, connected):
    # Was an outright rejection ("disclosure_missing"): the person now gets the 24-hour clock.
    claim = shared_claim(client, summer, connected)
    counts(connected, view_count=900, caption="Loving the summer range!")

    claim = engagement_recheck(claim_id=claim.pk)

    assert (claim.status, claim.reason) == ("pending", "disclosure_fix")
    assert claim.ledger_transaction_id is None
    assert Hold.objects.get(pk=claim.hold_id).status == "reserved"


def test_someone_elses_video_is_not_found(client, summer, connected):
    other = video_post(
        user=SandboxTikTokUser.objects.create(open_id="x", union_id="y", display_name="Other"),
        caption=DISCLOSED,
    )

    share(client, summer, video_share_url(other))

    assert "could not find this video" in steps_html(client, summer)


def test_sharing_needs_the_tiktok_login_first(client, summer):
    response = share(client, summer, "https://www.tiktok.com/@pat/video/7300000000000000001")

    assert "Connect TikTok first" in response.content.decode()


def test_the_standing_schedule_catches_shares_whose_schedule_never_ran(client, summer, connected):
    from verification.tasks import recheck_due

    claim = shared_claim(client, summer, connected)
    counts(connected, view_count=900)
    ActionClaim.objects.filter(pk=claim.pk).update(check_at=timezone.now())

    assert recheck_due() == 1
    assert ActionClaim.objects.get(pk=claim.pk).status == "approved"
    assert Schedule.objects.filter(
        name="verification-recheck-due", func="verification.tasks.recheck_due"
    ).exists()


def test_the_sandbox_studio_sets_counts_and_deletes(client, summer, connected):
    studio = reverse("verification:sandbox_tiktok_studio")

    client.post(
        studio, {"action": "update", "video_id": connected.video_id, "view_count": "1234", "like_count": "56"}
    )
    connected.refresh_from_db()
    assert (connected.view_count, connected.like_count) == (1234, 56)
    assert connected.video_id in client.get(studio).content.decode()

    client.post(studio, {"action": "delete", "video_id": connected.video_id})
    connected.refresh_from_db()
    assert connected.deleted
