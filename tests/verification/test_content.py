"""What brands get beyond reach: the licence a person grants with a share (recorded, revocable),
Spark Ads codes (checked with TikTok, expired on time), the content library (filters, CSV, oEmbed,
other brands refused), and the share step only buyers can open."""

import csv
import io
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from campaigns.licence import licence_terms_publish
from campaigns.models import Campaign
from campaigns.services.funding import campaign_budget_account
from tests.verification.test_engagement import DISCLOSED, counts, share, shared_claim, steps_html
from tests.verification.test_tiktok_login import authorize
from verification.connectors import shop_connect
from verification.content import spark_codes_expire
from verification.models import ActionClaim, LicenceGrant, SandboxTikTokUser, SparkAdsCode
from verification.reach import reach_recheck
from verification.sandbox.shops import SandboxShop
from verification.sandbox.tiktok.business import ad_code_generate
from verification.sandbox.tiktok.display_api import video_post, video_share_url
from verification.services.provider_events import provider_events_process

pytestmark = pytest.mark.django_db


@pytest.fixture
def licensed(summer, alice):
    licence_terms_publish(
        campaign=summer,
        organic_reuse=True,
        paid_ads=True,
        duration_days=90,
        territories=["DE", "AT"],
        created_by=alice,
    )
    return summer


@pytest.fixture
def pat_video(client, licensed):
    client.get(authorize(client, licensed.slug, display_name="Pat Creator"))
    return video_post(
        user=SandboxTikTokUser.objects.get(display_name="Pat Creator"), caption=DISCLOSED, view_count=10
    )


def share_with(client, campaign, video, **fields):
    form = {"video_url": video_share_url(video)} | fields
    return client.post(reverse("verification:share_submit", args=[campaign.slug]), form, follow=True)


def status_page(client, claim):
    token = claim.participant.token
    return client.get(reverse("verification:status_actions", args=[token])).content.decode()


# The licence.


def test_the_licence_is_shown_before_the_share_in_the_persons_language(client, licensed, pat_video):
    url = reverse("verification:steps", args=[licensed.slug])

    german = client.get(url, headers={"HX-Request": "true", "Accept-Language": "de"}).content.decode()
    spanish = client.get(url, headers={"HX-Request": "true", "Accept-Language": "es"}).content.decode()
    english = client.get(url, headers={"HX-Request": "true", "Accept-Language": "en"}).content.decode()

    assert "Was du Alpaca Coffee mit deinem Video erlaubst:" in german
    assert "Für 90 Tage ab deinem Teilen." in german and "Ich erteile diese Lizenz für mein Video" in german
    assert "Lo que permites a Alpaca Coffee hacer con tu vídeo:" in spanish
    assert "may use it in paid ads" in english and "For 90 days from your share." in english
    assert "AT, DE" in english and 'name="licence_accepted"' in english


def test_the_persons_language_is_recorded_with_the_licence(client, licensed, pat_video):
    client.post(
        reverse("verification:share_submit", args=[licensed.slug]),
        {"video_url": video_share_url(pat_video), "licence_accepted": "on"},
        headers={"Accept-Language": "de"},
    )

    assert LicenceGrant.objects.get().language == "de"


def test_a_share_without_agreeing_to_the_licence_is_refused_and_nothing_is_held(client, licensed, pat_video):
    held = campaign_budget_account(campaign=licensed).held

    share_with(client, licensed, pat_video)

    assert "agree to it to share your video" in steps_html(client, licensed)
    assert not ActionClaim.objects.filter(rule__trigger="ugc_share").exists()
    assert campaign_budget_account(campaign=licensed).held == held


def test_the_licence_granted_is_recorded_with_the_claim_version_time_and_who(client, licensed, pat_video):
    share_with(client, licensed, pat_video, licence_accepted="on")

    claim = ActionClaim.objects.get(rule__trigger="ugc_share")
    grant = claim.licence
    assert (grant.terms.version, grant.identity, grant.participant, grant.revoked_at) == (
        1,
        claim.identity,
        claim.participant,
        None,
    )
    assert grant.granted_at <= timezone.now() and grant.language == "en"
    assert grant.state() == "active"


def test_a_new_licence_version_leaves_earlier_grants_on_the_version_they_saw(
    client, alice, licensed, pat_video
):
    share_with(client, licensed, pat_video, licence_accepted="on")

    terms = licence_terms_publish(
        campaign=licensed,
        organic_reuse=True,
        paid_ads=False,
        duration_days=30,
        territories=[],
        created_by=alice,
    )

    assert terms.version == 2
    assert LicenceGrant.objects.get().terms.version == 1


def test_the_person_takes_the_licence_back_for_the_future_from_their_status_page(client, licensed, pat_video):
    share_with(client, licensed, pat_video, licence_accepted="on")
    claim = ActionClaim.objects.get(rule__trigger="ugc_share")
    assert "Take the licence back" in status_page(client, claim)
    grant = claim.licence

    url = reverse("verification:licence_revoke", args=[claim.participant.token, grant.pk])
    response = client.post(url, {"back": f"/c/{licensed.slug}/status/{claim.participant.token}/"})

    assert response.status_code == 302
    grant.refresh_from_db()
    assert grant.revoked_at is not None and grant.state() == "revoked"
    assert "Taken back on" in status_page(client, claim)
    again = client.post(url, follow=True)
    assert again.status_code == 200
    assert LicenceGrant.objects.get().revoked_at == grant.revoked_at  # the first revocation stands


def test_nobody_else_can_take_a_persons_licence_back(client, licensed, pat_video):
    share_with(client, licensed, pat_video, licence_accepted="on")
    grant = LicenceGrant.objects.get()
    from verification.services.participants import participant_create

    stranger = participant_create(brand=licensed.brand)

    response = client.post(reverse("verification:licence_revoke", args=[stranger.token, grant.pk]))

    assert response.status_code == 404
    assert LicenceGrant.objects.get().revoked_at is None


def test_a_licence_that_allows_nothing_is_refused_with_a_clear_message(client, alice, summer):
    client.force_login(alice)
    response = client.post(
        reverse("campaign_licence_save", args=[summer.brand.slug, summer.pk]), {"duration_days": "30"}
    )

    assert response.status_code == 400
    assert "organic reuse, paid ads, or both" in response.content.decode()
    assert not summer.licence_versions.exists()


# Spark Ads codes.


def test_a_spark_ads_code_is_checked_with_tiktok_and_kept_with_its_validity(client, licensed, pat_video):
    code = ad_code_generate(video=pat_video, days=30)

    share_with(client, licensed, pat_video, licence_accepted="on", spark_code=code.code, spark_days="30")

    spark = SparkAdsCode.objects.get()
    assert spark.code == code.code and spark.valid_days == 30
    assert timedelta(days=29, hours=23) < spark.expires_at - timezone.now() <= timedelta(days=30)
    assert spark.evidence["item_id"] == pat_video.video_id


def test_a_code_for_another_video_is_refused_and_nothing_is_claimed(client, licensed, pat_video):
    other = video_post(user=pat_video.user, caption=DISCLOSED)
    code = ad_code_generate(video=other, days=30)

    share_with(client, licensed, pat_video, licence_accepted="on", spark_code=code.code, spark_days="30")

    assert "This Spark Ads code does not work for this video" in steps_html(client, licensed)
    assert not ActionClaim.objects.filter(rule__trigger="ugc_share").exists()


def test_codes_expire_on_time_and_the_brand_stops_seeing_them(client, alice, licensed, pat_video):
    code = ad_code_generate(video=pat_video, days=7)
    share_with(client, licensed, pat_video, licence_accepted="on", spark_code=code.code, spark_days="7")
    client.force_login(alice)
    library = reverse("verification:content_library", args=[licensed.brand.slug])
    assert code.code in client.get(library).content.decode()

    assert spark_codes_expire(now=timezone.now() + timedelta(days=6)) == 0
    assert spark_codes_expire(now=timezone.now() + timedelta(days=7, minutes=1)) == 1
    assert spark_codes_expire(now=timezone.now() + timedelta(days=8)) == 0  # once

    page = client.get(library).content.decode()
    assert code.code not in page and "Expired" in page
    assert code.code not in client.get(library.replace("content/", "content/export.csv")).content.decode()


# The content library.


def test_the_library_lists_every_shared_video_with_disclosure_licence_metrics_and_code(
    client, alice, licensed, pat_video
):
    licensed.rules.filter(trigger="ugc_share").update(reach_tiers=[[1000, 1_00]], reward_amount=5_00)
    code = ad_code_generate(video=pat_video, days=30)
    share_with(client, licensed, pat_video, licence_accepted="on", spark_code=code.code, spark_days="30")
    claim = ActionClaim.objects.get(rule__trigger="ugc_share")
    counts(pat_video, view_count=1_200)
    reach_recheck(claim_id=claim.pk)
    counts(pat_video, view_count=2_500)
    reach_recheck(claim_id=claim.pk)
    client.force_login(alice)

    page = client.get(reverse("verification:content_library", args=[licensed.brand.slug])).content.decode()
    item = client.get(
        reverse("verification:content_library_item", args=[licensed.brand.slug, claim.pk])
    ).content.decode()
    exported = client.get(reverse("verification:content_library_csv", args=[licensed.brand.slug]))

    assert "Disclosure correct" in page and "Granted, v1" in page and "2,500" in page and code.code in page
    assert "1200" in item and "2500" in item  # metrics over time
    assert DISCLOSED[:40] in item  # the oEmbed card's title, as TikTok's oEmbed gave it
    rows = list(csv.DictReader(io.StringIO(exported.content.decode())))
    assert exported["Content-Type"].startswith("text/csv")
    assert [
        (r["claim"], r["licence_version"], r["views"], r["spark_code"], r["metrics_read"]) for r in rows
    ] == [(str(claim.pk), "1", "2500", code.code, "2")]


def test_the_library_filters_by_licence_and_code(client, alice, licensed, pat_video):
    share_with(client, licensed, pat_video, licence_accepted="on")
    claim = ActionClaim.objects.get(rule__trigger="ugc_share")
    LicenceGrant.objects.filter(claim=claim).update(revoked_at=timezone.now())
    client.force_login(alice)
    url = reverse("verification:content_library", args=[licensed.brand.slug])

    revoked = client.get(url, {"licence": "revoked"}).content.decode()
    active = client.get(url, {"licence": "active"}).content.decode()
    with_code = client.get(url, {"code": "valid"}, headers={"HX-Request": "true"}).content.decode()

    assert f"#{claim.pk}" in revoked and "Taken back" in revoked
    assert f"#{claim.pk} " not in active
    assert "No videos yet." in with_code and "<html" not in with_code  # htmx gets the rows only


@pytest.mark.parametrize("page", ["content_library", "content_library_csv", "content_library_item"])
def test_another_brand_is_refused_the_content_library(client, bob, bison, licensed, pat_video, page):
    share_with(client, licensed, pat_video, licence_accepted="on")
    claim = ActionClaim.objects.get(rule__trigger="ugc_share")
    client.force_login(bob)

    args = [licensed.brand.slug] + ([claim.pk] if page == "content_library_item" else [])
    assert client.get(reverse(f"verification:{page}", args=args)).status_code == 404
    # Bob's own library does not show Alpaca's video either.
    if page == "content_library_item":
        assert client.get(reverse(f"verification:{page}", args=[bison.slug, claim.pk])).status_code == 404
    else:
        own = client.get(reverse(f"verification:{page}", args=[bison.slug])).content.decode()
        assert f"#{claim.pk} ·" not in own and pat_video.video_id not in own and "Pat Creator" not in own


def test_the_sandbox_answers_oembed_as_tiktok_does(client, pat_video):
    url = reverse("verification:sandbox_tiktok_oembed")

    found = client.get(url, {"url": video_share_url(pat_video)}).json()
    missing = client.get(url, {"url": "https://www.tiktok.com/@x/video/7300000000000000001"})

    assert (found["type"], found["version"], found["provider_name"], found["embed_product_id"]) == (
        "video",
        "1.0",
        "TikTok",
        pat_video.video_id,
    )
    assert (
        'class="tiktok-embed"' in found["html"] and f'data-video-id="{pat_video.video_id}"' in found["html"]
    )
    assert missing.status_code == 400


# Shares only buyers can earn.


@pytest.fixture
def buyers_only(make_live_campaign, alpaca):
    """Alpaca's shop (instant cashback campaign) and a share campaign only its buyers can earn."""
    shop_campaign = make_live_campaign(slug="beans-shop", package="cashback", budget=100_00)
    shop_campaign.rules.update(return_window_days=0)
    shop = shop_connect(
        brand=alpaca,
        kind="shopify",
        domain="alpaca.myshopify.com",
        webhook_secret="shpss_1",
        campaign=shop_campaign,
    )
    campaign = make_live_campaign(slug="buyers-glow", budget=100_00)
    Campaign.objects.filter(pk=campaign.pk).update(share_requires_purchase=True)
    campaign.rules.filter(trigger="ugc_share").update(product_rewards={"BEANS-1KG": 9_00})
    campaign.refresh_from_db()
    return campaign, shop


def bought(client, shop, *, order_id=1001, skus=("BEANS-1KG",)):
    SandboxShop(shop, client=client).order_paid(
        order_id=order_id, amount=20_00, currency="EUR", email="pat@example.com", skus=skus
    )
    provider_events_process()
    client.get(
        SandboxShop(shop).claim_link(order_id=order_id)
    )  # the order mail's link: this browser is the buyer


def test_a_non_buyer_is_refused_the_share_step_with_a_clear_message(client, buyers_only):
    campaign, _shop = buyers_only
    client.get(authorize(client, campaign.slug, display_name="Pat Creator"))
    video = video_post(user=SandboxTikTokUser.objects.get(display_name="Pat Creator"), caption=DISCLOSED)

    assert "Only buyers can earn this reward" in steps_html(client, campaign)
    share(client, campaign, video_share_url(video))

    assert "Only buyers can earn this reward" in steps_html(client, campaign)
    assert not ActionClaim.objects.filter(rule__trigger="ugc_share").exists()
    assert campaign_budget_account(campaign=campaign).held == 0


def test_a_buyer_shares_and_the_reward_follows_the_product_bought(client, buyers_only):
    campaign, shop = buyers_only
    bought(client, shop)
    client.get(authorize(client, campaign.slug, display_name="Pat Creator"))
    video = video_post(user=SandboxTikTokUser.objects.get(display_name="Pat Creator"), caption=DISCLOSED)

    claim = shared_claim(client, campaign, video)

    buyer = ActionClaim.objects.get(purchase__isnull=False)
    assert claim.participant == buyer.participant  # the purchase and the share: one verified person
    assert claim.amount == 9_00 and claim.evidence["purchases"] == [buyer.purchase.order_id]


def test_a_buyer_of_another_product_earns_the_rules_reward(client, buyers_only):
    campaign, shop = buyers_only
    bought(client, shop, skus=("MUG",))
    client.get(authorize(client, campaign.slug, display_name="Pat Creator"))
    video = video_post(user=SandboxTikTokUser.objects.get(display_name="Pat Creator"), caption=DISCLOSED)

    assert shared_claim(client, campaign, video).amount == 5_00


def test_a_purchase_in_its_return_window_does_not_open_the_step_yet(client, buyers_only):
    campaign, shop = buyers_only
    shop.campaign.rules.update(return_window_days=14)
    bought(client, shop)
    client.get(authorize(client, campaign.slug, display_name="Pat Creator"))

    assert "still in its return window" in steps_html(client, campaign)


def test_posting_through_joyback_is_closed_to_a_non_buyer_too(client, buyers_only, settings, tmp_path):
    from tests.verification.test_tiktok_posting import connect, mp4, post_video
    from verification.models import TikTokPost

    settings.STORAGES = {
        **settings.STORAGES,
        "video_uploads": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "uploads")},
        },
    }
    campaign, _shop = buyers_only
    connect(client, campaign)

    response = post_video(client, campaign, mp4())

    assert "Only buyers can earn this reward" in response.content.decode()
    assert not TikTokPost.objects.exists()
    assert campaign_budget_account(campaign=campaign).held == 0


def test_a_video_posted_through_joyback_records_the_licence_once_public(
    client, licensed, settings, tmp_path, django_capture_on_commit_callbacks
):
    from tests.verification.test_tiktok_posting import connect, mp4

    settings.STORAGES = {
        **settings.STORAGES,
        "video_uploads": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "uploads")},
        },
    }
    connect(client, licensed)
    url = reverse("verification:tiktok_post", args=[licensed.slug])
    refused = client.post(url, {"trigger": "ugc_share", "caption": "Hi", "video": mp4()}, follow=True)
    assert "agree to it to share your video" in refused.content.decode()

    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            url,
            {
                "trigger": "ugc_share",
                "caption": "Hi",
                "video": mp4(),
                "licence_accepted": "on",
                "privacy_level": "PUBLIC_TO_EVERYONE",
            },
        )
    with django_capture_on_commit_callbacks(execute=True):
        provider_events_process()

    claim = ActionClaim.objects.get(rule__trigger="ugc_share")
    assert (claim.licence.terms.version, claim.licence.identity) == (1, claim.identity)


def test_a_standing_schedule_expires_codes_every_few_minutes(client, licensed, pat_video):
    from django_q.models import Schedule

    from verification import tasks

    schedule = Schedule.objects.get(name="verification-spark-codes-expire")
    code = ad_code_generate(video=pat_video, days=7)
    share_with(client, licensed, pat_video, licence_accepted="on", spark_code=code.code, spark_days="7")
    SparkAdsCode.objects.update(expires_at=timezone.now() - timedelta(seconds=1))

    assert (schedule.func, schedule.minutes) == ("verification.tasks.spark_codes_expire", 5)
    assert tasks.spark_codes_expire() == 1
    assert SparkAdsCode.objects.get().expired_at is not None


def test_taking_the_licence_back_voids_the_spark_ads_code(client, alice, licensed, pat_video):
    code = ad_code_generate(video=pat_video, days=30)
    share_with(client, licensed, pat_video, licence_accepted="on", spark_code=code.code, spark_days="30")
    claim = ActionClaim.objects.get(rule__trigger="ugc_share")
    client.post(reverse("verification:licence_revoke", args=[claim.participant.token, claim.licence.pk]))

    assert SparkAdsCode.objects.get().expired_at is not None
    client.force_login(alice)
    library = reverse("verification:content_library", args=[licensed.brand.slug])
    page = client.get(library).content.decode()
    assert code.code not in page and "Expired" in page
    assert "No videos yet." in client.get(library, {"code": "valid"}).content.decode()
    assert code.code not in client.get(library.replace("content/", "content/export.csv")).content.decode()


def test_a_code_whose_licence_was_taken_back_earlier_is_voided_by_the_sweep(client, licensed, pat_video):
    code = ad_code_generate(video=pat_video, days=30)
    share_with(client, licensed, pat_video, licence_accepted="on", spark_code=code.code, spark_days="30")
    LicenceGrant.objects.update(revoked_at=timezone.now())  # taken back before codes were voided with it

    assert spark_codes_expire() == 1
    assert SparkAdsCode.objects.get().expired_at is not None
