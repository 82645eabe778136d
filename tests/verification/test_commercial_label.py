"""The "Paid partnership" label read back from TikTok's Commercial Content API before the reward,
for campaigns whose audience is in the EEA (the API's coverage): a label switched off is a fix
request through the remediation path; elsewhere, or when the API cannot say, the caption check
and the person's word stand as before."""

import httpx
import pytest
from django.test import override_settings

from campaigns.models import Campaign
from compliance.models import RemediationCase
from tests.verification.test_engagement import share
from tests.verification.test_tiktok_login import authorize
from verification.models import ActionClaim, SandboxTikTokUser
from verification.providers import tiktok
from verification.sandbox.tiktok.display_api import video_post, video_share_url

pytestmark = pytest.mark.django_db
CAPTION = "Ad · Paid partnership with Alpaca Coffee. Loving the summer range!"


def shared(client, campaign, *, label: bool, caption: str = CAPTION):
    client.get(authorize(client, campaign.slug, display_name="Pat Creator"))
    pat = SandboxTikTokUser.objects.get(display_name="Pat Creator")
    video = video_post(user=pat, caption=caption, view_count=900, paid_partnership_label=label)
    share(client, campaign, video_share_url(video))
    return ActionClaim.objects.get(rule__trigger="ugc_share"), video


def test_a_label_switched_off_is_a_fix_request_before_any_reward(client, summer):
    claim, _video = shared(client, summer, label=False)

    case = RemediationCase.objects.get(claim_id=claim.pk)
    assert (claim.status, claim.reason, claim.evidence["label_state"]) == (
        "pending",
        "disclosure_fix",
        "platform_off",
    )
    assert case.status == "open" and case.reasons == ["label_off"]


def test_a_label_switched_on_lets_the_share_wait_for_its_window(client, summer):
    claim, _video = shared(client, summer, label=True)

    assert (claim.reason, claim.evidence["label_state"]) == ("awaiting_window", "platform_on")
    assert not RemediationCase.objects.filter(claim_id=claim.pk).exists()


def test_outside_the_eea_the_api_is_not_asked_and_the_persons_word_stands(client, summer, monkeypatch):
    Campaign.objects.filter(pk=summer.pk).update(countries=["US"])
    us = Campaign.objects.get(pk=summer.pk)
    asked = []
    monkeypatch.setattr(tiktok, "commercial_content_query", lambda **kwargs: asked.append(kwargs) or [])

    claim, _video = shared(client, us, label=False)

    assert asked == [] and (claim.reason, claim.evidence["label_state"]) == (
        "awaiting_window",
        "not_attested",
    )


def test_when_the_api_cannot_answer_the_caption_check_stands_alone(client, summer, monkeypatch):
    def unreachable(**kwargs):
        raise httpx.ConnectError("no route")

    monkeypatch.setattr(tiktok, "commercial_content_query", unreachable)

    claim, _video = shared(client, summer, label=False)

    assert (claim.reason, claim.evidence["label_state"]) == ("awaiting_window", "not_attested")


@override_settings(TIKTOK_COMMERCIAL_CONTENT=False)
def test_without_research_access_nothing_is_asked(client, summer):
    claim, _video = shared(client, summer, label=False)

    assert claim.evidence["label_state"] == "not_attested"


def test_the_sandbox_api_speaks_tiktoks_wire_format_and_wants_a_client_token(client, summer):
    _claim, video = shared(client, summer, label=True)
    day = video.create_time.strftime("%Y%m%d")
    body = {
        "filters": {
            "content_published_date_range": {"min": day, "max": day},
            "creator_usernames": ["patcreator"],
        }
    }
    url = "/sandbox/tiktok/v2/research/adlib/commercial_content/query/?fields=id,label,videos"

    refused = client.post(
        url, body, content_type="application/json", headers={"Authorization": "Bearer act.user"}
    )
    listed = tiktok.commercial_content_query(username="patcreator", date_min=day, date_max=day)

    assert refused.status_code == 401 and refused.json()["error"]["code"] == "access_token_invalid"
    assert [(c.label, c.video_ids) for c in listed] == [("Paid partnership", (video.video_id,))]
