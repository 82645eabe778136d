"""The disclosure on the landing page, the compliance queue and the campaign's report."""

import csv
import io

import pytest
from django.urls import reverse
from django.utils import translation

from campaigns.models import Campaign
from compliance.models import RemediationCase
from tests.verification.test_engagement import share
from tests.verification.test_tiktok_login import authorize
from verification.models import ActionClaim, SandboxTikTokUser
from verification.sandbox.tiktok.display_api import video_post, video_share_url

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("language", "wording"),
    [
        ("en", "Ad · Paid partnership with Alpaca Coffee"),
        ("de", "Werbung · Bezahlte Partnerschaft mit Alpaca Coffee"),
        ("es", "Publicidad · Colaboración pagada con Alpaca Coffee"),
        ("zh-hans", "广告 · 与Alpaca Coffee的付费合作"),
    ],
)
def test_the_landing_page_gives_the_wording_in_the_visitors_language(
    client, make_live_campaign, language, wording
):
    campaign = make_live_campaign(slug="everywhere")
    Campaign.objects.filter(pk=campaign.pk).update(languages=["en", "de", "es", "zh-hans"])
    with translation.override(language):
        url = reverse("campaign_landing", args=["everywhere"])
    body = client.get(url, HTTP_ACCEPT_LANGUAGE=language).content.decode()

    assert wording in body
    assert 'data-copy="disclosure"' in body  # the Copy button (static/js/actions.js copies it)


def test_a_visitor_language_the_jurisdiction_does_not_accept_gets_one_it_does(client, summer):
    # summer runs in Germany for English speakers: Spanish wording would fail there.
    with translation.override("es"):
        url = reverse("campaign_landing", args=[summer.slug])
    body = client.get(url, HTTP_ACCEPT_LANGUAGE="es").content.decode()

    assert "Ad · Paid partnership with Alpaca Coffee" in body and "Publicidad ·" not in body


@pytest.fixture
def failed_share(client, summer):
    client.get(authorize(client, summer.slug, display_name="Pat Creator"))
    pat = SandboxTikTokUser.objects.get(display_name="Pat Creator")
    video = video_post(user=pat, caption="=cmd| great coffee #sp", view_count=10)
    share(client, summer, video_share_url(video))
    return ActionClaim.objects.get(rule__trigger="ugc_share")


def test_the_queue_lists_open_cases_for_the_brand_only(client, alice, bob, bison, summer, failed_share):
    client.force_login(alice)
    page = client.get(reverse("compliance:queue", args=["alpaca"])).content.decode()
    assert f"claim #{failed_share.pk}" in page and "ambiguous tag" in page

    client.force_login(bob)
    other = client.get(reverse("compliance:queue", args=["bison"])).content.decode()
    assert f"claim #{failed_share.pk}" not in other
    case = RemediationCase.objects.get(claim_id=failed_share.pk)
    assert client.post(reverse("compliance:case_decide", args=["bison", case.pk])).status_code == 404


def test_the_report_prints_and_downloads(client, vic, summer, failed_share):
    client.force_login(vic)
    page = client.get(reverse("compliance:report", args=["alpaca", summer.pk])).content.decode()
    download = client.get(reverse("compliance:report_csv", args=["alpaca", summer.pk]))

    assert "Compliance report" in page and "The decision record verifies" in page
    assert "Germany and Austria: UWG § 5a and MStV § 22" in page and "without the platform" in page
    rows = list(csv.DictReader(io.StringIO(download.content.decode())))
    assert [row["kind"] for row in rows] == ["launch_lint", "caption_check", "case_opened"]
    assert rows[1]["caption"].startswith("'=cmd")  # never a spreadsheet formula
    assert rows[1]["policy_versions"] == "eu-de@1" and rows[1]["claim"] == str(failed_share.pk)


def test_the_campaign_page_links_the_report(client, alice, summer):
    client.force_login(alice)
    page = client.get(reverse("campaign_detail", args=["alpaca", summer.pk])).content.decode()

    assert reverse("compliance:report", args=["alpaca", summer.pk]) in page
