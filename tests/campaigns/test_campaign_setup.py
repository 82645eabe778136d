"""Setting a campaign up: a template to start from, the rule editor showing each action's own
fields and opening a rule to change it, a draft's page previewed by the brand's own members only,
and a campaign copied into the brand's test data."""

import pytest
from django.urls import reverse

from campaigns.models import Campaign
from campaigns.services.campaigns import campaign_create
from campaigns.services.copies import campaign_copy_to_test
from campaigns.services.rules import rule_save

pytestmark = pytest.mark.django_db


def draft(brand, **extra):
    return campaign_create(
        brand=brand,
        name="Autumn Club",
        slug="autumn-club",
        package=extra.pop("package", "tiktok_only"),
        currency="EUR",
        countries=["DE"],
        languages=["en"],
        headline="Post and get paid",
        **extra,
    )


def test_the_campaign_list_offers_a_template_per_package_explained(client, alice, alpaca):
    client.force_login(alice)
    html = client.get(reverse("campaign_list", args=["alpaca"])).content.decode()

    for package in ("all_in_one", "tiktok_only", "whatsapp_reward", "cashback"):
        assert f"?template={package}" in html
    assert "People opt in to your WhatsApp messages" in html and "up to €2.00 per person" in html


def test_a_template_fills_in_the_second_step(client, alice, alpaca):
    client.force_login(alice)
    response = client.get(reverse("campaign_new", args=["alpaca"]) + "?template=cashback")

    assert response.status_code == 200
    form = response.context["form"]
    assert form["package"].value() == "cashback"
    assert form["headline"].value() == "Cash back on your purchase"
    assert "Step 2 of 2" in response.content.decode()


def test_a_bad_new_campaign_comes_back_on_the_second_step_with_its_errors(client, alice, alpaca):
    client.force_login(alice)
    response = client.post(reverse("campaign_new", args=["alpaca"]), {"name": "", "package": "cashback"})

    assert response.status_code == 400
    assert "Step 2 of 2" in response.content.decode() and not alpaca.campaigns.exists()


def test_the_rule_editor_marks_each_field_with_the_actions_it_belongs_to(client, alice, alpaca):
    campaign = draft(alpaca)
    client.force_login(alice)
    html = client.get(reverse("campaign_detail", args=["alpaca", campaign.pk])).content.decode()

    assert 'data-show-for="purchase"' in html  # cashback percent, return window
    assert 'data-show-for="ugc_share view_threshold"' in html  # tiers and view counts
    assert "data-rule-form" in html


def test_a_rules_edit_link_opens_the_editor_filled_with_that_rule(client, alice, alpaca):
    campaign = draft(alpaca)
    rule_save(
        campaign=campaign,
        trigger="ugc_share",
        reward_amount=7_50,
        verification_mode="engagement",
        window_hours=48,
        min_views=900,
        reach_tiers=[[1000, 2_00], [10000, 7_50]],
    )
    share = campaign.rules.get(trigger="ugc_share")
    client.force_login(alice)

    response = client.get(reverse("campaign_detail", args=["alpaca", campaign.pk]) + f"?rule={share.pk}")

    form = response.context["rule_form"]
    assert form["trigger"].value() == "ugc_share"
    assert str(form["reward"].value()) == "7.50"
    assert (form["window_hours"].value(), form["min_views"].value()) == (48, 900)
    assert form["reach_tiers"].value() == "1000 = 2.00\n10000 = 7.50"
    assert '<details id="rule-editor" open>' in response.content.decode()


def test_a_draft_is_previewed_by_its_brands_members_and_nobody_else(client, alice, bob, alpaca, bison):
    draft(alpaca)
    url = reverse("campaign_landing", args=["autumn-club"])

    assert client.get(url).status_code == 404  # the public

    client.force_login(bob)  # another brand's owner
    assert client.get(url).status_code == 404

    client.force_login(alice)
    response = client.get(url)
    assert response.status_code == 200
    html = response.content.decode()
    assert "Preview of a draft" in html and "Post and get paid" in html
    assert "hx-get" not in html.split('id="steps"')[1].split(">")[0]  # nothing on it claims
    assert response["Cache-Control"] == "private, no-store" and response["X-Robots-Tag"] == "noindex"


def test_a_campaign_is_copied_into_the_test_data_with_its_rules(alpaca):
    campaign = draft(alpaca)
    rule_save(
        campaign=campaign,
        trigger="ugc_share",
        reward_amount=7_50,
        verification_mode="engagement",
        window_hours=48,
    )

    copy = campaign_copy_to_test(campaign=campaign)

    assert copy.brand.live_brand == alpaca and not copy.brand.livemode
    assert copy.status == "draft" and copy.headline == "Post and get paid" and copy.slug != campaign.slug
    rules = {rule.trigger: rule for rule in copy.rules.all()}
    assert set(rules) == {"tiktok_login", "ugc_share"}
    assert (
        rules["ugc_share"].reward_amount == 7_50 and rules["ugc_share"].prerequisite == rules["tiktok_login"]
    )
    assert rules["ugc_share"].brand_id == copy.brand_id
    campaign.refresh_from_db()
    assert campaign.rules.count() == 2 and campaign.brand == alpaca


def test_copy_to_test_from_the_campaign_page_opens_the_copy(client, alice, alpaca):
    campaign = draft(alpaca)
    client.force_login(alice)

    response = client.post(reverse("campaign_copy_to_test", args=["alpaca", campaign.pk]))

    copy = Campaign.objects.exclude(pk=campaign.pk).get()
    assert response.status_code == 302
    assert response["Location"] == reverse("campaign_detail", args=["alpaca--test", copy.pk])


def test_a_viewer_cannot_copy_a_campaign(client, vic, alpaca):
    campaign = draft(alpaca)
    client.force_login(vic)
    assert client.post(reverse("campaign_copy_to_test", args=["alpaca", campaign.pk])).status_code == 403
    assert Campaign.objects.count() == 1
