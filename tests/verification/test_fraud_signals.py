"""Each fraud signal sends a claim to review with its reward held, instead of paying it at once."""

import pytest
from django.test import Client, override_settings

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
def test_several_people_on_one_browser_go_to_review_from_any_address(club):
    first = whatsapp_claim(club, "491", ClaimContext(client_ip="198.51.100.7", device="abc123"))
    second = whatsapp_claim(club, "492", ClaimContext(client_ip="198.51.100.7", device="abc123"))
    elsewhere = whatsapp_claim(club, "493", ClaimContext(client_ip="198.51.100.8", device="abc123"))
    other_browser = whatsapp_claim(club, "494", ClaimContext(client_ip="198.51.100.9", device="def456"))

    assert (first.status, second.status) == ("approved", "needs_review")
    assert second.signals.get().code == "device_shared"
    assert elsewhere.status == "needs_review"  # the same browser on another network
    assert other_browser.status == "approved"


def browser(agent, language):
    """A browser of its own (its own cookies), on the same network as the others."""
    return Client(headers={"User-Agent": agent, "Accept-Language": language}, REMOTE_ADDR="203.0.113.50")


def test_fresh_browsers_at_one_address_go_to_review_whatever_headers_they_send(summer):
    """Four browsers, one address, four sets of headers: before, four people paid at once."""
    from tests.verification.test_tiktok_login import authorize

    browsers = [
        browser("Mozilla/5.0 (Windows NT 10.0) Chrome/120", "de-DE"),
        browser("Mozilla/5.0 (Macintosh) Safari/17", "en-US"),
        browser("Mozilla/5.0 (X11; Linux) Firefox/121", "es-ES"),
        browser("Mozilla/5.0 (iPhone) Mobile Safari", "fr-FR"),
    ]
    for number, each in enumerate(browsers):
        each.get(authorize(each, summer.slug, display_name=f"Creator {number}"))

    claims = list(ActionClaim.objects.filter(rule__trigger="tiktok_login").order_by("pk"))
    assert [claim.status for claim in claims] == ["approved", "needs_review", "needs_review", "needs_review"]
    codes = {signal.code for claim in claims[1:] for signal in claim.signals.all()}
    assert codes == {"device_new_at_address"}
    assert len({claim.device for claim in claims}) == 4  # each browser its own cookie


def test_a_browser_known_for_a_while_at_a_shared_address_is_paid(summer, settings):
    from tests.verification.test_tiktok_login import authorize

    flatmate, pat = browser("Firefox", "de-DE"), browser("Firefox", "de-DE")
    flatmate.get(authorize(flatmate, summer.slug, display_name="Flatmate"))
    pat.get(f"/c/{summer.slug}/")  # Pat's browser was given its cookie on an earlier visit
    settings.FRAUD_NEW_DEVICE_MINUTES = 0  # ...long enough ago

    pat.get(authorize(pat, summer.slug, display_name="Pat"))

    assert [claim.status for claim in ActionClaim.objects.order_by("pk")] == ["approved", "approved"]


def test_the_device_cookie_is_signed_long_lived_and_out_of_scripts_reach(client, summer):
    from verification.device import COOKIE, MAX_AGE

    response = client.post(f"/c/{summer.slug}/tiktok/")
    cookie = response.cookies[COOKIE]

    assert cookie["httponly"] and cookie["samesite"] == "Lax" and cookie["max-age"] == MAX_AGE
    assert client.get(f"/c/{summer.slug}/").cookies.get(COOKIE) is None  # kept, not handed out again


def test_a_forged_device_cookie_counts_as_no_cookie(summer):
    from tests.verification.test_tiktok_login import authorize
    from verification.device import COOKIE

    first, forger = browser("Firefox", "de-DE"), browser("Firefox", "de-DE")
    first.get(authorize(first, summer.slug, display_name="First"))
    forger.cookies[COOKIE] = "some-id.1000000000:forged"

    forger.get(authorize(forger, summer.slug, display_name="Forger"))

    assert ActionClaim.objects.order_by("pk").last().status == "needs_review"


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

    def codes(**counts):
        return [code for code, _ in engagement_signals(brand_id=None, **counts)]

    assert codes(views=1000, likes=100, comments=10, followers=300) == []
    assert codes(views=1000, likes=400, comments=100, followers=300) == []  # at the threshold: fine
    assert codes(views=1000, likes=401, comments=10, followers=300) == ["engagement_ratio"]
    assert codes(views=1000, likes=10, comments=400, followers=300) == ["engagement_ratio_comments"]
    assert codes(views=500_000, likes=10_000, comments=100, followers=20) == ["engagement_spike"]
