"""Likes and comments reported by the brand (TikTok's Business API names the commenter's open_id on
the brand's own videos): paid only to a person who already logged in with TikTok on the campaign,
once per person and rule, under the rule's total cap."""

import pytest

from campaigns.models import Trigger
from campaigns.services.campaigns import campaign_create
from campaigns.services.rules import rule_save
from tests.api.conftest import reported
from verification.models import ActionClaim, Provider
from verification.providers.tiktok import TikTokUser
from verification.services.participants import participant_create
from verification.services.provider_events import tiktok_login_complete

pytestmark = pytest.mark.django_db


@pytest.fixture
def glow(make_live_campaign):
    """Alpaca's live TikTok campaign (login first) paying 0.50 EUR a comment or like, twice at most."""
    campaign = make_live_campaign()
    rule_save(campaign=campaign, trigger=Trigger.COMMENT, reward_amount=50, total_cap=2)
    rule_save(campaign=campaign, trigger=Trigger.LIKE, reward_amount=20, total_cap=2)
    return campaign


def login(campaign, open_id, name="Kim"):
    """The person connects TikTok on the campaign's landing page: a verified identity and the
    login reward, the prerequisite of likes and comments."""
    user = TikTokUser(
        open_id=open_id,
        display_name=name,
        tokens={"access_token": "at", "refresh_token": "rt", "expires_in": 3600},
        follower_count=12,
        video_count=3,
    )
    identity, _refusal = tiktok_login_complete(
        campaign=campaign, participant=participant_create(brand=campaign.brand), user=user
    )
    return identity


def comment(open_id="oid-kim", comment_id="c-1", **extra):
    return {"type": "comment", "open_id": open_id, "video_id": "v-7", "comment_id": comment_id, **extra}


def refusal(response) -> dict:
    event = response.json()
    assert event["status"] == "refused" and event["claim"] is None, event
    return event["error"]


def test_a_comment_of_a_logged_in_person_is_rewarded(alpaca_api, glow):
    identity = login(glow, "oid-kim")

    response = alpaca_api.report(comment())

    assert response.json()["new_claim"] is True
    claim = reported(response)
    assert (claim["trigger"], claim["status"], claim["amount"]) == ("comment", "approved", 50)
    stored = ActionClaim.objects.get(pk=claim["id"])
    assert stored.identity == identity and stored.campaign == glow
    assert stored.evidence == {"reported_by": "api", "reference": {"video_id": "v-7", "comment_id": "c-1"}}


def test_a_like_is_rewarded_with_its_reference(alpaca_api, glow):
    login(glow, "oid-kim")
    body = {"type": "like", "open_id": "oid-kim", "video_id": "v-7", "like_id": "l-9", "campaign_id": glow.pk}
    claim = reported(alpaca_api.report(body))
    assert (claim["trigger"], claim["amount"]) == ("like", 20)
    assert ActionClaim.objects.get(pk=claim["id"]).evidence["reference"] == {
        "video_id": "v-7",
        "like_id": "l-9",
    }


def test_without_a_login_the_comment_is_refused(alpaca_api, glow, receiver):
    from joyback.api.webhooks.endpoints import webhook_endpoint_create

    webhook_endpoint_create(
        brand_id=glow.brand_id, url="https://shop.example/hooks", event_types=["event.refused"]
    )
    response = alpaca_api.report(comment(open_id="oid-stranger"))

    error = refusal(response)
    assert (error["code"], error["field"]) == ("login_first", "open_id") and error["message"]
    assert [body["data"]["error"]["code"] for body in receiver.bodies()] == ["login_first"]
    assert not ActionClaim.objects.filter(rule__trigger=Trigger.COMMENT).exists()


def test_a_login_on_another_campaign_of_the_brand_is_not_this_campaigns_login(
    alpaca_api, glow, make_live_campaign
):
    other = make_live_campaign(slug="winter-glow")
    login(other, "oid-kim")  # a verified identity of the brand, but not logged in on glow
    assert refusal(alpaca_api.report(comment(campaign_id=glow.pk)))["code"] == "login_first"


def test_the_same_person_is_paid_once_per_rule(alpaca_api, glow):
    login(glow, "oid-kim")
    first = alpaca_api.report(comment(comment_id="c-1"))
    second = alpaca_api.report(comment(comment_id="c-2"))

    assert (first.json()["new_claim"], second.json()["new_claim"]) == (True, False)
    assert reported(first)["id"] == reported(second)["id"]
    assert ActionClaim.objects.filter(rule__trigger=Trigger.COMMENT).count() == 1


def test_the_total_cap_is_kept(alpaca_api, glow):
    for n in range(3):
        login(glow, f"oid-{n}", name=f"P{n}")
    assert reported(alpaca_api.report(comment(open_id="oid-0")))["status"] == "approved"
    assert reported(alpaca_api.report(comment(open_id="oid-1")))["status"] == "approved"

    error = refusal(alpaca_api.report(comment(open_id="oid-2")))

    assert error["code"] == "rule_cap"
    assert ActionClaim.objects.filter(rule__trigger=Trigger.COMMENT).count() == 2


def test_another_brands_open_id_is_refused(alpaca_api, glow, bison):
    campaign = campaign_create(
        brand=bison, name="Bison ride", package="tiktok_only", currency="EUR", countries=["DE"], languages=[]
    )
    identity = login(campaign, "oid-bo")
    assert identity.brand == bison and identity.provider == Provider.TIKTOK

    assert refusal(alpaca_api.report(comment(open_id="oid-bo")))["code"] == "login_first"
    assert not ActionClaim.objects.filter(rule__trigger=Trigger.COMMENT).exists()


def test_without_a_like_or_comment_rule_the_event_is_refused(alpaca_api, make_live_campaign):
    login(make_live_campaign(), "oid-kim")
    assert refusal(alpaca_api.report(comment()))["code"] == "no_campaign"


@pytest.mark.parametrize(
    ("body", "code", "field"),
    [
        ({"type": "comment", "open_id": "oid-kim", "video_id": "v-7"}, "required", "comment_id"),
        (comment(open_id=""), "blank", "open_id"),
        ({"type": "like", "open_id": "oid-kim"}, "required", "video_id"),
        (comment(campaign_id="x"), "invalid", "campaign_id"),
    ],
)
def test_a_bad_body_is_400_with_its_field(alpaca_api, glow, body, code, field):
    response = alpaca_api.post("events", body)
    assert response.status_code == 400, response.content
    assert (response.json()["error"]["code"], response.json()["error"]["field"]) == (code, field)
