"""Each fraud signal sends a claim to review with its reward held, instead of paying it at once."""

import pytest
from django.test import override_settings

from campaigns.services.funding import campaign_budget_account
from joyback.ledger.models import Hold
from tests.conftest import rewarded_in_browser
from tests.payouts.conftest import submissions_process
from verification.models import ActionClaim
from verification.services.participants import identity_attach, participant_create
from verification.services.rewards import ClaimContext, action_reward

pytestmark = pytest.mark.django_db


def whatsapp_claim(campaign, number, context=None):
    person = participant_create(brand=campaign.brand)
    identity = identity_attach(participant=person, provider="whatsapp", subject=number)
    rule = campaign.rules.get(trigger="whatsapp_optin")
    return action_reward(rule=rule, identity=identity, context=context or ClaimContext())


@pytest.fixture
def club(make_live_campaign):
    return make_live_campaign(slug="club", package="whatsapp_reward")


@override_settings(FRAUD_CLAIMS_PER_ADDRESS_PER_HOUR=3)
def test_many_claims_from_one_address_go_to_review(club):
    same_address = [whatsapp_claim(club, f"49{i}", ClaimContext(client_ip="203.0.113.9")) for i in range(4)]

    assert [c.status for c in same_address] == ["approved", "approved", "approved", "needs_review"]
    flagged = same_address[-1]
    assert flagged.signals.get().code == "ip_velocity"
    assert Hold.objects.get(pk=flagged.hold_id).status == "reserved"
    assert flagged.ledger_transaction_id is None


@override_settings(FRAUD_PEOPLE_PER_DEVICE=2)
def test_several_people_on_one_browser_go_to_review(club):
    device = ClaimContext(client_ip="198.51.100.7", device="abc123")

    first = whatsapp_claim(club, "491", device)
    second = whatsapp_claim(club, "492", device)
    elsewhere = whatsapp_claim(club, "493", ClaimContext(client_ip="198.51.100.8", device="abc123"))

    assert (first.status, second.status, elsewhere.status) == ("approved", "needs_review", "approved")
    assert second.signals.get().code == "device_shared"


@override_settings(FRAUD_CAMPAIGN_CLAIMS_PER_MINUTE=2)
def test_a_burst_on_one_campaign_goes_to_review(club):
    statuses = [whatsapp_claim(club, f"49{i}").status for i in range(3)]

    assert statuses == ["approved", "approved", "needs_review"]


def test_an_empty_new_account_goes_to_review(client, summer):
    from tests.verification.test_tiktok_login import authorize

    client.get(authorize(client, summer.slug, display_name="Brand New", empty_account=True))

    claim = ActionClaim.objects.get(identity__display_name="Brand New")
    assert (claim.status, claim.signals.get().code) == ("needs_review", "empty_account")
    assert campaign_budget_account(campaign=summer).held == 1_00


def test_the_same_bank_account_behind_two_people_sends_both_to_review(client, summer):
    from django.test import Client

    first, second = Client(), Client()
    pat = rewarded_in_browser(first, summer, subject="oid-pat")
    sam = rewarded_in_browser(second, summer, subject="oid-sam")
    details = {
        "name": "X Y",
        "email": "",
        "phone": "+4915123456789",
        "iban": "DE89370400440532013000",
        "consent": "on",
    }

    first.post(f"/p/c/{summer.slug}/payee/", details)
    submissions_process()
    assert ActionClaim.objects.get(participant=pat).status == "approved"
    second.post(f"/p/c/{summer.slug}/payee/", details | {"email": "sam@example.com"})
    submissions_process()

    codes = {
        claim.participant_id: set(claim.signals.values_list("code", flat=True))
        for claim in ActionClaim.objects.all()
    }
    assert codes == {
        pat.pk: {"payee_iban_shared", "payee_phone_shared"},
        sam.pk: {"payee_iban_shared", "payee_phone_shared"},
    }
    assert set(ActionClaim.objects.values_list("status", flat=True)) == {"needs_review"}


def test_engagement_signals_read_like_a_reviewer_would():
    from verification.fraud import engagement_signals

    assert engagement_signals(views=1000, likes=100, comments=10, followers=300) == []
    assert engagement_signals(views=1000, likes=900, comments=10, followers=300)[0][0] == "engagement_ratio"
    assert (
        engagement_signals(views=1000, likes=10, comments=400, followers=300)[0][0]
        == "engagement_ratio_comments"
    )
    assert (
        engagement_signals(views=500_000, likes=10_000, comments=100, followers=20)[0][0]
        == "engagement_spike"
    )
