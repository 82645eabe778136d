"""Alice's brand runs campaigns: packages, rules, budget, dry run and the life cycle."""

import pytest
from django.urls import reverse

from campaigns.models import CampaignStatus, Trigger
from campaigns.selectors import campaign_budget, campaign_claimability, campaign_dry_run
from campaigns.services.campaigns import campaign_create, campaign_transition
from campaigns.services.funding import (
    brand_funding_account,
    campaign_budget_account,
    campaign_fund,
)
from campaigns.services.refusals import CampaignError
from campaigns.services.rules import rule_save
from joyback.ledger.models import Transaction
from tests.conftest import fund

pytestmark = pytest.mark.django_db


def draft(brand, **extra):
    fields = dict(
        name="Autumn Club", package="whatsapp_reward", currency="EUR", countries=["DE"], languages=["en"]
    )
    return campaign_create(brand=brand, **(fields | extra))


def test_each_package_starts_with_its_rules(alpaca):
    triggers = {
        package: [r.trigger for r in draft(alpaca, name=package, package=package).rules.all()]
        for package in ("all_in_one", "tiktok_only", "whatsapp_reward", "cashback")
    }
    assert triggers == {
        "all_in_one": ["tiktok_login", "whatsapp_optin", "ugc_share"],
        "tiktok_only": ["tiktok_login", "ugc_share"],
        "whatsapp_reward": ["whatsapp_optin"],
        "cashback": ["purchase"],
    }


def test_a_share_needs_the_tiktok_login_first(alpaca):
    campaign = draft(alpaca, package="all_in_one")
    share = campaign.rules.get(trigger=Trigger.UGC_SHARE)
    assert share.prerequisite.trigger == Trigger.TIKTOK_LOGIN

    whatsapp_only = draft(alpaca, name="Club 2")
    with pytest.raises(CampaignError, match="needs a TikTok login rule first"):
        rule_save(campaign=whatsapp_only, trigger=Trigger.LIKE, reward_amount=50, total_cap=100)


@pytest.mark.parametrize("trigger", [Trigger.LIKE, Trigger.COMMENT])
def test_likes_and_comments_are_always_capped(alpaca, trigger):
    campaign = draft(alpaca, package="tiktok_only")

    with pytest.raises(CampaignError, match="give their rule a total cap"):
        rule_save(campaign=campaign, trigger=trigger, reward_amount=10)

    rule = rule_save(campaign=campaign, trigger=trigger, reward_amount=10, total_cap=500)
    assert (rule.total_cap, rule.prerequisite.trigger) == (500, Trigger.TIKTOK_LOGIN)


def test_a_campaign_cannot_go_live_without_budget(alpaca):
    campaign = draft(alpaca)

    with pytest.raises(CampaignError, match="Fund the campaign's budget"):
        campaign_transition(campaign=campaign, to="live")

    campaign.refresh_from_db()
    assert campaign.status == CampaignStatus.DRAFT


def test_funding_moves_money_from_the_brand_to_the_campaign(alpaca):
    fund(alpaca, 300_00, "EUR", reference="REF-1")
    campaign = draft(alpaca)

    campaign_fund(campaign=campaign, amount=120_00)

    assert brand_funding_account(brand=alpaca, currency="EUR").balance == 180_00
    assert campaign_budget_account(campaign=campaign).balance == 120_00
    assert campaign_transition(campaign=campaign, to="live").status == CampaignStatus.LIVE


def test_funding_more_than_the_brand_has_is_refused_and_changes_nothing(alpaca):
    fund(alpaca, 50_00, "EUR", reference="REF-2")
    campaign = draft(alpaca)
    before = Transaction.objects.count()

    with pytest.raises(CampaignError, match="funding balance is too low"):
        campaign_fund(campaign=campaign, amount=50_01)

    assert Transaction.objects.count() == before
    assert campaign_budget_account(campaign=campaign).balance == 0


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        (["live", "paused", "live", "ended"], True),
        (["ended", "live"], False),
        (["live", "ended", "paused"], False),
    ],
)
def test_the_life_cycle_only_moves_along_its_arrows(summer, path, allowed):
    campaign = summer
    campaign.status = "draft"
    campaign.save()
    try:
        for status in path:
            campaign = campaign_transition(campaign=campaign, to=status)
    except CampaignError as error:
        assert not allowed, error
        assert "cannot become" in str(error)
    else:
        assert allowed


def test_the_dry_run_says_how_far_the_budget_goes(alpaca):
    campaign = draft(alpaca, package="all_in_one")  # 1.00 login + 1.00 opt-in + 5.00 share

    run = campaign_dry_run(campaign=campaign, budget=100_00)

    assert [(row.rule.trigger, row.rewards) for row in run.rows] == [
        ("tiktok_login", 100),
        ("whatsapp_optin", 100),
        ("ugc_share", 20),
    ]
    assert (run.journey_cost, run.people, run.projected_spend) == (7_00, 14, 98_00)


def test_an_empty_budget_tells_people_the_campaign_is_fully_claimed(make_live_campaign):
    campaign = make_live_campaign(package="whatsapp_reward", budget=2_00)
    assert campaign_claimability(campaign=campaign).open

    from verification.services.participants import identity_attach, participant_create
    from verification.services.rewards import action_reward

    person = participant_create(brand=campaign.brand)
    identity = identity_attach(participant=person, provider="whatsapp", subject="4915123456789")
    action_reward(rule=campaign.rules.get(), identity=identity)

    closed = campaign_claimability(campaign=campaign)
    assert (closed.open, closed.reason) == (False, "fully_claimed")
    assert "fully claimed" in str(closed.message)
    assert campaign_budget(campaign=campaign).low


def test_the_campaign_page_shows_budget_funnel_and_dry_run(client, alice, summer):
    client.force_login(alice)

    response = client.get(reverse("campaign_detail", args=["alpaca", summer.pk]))

    body = response.content.decode()
    assert response.status_code == 200
    assert "Budget available" in body and "€100.00" in body
    assert reverse("verification:funnel", args=["alpaca", summer.pk]) in body
    assert "People who do every action" in body


def test_the_live_part_refreshes_as_a_fragment(client, alice, summer):
    client.force_login(alice)

    response = client.get(
        reverse("campaign_detail", args=["alpaca", summer.pk]), headers={"HX-Request": "true"}
    )

    body = response.content.decode()
    assert body.lstrip().startswith('<div id="live"') and "<html" not in body


@pytest.mark.parametrize(
    ("persona", "url_name", "data", "expected"),
    [
        ("vic", "campaign_new", {"name": "X"}, 403),
        ("vic", "campaign_status", {"to": "paused"}, 403),
        ("fiona", "campaign_status", {"to": "paused"}, 403),
        ("fiona", "campaign_fund", {"amount": "1.00"}, 302),
        ("vic", "campaign_fund", {"amount": "1.00"}, 403),
        ("fiona", "brand_topup", {"amount": "10"}, 302),
        ("vic", "brand_topup", {"amount": "10"}, 403),
    ],
)
def test_roles_decide_who_edits_funds_and_reads(client, request, summer, persona, url_name, data, expected):
    fund(summer.brand, 10_00, "EUR", reference="SPARE")
    client.force_login(request.getfixturevalue(persona))
    args = ["alpaca"] if url_name in ("campaign_new", "brand_topup") else ["alpaca", summer.pk]

    response = client.post(reverse(url_name, args=args), data)

    assert response.status_code == expected


def test_a_marketer_cannot_move_money(client, make_user, alpaca, summer):
    from campaigns.services.brands import member_add

    mia = make_user("mia@alpaca.example")
    member_add(brand=alpaca, user=mia, role="marketer")
    client.force_login(mia)

    assert (
        client.post(reverse("campaign_fund", args=["alpaca", summer.pk]), {"amount": "1"}).status_code == 403
    )
    assert (
        client.post(reverse("campaign_status", args=["alpaca", summer.pk]), {"to": "paused"}).status_code
        == 302
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"name": "", "package": "cashback", "currency": "EUR", "countries": ["DE"]},
            "This field is required.",
        ),
        ({"name": "X", "package": "nope", "currency": "EUR", "countries": ["DE"]}, "Select a valid choice."),
        ({"name": "X", "package": "cashback", "currency": "EUR"}, "This field is required."),
        (
            {
                "name": "X",
                "package": "cashback",
                "currency": "EUR",
                "countries": ["DE"],
                "starts_at": "2026-12-10T10:00",
                "ends_at": "2026-12-01T10:00",
            },
            "must end after it starts",
        ),
    ],
)
def test_a_bad_campaign_is_refused_with_a_message_and_nothing_created(client, alice, alpaca, data, message):
    client.force_login(alice)

    response = client.post(reverse("campaign_new", args=["alpaca"]), data)

    assert response.status_code == 400
    assert message in response.content.decode()
    assert not alpaca.campaigns.exists()


def test_a_sandbox_top_up_books_a_deposit(client, fiona, alpaca):
    client.force_login(fiona)

    client.post(reverse("brand_topup", args=["alpaca"]), {"amount": "250.50"})

    assert brand_funding_account(brand=alpaca, currency="EUR").balance == 250_50


def test_a_rule_is_saved_from_the_campaign_page(client, alice, alpaca):
    campaign = draft(alpaca, package="tiktok_only")
    client.force_login(alice)
    url = reverse("campaign_rule_save", args=["alpaca", campaign.pk])

    refused = client.post(
        url,
        {
            "trigger": "view_threshold",
            "reward": "3.50",
            "verification_mode": "engagement",
            "window_hours": "0",
            "min_views": "1000",
            "min_likes": "0",
        },
    )
    saved = client.post(
        url,
        {
            "trigger": "view_threshold",
            "reward": "3.50",
            "verification_mode": "engagement",
            "window_hours": "48",
            "min_views": "1000",
            "min_likes": "0",
        },
    )

    assert refused.status_code == 400 and "needs a window of at least one hour" in refused.content.decode()
    assert saved.status_code == 302
    rule = campaign.rules.get(trigger="view_threshold")
    assert (rule.reward_amount, rule.window_hours, rule.min_views) == (3_50, 48, 1000)


def test_the_currency_of_a_funded_campaign_cannot_change(client, alice, summer):
    client.force_login(alice)
    data = {
        "name": "Summer Glow",
        "package": "all_in_one",
        "currency": "GBP",
        "countries": ["DE"],
        "languages": ["en"],
    }

    response = client.post(reverse("campaign_edit", args=["alpaca", summer.pk]), data)

    assert response.status_code == 400
    assert "currency cannot change" in response.content.decode()
    summer.refresh_from_db()
    assert summer.currency == "EUR"


def test_campaign_settings_are_saved(client, alice, summer):
    client.force_login(alice)
    data = {
        "name": "Summer Glow 2",
        "package": "all_in_one",
        "currency": "EUR",
        "countries": ["DE", "AT"],
        "languages": ["en", "de"],
        "headline": "New headline",
        "per_identity_period_cap": "3",
    }

    response = client.post(reverse("campaign_edit", args=["alpaca", summer.pk]), data)

    summer.refresh_from_db()
    assert response.status_code == 302
    assert (summer.name, summer.countries, summer.per_identity_period_cap) == (
        "Summer Glow 2",
        ["AT", "DE"],
        3,
    )
