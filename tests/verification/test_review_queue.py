"""Alice reviews the claims the signals held back: every decision is recorded and moves the money."""

import pytest
from django.test import override_settings
from django.urls import reverse

from campaigns.services.funding import campaign_budget_account
from joyback.ledger.models import Hold
from joyback.ledger.selectors import ledger_drift
from verification.models import ActionClaim, ReviewDecision
from verification.services.participants import identity_attach, participant_create
from verification.services.rewards import ClaimContext, action_reward

pytestmark = pytest.mark.django_db


@pytest.fixture
def flagged(make_live_campaign):
    """A WhatsApp opt-in held for review by the address-velocity signal."""
    campaign = make_live_campaign(slug="club", package="whatsapp_reward")
    identity = identity_attach(
        participant=participant_create(brand=campaign.brand), provider="whatsapp", subject="1"
    )
    with override_settings(FRAUD_CLAIMS_PER_ADDRESS_PER_HOUR=0):
        claim = action_reward(
            rule=campaign.rules.get(), identity=identity, context=ClaimContext(client_ip="192.0.2.1")
        )
    assert claim.status == "needs_review"
    return claim


def decide(client, claim, decision, reason="looked at the account"):
    return client.post(
        reverse("verification:review_decide", args=["alpaca", claim.pk]),
        {"decision": decision, "reason": reason},
        follow=True,
    )


def test_the_queue_lists_held_claims_with_their_signals(client, alice, flagged):
    client.force_login(alice)

    body = client.get(reverse("verification:review_queue", args=["alpaca"])).content.decode()

    assert f"#{flagged.pk}" in body and "192.0.2.1" in body
    assert "Many claims from one internet address" in body
    assert "ip_velocity" not in body


def test_approving_pays_the_held_reward(client, alice, flagged):
    client.force_login(alice)

    response = decide(client, flagged, "approve")

    flagged.refresh_from_db()
    assert "Decision recorded" in response.content.decode()
    assert (flagged.status, flagged.reason) == ("approved", "review_approved")
    assert Hold.objects.get(pk=flagged.hold_id).status == "committed"
    decision = ReviewDecision.objects.get()
    assert (decision.decided_by, decision.decision, decision.reason) == (
        alice,
        "approve",
        "looked at the account",
    )
    assert ledger_drift() == []


def test_rejecting_releases_the_held_reward(client, alice, flagged):
    client.force_login(alice)

    decide(client, flagged, "reject", "farm of numbers")

    flagged.refresh_from_db()
    assert flagged.status == "rejected"
    assert Hold.objects.get(pk=flagged.hold_id).status == "voided"
    assert campaign_budget_account(campaign=flagged.campaign).available == 100_00


def test_rejecting_a_reward_already_posted_takes_it_back(client, alice, summer):
    from verification.services.participants import participant_flag

    person = participant_create(brand=summer.brand)
    identity = identity_attach(participant=person, provider="tiktok", subject="oid")
    claim = action_reward(rule=summer.rules.get(trigger="tiktok_login"), identity=identity)
    participant_flag(participant=person, code="payee_iban_shared", detail="the same bank account as #9")
    client.force_login(alice)

    decide(client, claim, "reject", "shared account")

    claim.refresh_from_db()
    assert claim.status == "rejected"
    assert campaign_budget_account(campaign=summer).balance == 100_00
    assert ledger_drift() == []


@pytest.mark.parametrize(("reason", "message"), [("", "Give a reason"), ("   ", "Give a reason")])
def test_a_decision_needs_a_reason(client, alice, flagged, reason, message):
    client.force_login(alice)

    response = decide(client, flagged, "approve", reason)

    assert message in response.content.decode()
    flagged.refresh_from_db()
    assert flagged.status == "needs_review" and not ReviewDecision.objects.exists()


def test_a_claim_is_decided_once(client, alice, flagged):
    client.force_login(alice)
    decide(client, flagged, "approve")

    response = decide(client, flagged, "reject")

    assert "already been decided" in response.content.decode()
    assert ReviewDecision.objects.count() == 1


@pytest.mark.parametrize("persona", ["vic", "fiona"])
def test_viewers_and_finance_read_the_queue_but_do_not_decide(client, request, flagged, persona):
    client.force_login(request.getfixturevalue(persona))

    assert client.get(reverse("verification:review_queue", args=["alpaca"])).status_code == 200
    assert decide(client, flagged, "approve").status_code == 403
    assert ActionClaim.objects.get(pk=flagged.pk).status == "needs_review"


def test_a_marketer_without_a_second_factor_releases_no_held_reward(client, alpaca, flagged, make_user):
    """Approving a held claim pays it: whoever decides proves it is them twice, marketers too."""
    from campaigns.models import Role
    from campaigns.services.brands import member_add

    mia = make_user("mia@alpaca.example", first_name="Mia")
    member_add(brand=alpaca, user=mia, role=Role.MARKETER)
    client.force_login(mia)

    decide(client, flagged, "approve")

    flagged.refresh_from_db()
    assert flagged.status == "needs_review"
    assert Hold.objects.get(pk=flagged.hold_id).status == "reserved"
    assert not ReviewDecision.objects.exists()
