"""Posting through JoyBack under concurrency, on PostgreSQL: TikTok's webhooks and our status/fetch
arriving at once make one claim, and one person posting twice at once gets one post under way."""

import pytest

from campaigns.services.funding import campaign_budget_account
from joyback.ledger.models import Hold
from tests.verification.test_claim_races import race
from tests.verification.test_tiktok_posting import connect, mp4
from verification import posting
from verification.models import ActionClaim, Identity, TikTokPost
from verification.providers import tiktok
from verification.services.refusals import ClaimRefused

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def quiet_tiktok(monkeypatch):
    """TikTok's webhooks held back, so that the test decides when they arrive."""
    from verification.sandbox.tiktok import content_posting as sandbox

    monkeypatch.setattr(sandbox, "webhook_deliver", lambda **kwargs: 200)


def test_webhooks_and_polls_racing_on_a_public_post_make_one_claim(
    client, summer, quiet_tiktok, tmp_path, settings
):
    settings.STORAGES = {
        **settings.STORAGES,
        "video_uploads": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path)},
        },
    }
    connect(client, summer)
    identity = Identity.objects.get()
    post = posting.tiktok_post_start(
        rule=summer.rules.get(trigger="ugc_share"),
        identity=identity,
        upload=mp4(),
        text="",
        privacy_level="PUBLIC_TO_EVERYONE",
    )
    post.refresh_from_db()  # the upload ran after the commit (Q_SYNC)
    assert post.status == "processing"
    public = tiktok.PublishStatus(status="PUBLISH_COMPLETE", post_id="7300000000000000042")

    outcomes = race(8, lambda i: posting.tiktok_post_status(publish_id=post.publish_id, status=public))

    assert sorted(map(str, outcomes)) == ["already_public"] * 7 + ["claimed"]
    claim = ActionClaim.objects.get(rule__trigger="ugc_share")
    assert Hold.objects.get(pk=claim.hold_id).status == "reserved"
    assert campaign_budget_account(campaign=summer).held == claim.amount


def test_one_person_posting_twice_at_once_gets_one_post(client, summer, quiet_tiktok, tmp_path, settings):
    settings.STORAGES = {
        **settings.STORAGES,
        "video_uploads": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path)},
        },
    }
    connect(client, summer)
    identity = Identity.objects.get()
    rule = summer.rules.get(trigger="ugc_share")

    def start(i):
        return posting.tiktok_post_start(
            rule=rule, identity=identity, upload=mp4(), text=f"take {i}", privacy_level="PUBLIC_TO_EVERYONE"
        )

    outcomes = race(4, start)

    assert sum(isinstance(o, TikTokPost) for o in outcomes) == 1
    assert all(
        isinstance(o, TikTokPost) or (isinstance(o, ClaimRefused) and o.code == "post_under_way")
        for o in outcomes
    )
    assert TikTokPost.objects.count() == 1
    assert campaign_budget_account(campaign=summer).held == rule.reward_amount
    assert len([p for p in tmp_path.rglob("*") if p.is_file()]) <= 1  # the refused files were deleted
