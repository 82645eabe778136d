"""Alice writes her campaign's headline and details in German and Spanish; each visitor reads the
brand's own words in their language, and the main text where she wrote none."""

import pytest
from django.urls import reverse

from campaigns.models import Campaign

pytestmark = pytest.mark.django_db

FORM = {
    "name": "Summer Glow",
    "package": "all_in_one",
    "currency": "EUR",
    "countries": ["DE"],
    "languages": ["en", "de", "es"],
    "headline": "Get paid for loving our summer range",
    "description": "Post a clip, get paid.",
}


def landing(client, campaign, language):
    return client.get(
        reverse("campaign_landing", args=[campaign.slug]), headers={"Accept-Language": language}
    ).content.decode()


def test_each_visitor_reads_the_brands_own_words_in_their_language(client, alice, summer):
    client.force_login(alice)

    client.post(
        reverse("campaign_edit", args=["alpaca", summer.pk]),
        FORM
        | {
            "headline_de": "Geld für deine Liebe zu unserer Sommerkollektion",
            "description_es": "Sube un clip.",
        },
    )

    summer.refresh_from_db()
    assert summer.texts == {
        "de": {"headline": "Geld für deine Liebe zu unserer Sommerkollektion"},
        "es": {"description": "Sube un clip."},
    }
    client.logout()
    german, spanish, chinese = (landing(client, summer, code) for code in ("de", "es", "zh-hans"))
    assert "Geld für deine Liebe zu unserer Sommerkollektion" in german
    assert "Post a clip, get paid." in german  # no German details written: the main text
    assert "Get paid for loving our summer range" in spanish and "Sube un clip." in spanish
    assert "Get paid for loving our summer range" in chinese


def test_the_edit_form_shows_what_was_written_per_language(client, alice, summer):
    Campaign.objects.filter(pk=summer.pk).update(texts={"zh-hans": {"headline": "夏季系列"}})
    client.force_login(alice)

    html = client.get(reverse("campaign_detail", args=["alpaca", summer.pk])).content.decode()

    assert 'name="headline_zh_hans"' in html and "夏季系列" in html


def test_a_too_long_translated_headline_is_refused_and_nothing_changes(client, alice, summer):
    client.force_login(alice)

    response = client.post(
        reverse("campaign_edit", args=["alpaca", summer.pk]), FORM | {"headline_de": "x" * 161}
    )

    summer.refresh_from_db()
    assert response.status_code == 400
    assert "at most 160 characters" in response.content.decode()
    assert summer.texts == {}
