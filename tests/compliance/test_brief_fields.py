"""A brief as fields: what a brand may ask of a posted video (show the product, tag, hashtags, post
within hours, keep public, the label, language, length, the flavour, the price) is checked, stored on
the rule, rendered to the creator in four languages, and needs no review before launch; bad input
is refused with a clear message and changes nothing; another brand's rule form is not found."""

import pytest
from django.urls import reverse
from django.utils import translation

from campaigns.brief import BriefError, brief_clean, brief_lines
from campaigns.models import ActionRule
from campaigns.services.campaigns import campaign_create
from campaigns.services.funding import campaign_fund
from campaigns.services.refusals import CampaignError, campaign_launch_problems
from campaigns.services.rules import rule_save
from tests.conftest import fund

pytestmark = pytest.mark.django_db

BRIEF = {
    "show_product": True,
    "show_within_seconds": 3,
    "tag_handle": "drinkalpaca",
    "hashtags": "#AlpacaCoffee coldbrew",
    "mention": "Oat Latte",
    "label_on": True,
    "post_within_hours": 48,
    "keep_public_days": 30,
    "min_seconds": 15,
    "max_seconds": 60,
    "language": "de",
    "price_allowed": True,
}


@pytest.fixture
def draft(alpaca):
    fund(alpaca, 100_00, "EUR", reference="BRIEF")
    campaign = campaign_create(
        brand=alpaca, name="Brief", package="tiktok_only", currency="EUR", countries=["DE"], languages=["de"]
    )
    campaign_fund(campaign=campaign, amount=100_00)
    return campaign


def share(campaign, **fields):
    return rule_save(
        campaign=campaign,
        trigger="ugc_share",
        reward_amount=5_00,
        verification_mode="engagement",
        window_hours=72,
        **fields,
    )


def form_post(brief: dict, **extra) -> dict:
    data = {
        "trigger": "ugc_share",
        "reward": "5.00",
        "verification_mode": "engagement",
        "window_hours": "72",
        "min_views": "0",
        "min_likes": "0",
        **extra,
    }
    for name, value in brief.items():
        if value is True:
            data[f"brief_{name}"] = "on"
        elif value is not None and value is not False:
            data[f"brief_{name}"] = str(value)
    return data


def test_a_brief_is_cleaned_to_its_known_fields():
    brief = brief_clean(BRIEF)

    assert brief["tag_handle"] == "@drinkalpaca"
    assert brief["hashtags"] == ["#AlpacaCoffee", "#coldbrew"]
    assert brief["post_within_hours"] == 48 and brief["language"] == "de"
    assert brief_clean({"show_product": False, "hashtags": "", "mention": "  "}) == {}


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("post_within_hours", 0, "between 1 and 720"),
        ("keep_public_days", 1000, "between 1 and 365"),
        ("min_seconds", "ten", "whole number"),
        ("tag_handle", "@a b", "is not a handle"),
        ("hashtags", "#ad-free #ok", "is not a hashtag"),
        ("hashtags", " ".join(f"#t{i}" for i in range(11)), "At most 10 hashtags"),
        ("mention", "Say it is the best coffee in the world. Really.", "not a product or flavour name"),
        ("language", "fr", "not a language"),
        ("show_product", "sometimes", "yes or no"),
        ("colour", "red", "Unknown brief field"),
    ],
)
def test_a_field_it_cannot_take_is_refused_by_name(field, value, says):
    with pytest.raises(BriefError, match=says):
        brief_clean({field: value})


def test_a_length_that_ends_before_it_starts_is_refused():
    with pytest.raises(BriefError, match="longer than its longest"):
        brief_clean({"min_seconds": 60, "max_seconds": 15})


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        ("en", "Post within 48 hours."),
        ("de", "Poste innerhalb von 48 Stunden."),
        ("es", "Publica en un plazo de 48 horas."),
        ("zh-hans", "请在48小时内发布。"),
    ],
)
def test_the_brief_is_rendered_to_the_creator_in_four_languages(language, expected):
    with translation.override(language):
        lines = brief_lines(brief_clean(BRIEF))

    assert expected in lines
    assert any("@drinkalpaca" in line for line in lines)
    assert any("#AlpacaCoffee #coldbrew" in line for line in lines)
    assert len(lines) == 11  # ten fields' lines and the one that keeps the opinion the creator's own


def test_a_brief_of_fields_alone_goes_live_without_a_review(draft):
    rule = share(draft, brief=BRIEF)

    assert rule.brief["tag_handle"] == "@drinkalpaca"
    assert not [p for p in campaign_launch_problems(campaign=draft) if p.blocking]


@pytest.mark.parametrize(
    ("field", "value"),
    [("hashtags", "#notanad #AlpacaCoffee"), ("hashtags", "#BestCoffeeEver"), ("mention", "five stars")],
)
def test_a_hashtag_or_name_that_denies_the_ad_or_scripts_praise_goes_to_review(draft, field, value):
    share(draft, brief={field: value})

    assert [p.code for p in campaign_launch_problems(campaign=draft) if p.blocking] == ["instructions_review"]


def test_only_a_posted_video_has_a_brief(draft):
    with pytest.raises(CampaignError, match="posted video"):
        rule_save(campaign=draft, trigger="tiktok_login", reward_amount=1_00, brief={"show_product": True})


def test_the_rule_form_saves_the_brief_and_shows_it_again(client, alice, draft):
    client.force_login(alice)

    saved = client.post(
        reverse("campaign_rule_save", args=["alpaca", draft.pk]), form_post(BRIEF), follow=True
    )
    rule = ActionRule.objects.get(campaign=draft, trigger="ugc_share")
    page = client.get(
        reverse("campaign_detail", args=["alpaca", draft.pk]), {"rule": rule.pk}
    ).content.decode()

    assert saved.status_code == 200 and rule.brief == brief_clean(BRIEF)
    assert 'value="#AlpacaCoffee #coldbrew"' in page and 'value="@drinkalpaca"' in page


@pytest.mark.parametrize(
    ("brief", "says"),
    [
        ({**BRIEF, "hashtags": "#ad-free"}, "is not a hashtag"),
        ({**BRIEF, "tag_handle": "@x"}, "is not a handle"),
        ({**BRIEF, "min_seconds": 90, "max_seconds": 30}, "longer than its longest"),
        ({**BRIEF, "post_within_hours": 0}, "greater than or equal to 1"),
    ],
)
def test_bad_brief_input_is_refused_with_a_message_and_changes_nothing(client, alice, draft, brief, says):
    share(draft, brief={"post_within_hours": 24}, instructions="")
    client.force_login(alice)

    refused = client.post(reverse("campaign_rule_save", args=["alpaca", draft.pk]), form_post(brief))

    assert refused.status_code == 400 and says in refused.content.decode()
    assert ActionRule.objects.get(campaign=draft, trigger="ugc_share").brief == {"post_within_hours": 24}


def test_the_rule_editor_previews_the_brief_in_four_languages(client, alice, draft):
    client.force_login(alice)

    shown = client.get(
        reverse("campaign_rule_brief_preview", args=["alpaca", draft.pk]),
        form_post(BRIEF),
        HTTP_HX_REQUEST="true",
    ).content.decode()
    wrong = client.get(
        reverse("campaign_rule_brief_preview", args=["alpaca", draft.pk]), form_post({"tag_handle": "@a b"})
    ).content.decode()

    assert "Post within 48 hours." in shown and "Poste innerhalb von 48 Stunden." in shown
    assert "Publica en un plazo de 48 horas." in shown and "请在48小时内发布。" in shown
    assert "is not a handle" in wrong


def test_another_brand_is_refused_on_the_rule_form_and_its_preview(client, bob, bison, draft):
    client.force_login(bob)

    saved = client.post(reverse("campaign_rule_save", args=["bison", draft.pk]), form_post(BRIEF))
    preview = client.get(reverse("campaign_rule_brief_preview", args=["bison", draft.pk]), form_post(BRIEF))
    theirs = client.post(reverse("campaign_rule_save", args=["alpaca", draft.pk]), form_post(BRIEF))

    assert saved.status_code == 404 and preview.status_code == 404 and theirs.status_code == 404
    assert ActionRule.objects.get(campaign=draft, trigger="ugc_share").brief == {}


def test_the_creator_reads_the_brief_on_the_campaign_page(client, make_live_campaign):
    campaign = make_live_campaign(slug="brief-page")
    share(campaign, brief={"show_product": True, "post_within_hours": 48})

    page = client.get(reverse("verification:steps", args=[campaign.slug]), HTTP_ACCEPT_LANGUAGE="es")
    page = page.content.decode()

    assert "Publica en un plazo de 48 horas." in page
    assert "Di lo que piensas de verdad" in page
