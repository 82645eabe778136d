"""Caps: once per identity always, a total per rule, per person per period, and a brand-wide allowance."""

import pytest
from django.urls import reverse

from campaigns.services.brands import brand_allowance_set
from campaigns.services.rules import rule_save
from verification.models import ActionClaim
from verification.services.participants import identity_attach, participant_create
from verification.services.refusals import ClaimRefused
from verification.services.rewards import action_reward

pytestmark = pytest.mark.django_db


def person(campaign, subject, provider="whatsapp", participant=None):
    participant = participant or participant_create(brand=campaign.brand)
    return identity_attach(participant=participant, provider=provider, subject=subject)


def test_a_rule_stops_paying_at_its_total_cap(make_live_campaign):
    campaign = make_live_campaign(package="whatsapp_reward")
    rule_save(campaign=campaign, trigger="whatsapp_optin", reward_amount=2_00, total_cap=2)
    rule = campaign.rules.get()
    for number in ("491", "492"):
        action_reward(rule=rule, identity=person(campaign, number))

    with pytest.raises(ClaimRefused) as refused:
        action_reward(rule=rule, identity=person(campaign, "493"))

    assert refused.value.code == "rule_cap"
    assert ActionClaim.objects.count() == 2


def test_one_person_earns_at_most_the_period_cap(make_live_campaign):
    campaign = make_live_campaign(package="all_in_one", per_identity_period_cap=1)
    pat = participant_create(brand=campaign.brand)
    action_reward(
        rule=campaign.rules.get(trigger="tiktok_login"), identity=person(campaign, "oid", "tiktok", pat)
    )

    with pytest.raises(ClaimRefused) as refused:
        action_reward(
            rule=campaign.rules.get(trigger="whatsapp_optin"),
            identity=person(campaign, "491", participant=pat),
        )

    assert refused.value.code == "period_cap"


def test_the_brand_allowance_counts_across_campaigns(make_live_campaign, alpaca):
    brand_allowance_set(brand=alpaca, person_allowance=3_00)
    first = make_live_campaign(slug="first", package="whatsapp_reward")
    second = make_live_campaign(slug="second", package="all_in_one")
    pat = participant_create(brand=alpaca)
    action_reward(rule=first.rules.get(), identity=person(first, "491", participant=pat))  # 2.00

    action_reward(
        rule=second.rules.get(trigger="tiktok_login"), identity=person(second, "o", "tiktok", pat)
    )  # 3.00
    with pytest.raises(ClaimRefused) as refused:
        action_reward(
            rule=second.rules.get(trigger="whatsapp_optin"), identity=person(second, "491", participant=pat)
        )

    assert refused.value.code == "allowance"
    assert ActionClaim.objects.filter(participant=pat).count() == 2


def test_the_owner_sets_the_allowance_on_the_overview(client, alice, alpaca):
    client.force_login(alice)

    client.post(reverse("brand_allowance", args=["alpaca"]), {"person_allowance": "25.00"})

    alpaca.refresh_from_db()
    assert alpaca.person_allowance == 25_00


def test_only_the_owner_sets_the_allowance(client, fiona, alpaca):
    client.force_login(fiona)

    assert (
        client.post(reverse("brand_allowance", args=["alpaca"]), {"person_allowance": "1"}).status_code == 403
    )
