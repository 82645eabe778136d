"""Pat posts through JoyBack: the video goes out on TikTok with the paid-partnership label on and
the disclosure first, through the real adapter against the sandbox TikTok's Content Posting API."""

import json
import struct
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django_q.models import Schedule

from campaigns.fees import fee_plans_forget
from campaigns.models import FeeCharge, FeePlan
from campaigns.services.funding import campaign_budget_account
from joyback.ledger.models import Hold
from verification import posting
from verification.models import (
    ActionClaim,
    ClaimStatus,
    Identity,
    ProviderEvent,
    SandboxTikTokPublish,
    SandboxTikTokVideo,
    TikTokPost,
)
from verification.providers import tiktok
from verification.sandbox.tiktok import content_posting as sandbox
from verification.selectors import participant_can_publish
from verification.services.provider_events import provider_events_process
from verification.services.rewards import claim_reward_post

pytestmark = pytest.mark.django_db

DISCLOSURE = "Ad · Paid partnership with Alpaca Coffee"


@pytest.fixture(autouse=True)
def uploads(settings, tmp_path):
    """Chosen videos are stored here until the worker has sent them."""
    settings.STORAGES = {
        **settings.STORAGES,
        "video_uploads": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "uploads")},
        },
    }
    return tmp_path / "uploads"


def stored_files(uploads: Path) -> list[Path]:
    return [path for path in uploads.rglob("*") if path.is_file()] if uploads.exists() else []


def mp4_bytes(size=2048, seconds=12):
    """Bytes that start like an MP4 file (an ftyp box, as the sandbox's format check wants), with a
    movie header saying how long it is."""
    ftyp = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"
    mvhd_body = (
        b"\x00\x00\x00\x00" + b"\x00" * 8 + struct.pack(">II", 1000, int(seconds * 1000)) + b"\x00" * 80
    )
    mvhd = struct.pack(">I4s", 8 + len(mvhd_body), b"mvhd") + mvhd_body
    moov = struct.pack(">I4s", 8 + len(mvhd), b"moov") + mvhd
    head = ftyp + moov
    return head + b"\x00" * (size - len(head))


def mp4(size=2048, name="clip.mp4", content_type="video/mp4", seconds=12):
    return SimpleUploadedFile(name, mp4_bytes(size, seconds), content_type=content_type)


def connect(client, campaign, *, publish=True, allow_publish=True, display_name="Pat Creator"):
    """Pat's browser connects TikTok; with publish, through "Post it through JoyBack"."""
    start = client.post(
        reverse("verification:tiktok_start", args=[campaign.slug]), {"publish": "1"} if publish else {}
    )
    form = {"display_name": display_name, "decision": "approve"} | (
        {"allow_publish": "1"} if allow_publish else {}
    )
    consent = client.post(start["Location"], form)
    return start["Location"], client.get(consent["Location"], follow=True)


def post_video(
    client,
    campaign,
    video=None,
    caption="Morning ritual with the new roast!",
    privacy="PUBLIC_TO_EVERYONE",
    **form,
):
    """Pat presses Post on the posting screen, having picked who can see the video."""
    return client.post(
        reverse("verification:tiktok_post", args=[campaign.slug]),
        {
            "trigger": "ugc_share",
            "caption": caption,
            "privacy_level": privacy,
            **({"video": video} if video is not None else {}),
            **form,
        },
        follow=True,
    )


def posted(client, campaign, capture, video=None, **extra):
    """Post, run what the commit queued (the upload task, Q_SYNC) and the standing worker."""
    with capture(execute=True):
        response = post_video(client, campaign, video or mp4(), **extra)
    with capture(execute=True):
        provider_events_process()
    return response


# Consent: video.publish is asked for only on this path.


def test_connecting_tiktok_does_not_ask_to_post_but_choosing_to_post_does(client, summer):
    plain = client.post(reverse("verification:tiktok_start", args=[summer.slug]))
    asked = client.post(reverse("verification:tiktok_start", args=[summer.slug]), {"publish": "1"})

    assert "video.publish" not in parse_qs(urlsplit(plain["Location"]).query)["scope"][0]
    assert parse_qs(urlsplit(asked["Location"]).query)["scope"][0].split(",")[-1] == "video.publish"


def test_granting_video_publish_opens_the_upload_form(client, summer):
    _url, page = connect(client, summer)

    assert "JoyBack may now post your video on TikTok" in page.content.decode()
    steps = client.get(reverse("verification:steps", args=[summer.slug])).content.decode()
    assert reverse("verification:tiktok_post_compose", args=[summer.slug]) in steps
    screen = client.get(
        reverse("verification:tiktok_post_compose", args=[summer.slug]), {"trigger": "ugc_share"}
    ).content.decode()
    assert 'name="video"' in screen and DISCLOSURE in screen and "Paid partnership" in screen
    assert participant_can_publish(participant=Identity.objects.get().participant)


def test_unticking_video_publish_keeps_posting_closed_and_refuses_an_upload(client, summer, uploads):
    _url, page = connect(client, summer, allow_publish=False)

    assert "You did not let JoyBack post for you" in page.content.decode()
    response = post_video(client, summer, mp4())

    assert "Allow JoyBack to post on your TikTok first." in response.content.decode()
    assert not TikTokPost.objects.exists() and not stored_files(uploads)


# The whole way, through the adapter and the sandbox.


def test_a_posted_video_goes_out_labelled_and_its_claim_records_what_was_sent(
    client, summer, uploads, django_capture_on_commit_callbacks
):
    connect(client, summer)

    response = posted(client, summer, django_capture_on_commit_callbacks)

    assert "on its way to TikTok" in response.content.decode()
    post = TikTokPost.objects.get()
    sent = SandboxTikTokPublish.objects.get()
    # What TikTok received: the label on, public, and the disclosure first in the caption.
    assert sent.post_info["brand_content_toggle"] is True and sent.post_info["brand_organic_toggle"] is False
    assert sent.post_info["privacy_level"] == "PUBLIC_TO_EVERYONE"
    assert sent.post_info["title"] == f"{DISCLOSURE} Morning ritual with the new roast!"
    assert sent.uploaded_bytes == sent.video_size == 2048
    assert post.sent["post_info"] == sent.post_info  # our record is what was sent
    claim = ActionClaim.objects.get(rule__trigger="ugc_share")
    assert (post.status, post.claim_id, post.post_id) == ("public", claim.pk, sent.video.video_id)
    assert (claim.status, claim.reason) == ("pending", "awaiting_window")
    assert claim.evidence["label"] == "set_by_joyback"
    assert claim.evidence["video"]["video_id"] == sent.video.video_id
    assert claim.evidence["posted_through_joyback"]["sent"]["post_info"]["brand_content_toggle"] is True
    assert claim.hold_id == post.hold_id and Hold.objects.get(pk=claim.hold_id).status == "reserved"
    assert Schedule.objects.filter(name=f"engagement-recheck-{claim.pk}").exists()
    assert not stored_files(uploads)  # TikTok has it; nothing kept on our side
    steps = client.get(reverse("verification:steps", args=[summer.slug])).content.decode()
    assert "Posted through JoyBack with TikTok" in steps


def test_the_window_check_pays_a_posted_video_on_its_counts(
    client, summer, django_capture_on_commit_callbacks
):
    from verification.services.shares import engagement_recheck

    connect(client, summer)
    posted(client, summer, django_capture_on_commit_callbacks)
    claim = ActionClaim.objects.get(rule__trigger="ugc_share")
    SandboxTikTokVideo.objects.filter(video_id=claim.evidence["video"]["video_id"]).update(
        view_count=900, like_count=80
    )

    claim = engagement_recheck(claim_id=claim.pk)

    assert (claim.status, claim.reason) == ("approved", "thresholds_met")


def test_the_disclosure_toggles_are_never_read_back(client, summer, django_capture_on_commit_callbacks):
    connect(client, summer)
    posted(client, summer, django_capture_on_commit_callbacks)
    token = Identity.objects.get().tiktok_token
    post = TikTokPost.objects.get()

    status = client.post(
        "/sandbox/tiktok/v2/post/publish/status/fetch/",
        json.dumps({"publish_id": post.publish_id}),
        content_type="application/json",
        headers={"Authorization": f"Bearer {token.access_token}"},
    ).content.decode()
    video = tiktok.videos_query(access_token=token.access_token, video_ids=[post.post_id])[post.post_id]

    assert "brand_content" not in status and "PUBLISH_COMPLETE" in status
    assert "brand_content" not in json.dumps(video.__dict__)


# What goes wrong, and what the person is told.


def test_a_daily_post_cap_at_tiktok_is_said_in_words_before_anything_is_stored(
    client, summer, settings, uploads, django_capture_on_commit_callbacks
):
    settings.SANDBOX_TIKTOK_POSTS_PER_DAY = 0
    connect(client, summer)

    response = posted(client, summer, django_capture_on_commit_callbacks)

    assert not TikTokPost.objects.exists() and not Hold.objects.exists()
    assert campaign_budget_account(campaign=summer).held == 0
    assert not stored_files(uploads)
    page = response.content.decode()
    assert "posted through apps as often as it allows today" in page
    assert "Paste a link to a video posted in the app" in page  # the other way stays open
    assert not SandboxTikTokPublish.objects.exists()


def test_an_unaudited_app_posts_nothing_privately_and_says_why(
    client, summer, settings, uploads, django_capture_on_commit_callbacks
):
    settings.SANDBOX_TIKTOK_UNAUDITED = True
    connect(client, summer)

    posted(client, summer, django_capture_on_commit_callbacks)

    post = TikTokPost.objects.get()
    assert (post.status, post.failure) == ("failed", "private_only")
    assert not SandboxTikTokVideo.objects.exists()  # no private post was made either
    assert campaign_budget_account(campaign=summer).held == 0
    steps = client.get(reverse("verification:steps", args=[summer.slug])).content.decode()
    assert "A private video reaches nobody" in steps


def test_a_creator_tiktok_offers_only_private_posting_is_not_posted_at_all(
    client, summer, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(sandbox, "PRIVACY_OPTIONS", ["FOLLOWER_OF_CREATOR", "SELF_ONLY"])
    connect(client, summer)

    response = posted(client, summer, django_capture_on_commit_callbacks)

    assert not TikTokPost.objects.exists()
    assert "A private video reaches nobody" in response.content.decode()
    assert not SandboxTikTokPublish.objects.exists()  # video/init was never called


def test_a_file_tiktok_cannot_read_fails_after_upload_through_the_webhook(
    client, summer, django_capture_on_commit_callbacks
):
    connect(client, summer)
    not_a_video = SimpleUploadedFile("clip.mp4", b"PK\x03\x04" + b"\x00" * 4000, content_type="video/mp4")

    # The browser could not play it either; it measured a length all the same.
    posted(client, summer, django_capture_on_commit_callbacks, video=not_a_video, duration="8")

    post = TikTokPost.objects.get()
    assert (post.status, post.failure) == ("failed", "file_format_check_failed")
    assert ProviderEvent.objects.get(payload__event="post.publish.failed").outcome == "failed failed"
    steps = client.get(reverse("verification:steps", args=[summer.slug])).content.decode()
    assert "could not read this file as a video" in steps


def test_tiktok_rate_limit_on_init_tries_again_later(
    client, summer, uploads, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(sandbox, "INIT_PER_MINUTE", 0)
    connect(client, summer)

    posted(client, summer, django_capture_on_commit_callbacks)

    post = TikTokPost.objects.get()
    assert (post.status, post.attempts, post.failure) == ("stored", 1, "")
    assert Schedule.objects.filter(name=f"tiktok-post-upload-{post.pk}-1").exists()
    assert len(stored_files(uploads)) == 1  # the file waits for the next try
    steps = client.get(reverse("verification:steps", args=[summer.slug])).content.decode()
    assert "TikTok was busy; we are trying again." in steps

    monkeypatch.setattr(sandbox, "INIT_PER_MINUTE", 6)
    with django_capture_on_commit_callbacks(execute=True):
        posting.tiktok_post_upload(post_id=post.pk)
    with django_capture_on_commit_callbacks(execute=True):
        provider_events_process()
    post.refresh_from_db()
    assert post.status == "public"


def test_rate_limits_give_up_after_the_last_attempt(
    client, summer, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(sandbox, "INIT_PER_MINUTE", 0)
    connect(client, summer)
    posted(client, summer, django_capture_on_commit_callbacks)
    post = TikTokPost.objects.get()

    for _attempt in range(posting.UPLOAD_MAX_ATTEMPTS):
        posting.tiktok_post_upload(post_id=post.pk)

    post.refresh_from_db()
    assert (post.status, post.failure) == ("failed", "upload_failed")
    assert "after several tries" in posting.failure_text(post.failure)


# Bad input is refused with a clear message and nothing changes.


@pytest.mark.parametrize(
    ("video", "message"),
    [
        (None, "Choose your video file."),
        (
            SimpleUploadedFile("notes.txt", b"hello", content_type="text/plain"),
            "Choose an MP4, MOV or WebM video.",
        ),
        (SimpleUploadedFile("empty.mp4", b"", content_type="video/mp4"), "Choose your video file."),
    ],
)
def test_a_wrong_file_is_refused_and_nothing_is_stored(client, summer, uploads, video, message):
    connect(client, summer)

    response = post_video(client, summer, video)

    assert message in response.content.decode()
    assert not TikTokPost.objects.exists() and not stored_files(uploads)
    assert campaign_budget_account(campaign=summer).held == 0


def test_a_video_over_the_size_limit_is_refused_while_it_streams(client, summer, settings, uploads):
    settings.TIKTOK_POST_MAX_BYTES = 1000
    connect(client, summer)

    response = post_video(client, summer, mp4(size=5000))

    assert "larger than TikTok takes" in response.content.decode()
    assert not TikTokPost.objects.exists() and not stored_files(uploads)


def test_a_caption_too_long_for_tiktok_is_refused(client, summer, uploads):
    connect(client, summer)

    response = post_video(client, summer, mp4(), caption="word " * 440)

    assert "too long for TikTok" in response.content.decode()
    assert not TikTokPost.objects.exists() and not stored_files(uploads)


def test_a_second_video_while_one_is_on_its_way_is_refused(client, summer, uploads):
    connect(client, summer)
    post_video(client, summer, mp4())  # its upload task waits (the commit hooks are not run)

    response = post_video(client, summer, mp4())
    client.post(  # a link sent from a page opened before the post started
        reverse("verification:share_submit", args=[summer.slug]),
        {"video_url": "https://www.tiktok.com/@pat/video/7300000000000000001"},
        follow=True,
    )
    step = client.get(reverse("verification:steps", args=[summer.slug]), headers={"HX-Request": "true"})

    assert "already claimed" not in response.content.decode()
    assert TikTokPost.objects.count() == 1 and len(stored_files(uploads)) == 1
    assert "on its way to TikTok through JoyBack" in step.content.decode()  # said in the step itself


def test_a_browser_without_tiktok_for_this_brand_cannot_post(client, summer, make_live_campaign, bison):
    other = make_live_campaign(slug="bison-rides", brand=bison)
    connect(client, other, display_name="Pat Creator")  # connected at Bison's campaign only

    response = post_video(client, summer, mp4())

    assert "Connect TikTok first" in response.content.decode()
    assert not TikTokPost.objects.filter(campaign=summer).exists()


# Status transitions: TikTok's word moves a post on, never back.


def _publish(client, summer, capture, monkeypatch):
    """A post uploaded while TikTok's webhooks were lost: it waits on status/fetch."""
    monkeypatch.setattr(sandbox, "webhook_deliver", lambda **kwargs: 200)
    connect(client, summer)
    with capture(execute=True):
        post_video(client, summer, mp4())
    return TikTokPost.objects.get()


def test_lost_webhooks_are_made_up_for_by_status_fetch(
    client, summer, monkeypatch, django_capture_on_commit_callbacks
):
    post = _publish(client, summer, django_capture_on_commit_callbacks, monkeypatch)
    assert post.status == "processing"
    assert Schedule.objects.filter(name__startswith=f"tiktok-post-poll-{post.pk}-").exists()

    with django_capture_on_commit_callbacks(execute=True):
        outcome = posting.tiktok_post_poll(post_id=post.pk)

    post.refresh_from_db()
    assert (outcome, post.status) == ("claimed", "public")
    assert ActionClaim.objects.get(rule__trigger="ugc_share").evidence["label"] == "set_by_joyback"


def test_statuses_only_move_forward(client, summer, monkeypatch, django_capture_on_commit_callbacks):
    post = _publish(client, summer, django_capture_on_commit_callbacks, monkeypatch)
    complete = tiktok.PublishStatus(status="PUBLISH_COMPLETE")
    public = tiktok.PublishStatus(status="PUBLISH_COMPLETE", post_id="7300000000000000042")
    failed = tiktok.PublishStatus(status="FAILED", fail_reason="internal")

    steps = [
        posting.tiktok_post_status(publish_id=post.publish_id, status=complete),
        TikTokPost.objects.get().status,
        posting.tiktok_post_status(publish_id=post.publish_id, status=public),
        posting.tiktok_post_status(publish_id=post.publish_id, status=public),  # a duplicate delivery
        posting.tiktok_post_status(publish_id=post.publish_id, status=complete),  # late and out of order
        posting.tiktok_post_status(publish_id=post.publish_id, status=failed),
        TikTokPost.objects.get().status,
    ]

    assert steps == [
        "published",
        "published",
        "claimed",
        "already_public",
        "published",
        "failed public",
        "public",
    ]
    assert ActionClaim.objects.filter(rule__trigger="ugc_share").count() == 1
    assert posting.tiktok_post_status(publish_id="v_pub_file~unknown", status=public) == "unknown_publish_id"


def test_a_post_the_person_also_linked_themselves_keeps_their_own_claim(
    client, summer, monkeypatch, django_capture_on_commit_callbacks
):
    post = _publish(client, summer, django_capture_on_commit_callbacks, monkeypatch)
    own = ActionClaim.objects.create(
        campaign=summer,
        brand=summer.brand,
        rule=post.rule,
        participant=post.participant,
        identity=post.identity,
        amount=post.rule.reward_amount,
        currency="EUR",
    )

    outcome = posting.tiktok_post_public(post_id=post.pk, video_id="7300000000000000042")

    post.refresh_from_db()
    assert (outcome, post.status, post.failure) == ("already_claimed", "failed", "already_claimed")
    assert Hold.objects.get(pk=post.hold_id).status == "voided"
    assert ActionClaim.objects.filter(rule=post.rule).get() == own


# The worker's side: tokens, memory, and what a lost task or a dead worker leaves behind.


def test_an_expired_access_token_is_refreshed_before_posting(
    client, summer, django_capture_on_commit_callbacks
):
    from django.utils import timezone

    connect(client, summer)
    token = Identity.objects.get().tiktok_token
    token.access_expires_at = timezone.now()
    token.save()
    old = token.access_token

    posted(client, summer, django_capture_on_commit_callbacks)

    token.refresh_from_db()
    assert token.access_token != old
    assert TikTokPost.objects.get().status == "public"


def test_the_upload_reads_one_chunk_at_a_time(monkeypatch, settings):
    """A 4 GB video is never in memory: the adapter reads the chunk it is sending, and no more."""
    import io

    import httpx

    settings.TIKTOK_API_BASE = "https://open.tiktokapis.com"
    size = 23 * 1024 * 1024
    reads = []

    class Watched(io.BytesIO):
        def read(self, n=-1):
            reads.append(n)
            return super().read(n)

    monkeypatch.setattr(
        tiktok,
        "http_client",
        lambda: httpx.Client(transport=httpx.MockTransport(lambda request: httpx.Response(206))),
    )
    source = tiktok.direct_post_body(
        caption="Ad", privacy_level="PUBLIC_TO_EVERYONE", video_size=size, creator={}
    )

    tiktok.video_upload(
        upload_url="https://open-upload.tiktokapis.com/video/?upload_id=1",
        file=Watched(b"\0" * size),
        video_size=size,
        content_type="video/mp4",
        source_info=source["source_info"],
    )

    assert reads == [10 * 1024 * 1024, 13 * 1024 * 1024]  # the last chunk takes the trailing bytes
    assert -1 not in reads


def test_a_chosen_file_is_streamed_to_disk_not_kept_in_memory(client, summer, settings, monkeypatch):
    """Over Django's in-memory limit the upload handler writes the file to a temporary file as it
    arrives; the service stores that file and never reads it whole."""
    from django.core.files.uploadedfile import TemporaryUploadedFile

    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 1024
    seen = []
    start = posting.tiktok_post_start

    def spy(**kwargs):
        seen.append(type(kwargs["upload"]))
        return start(**kwargs)

    monkeypatch.setattr(posting, "tiktok_post_start", spy)
    connect(client, summer)

    post_video(client, summer, mp4(size=64 * 1024))

    assert seen == [TemporaryUploadedFile]
    assert TikTokPost.objects.get().video_size == 64 * 1024


def test_the_safety_net_takes_up_posts_a_lost_task_left_waiting(
    client, summer, uploads, django_capture_on_commit_callbacks
):
    from datetime import timedelta

    from django.utils import timezone

    connect(client, summer)
    post_video(client, summer, mp4())  # committed, but its task was lost (the hooks never ran)
    TikTokPost.objects.update(updated_at=timezone.now() - timedelta(minutes=20))

    with django_capture_on_commit_callbacks(execute=True):
        touched = posting.tiktok_posts_stalled()
    with django_capture_on_commit_callbacks(execute=True):
        provider_events_process()

    assert touched == 1
    assert TikTokPost.objects.get().status == "public"
    assert not stored_files(uploads)


def test_the_safety_net_retries_an_upload_whose_worker_died(client, summer, uploads):
    from datetime import timedelta

    from django.utils import timezone

    connect(client, summer)
    post_video(client, summer, mp4())
    TikTokPost.objects.update(status="uploading", updated_at=timezone.now() - timedelta(hours=3))

    posting.tiktok_posts_stalled()

    post = TikTokPost.objects.get()
    assert (post.status, post.attempts) == ("stored", 1)
    assert len(stored_files(uploads)) == 1  # kept for the next try


def test_a_second_account_allowing_posting_holds_the_post_until_the_brand_has_checked(
    client, summer, django_capture_on_commit_callbacks
):
    """One person, one reward per action: a second TikTok account puts the person's earlier claims
    under review, and nothing is posted while the brand checks."""
    connect(client, summer, publish=False, display_name="Pat Creator")
    connect(client, summer, display_name="Pat Second")  # allowed posting with another account

    response = posted(client, summer, django_capture_on_commit_callbacks)

    assert not TikTokPost.objects.exists() and not SandboxTikTokPublish.objects.exists()
    assert "being checked by the brand" in response.content.decode()
    login = ActionClaim.objects.get(rule__trigger="tiktok_login")
    assert login.status == ClaimStatus.NEEDS_REVIEW and login.identity.display_name == "Pat Creator"


def test_a_post_on_its_way_counts_against_the_rules_cap(client, summer, uploads):
    from campaigns.models import ActionRule

    ActionRule.objects.filter(campaign=summer, trigger="ugc_share").update(total_cap=1)
    connect(client, summer)
    post_video(client, summer, mp4())  # Pat's video is on its way (its task not run yet)
    quinn = type(client)(REMOTE_ADDR="198.51.100.23")  # another household: not a new browser at Pat's
    connect(quinn, summer, display_name="Quinn Other")

    response = post_video(quinn, summer, mp4())

    assert "All rewards for this action have been claimed." in response.content.decode()
    assert TikTokPost.objects.count() == 1 and len(stored_files(uploads)) == 1


# The budget held for a post covers the platform's fee on its reward too, released with it.


def _fee_plan(brand, make_user, per_action=10, payout_bps=500):
    fee_plans_forget()  # as a confirmed plan change does
    FeePlan.objects.create(
        brand=brand,
        currency="EUR",
        per_action=per_action,
        payout_bps=payout_bps,
        changed_by=make_user("sam@joyback.example", is_staff=True),
        approved_by=make_user("tara@joyback.example", is_staff=True),
        changed_at=timezone.now(),
    )


def test_a_posts_hold_reserves_its_fee_and_its_claim_pays_the_reward_and_the_fee_from_it(
    client, summer, make_user, django_capture_on_commit_callbacks
):
    _fee_plan(summer.brand, make_user)
    connect(client, summer)
    budget = campaign_budget_account(campaign=summer)

    posted(client, summer, django_capture_on_commit_callbacks)

    post = TikTokPost.objects.get()
    hold = Hold.objects.get(pk=post.hold_id)
    reward = post.reward_amount
    assert reward > 0 and hold.amount == reward + 10 + reward * 500 // 10_000
    budget.refresh_from_db()
    assert budget.held == hold.amount
    claim = ActionClaim.objects.get(rule__trigger="ugc_share")
    assert (claim.amount, claim.hold_id) == (reward, hold.pk)  # the claim is worth the reward alone

    with transaction.atomic():
        claim_reward_post(claim)

    charge = FeeCharge.objects.get(claim_id=claim.pk)
    assert (charge.reward_amount, charge.fee) == (reward, 10 + reward * 500 // 10_000)
    budget.refresh_from_db()
    assert budget.held == 0 and Hold.objects.get(pk=hold.pk).status == "committed"


def test_a_post_that_fails_releases_the_reward_and_its_fee_together(
    client, summer, make_user, monkeypatch, django_capture_on_commit_callbacks
):
    _fee_plan(summer.brand, make_user)
    post = _publish(client, summer, django_capture_on_commit_callbacks, monkeypatch)
    budget = campaign_budget_account(campaign=summer)
    budget.refresh_from_db()
    assert budget.held == Hold.objects.get(pk=post.hold_id).amount > post.reward_amount

    posting._post_fail(post, "cancelled_by_person")

    budget.refresh_from_db()
    assert budget.held == 0 and Hold.objects.get(pk=post.hold_id).status == "voided"
