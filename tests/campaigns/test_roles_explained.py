"""Each member is told, where they work, what their role lets them do and who does the rest."""

import pytest
from django.urls import reverse

from campaigns.models import Role
from campaigns.services.brands import brand_create, member_add

pytestmark = pytest.mark.django_db


@pytest.fixture
def mia(make_user, alpaca):
    """A marketer of Alpaca's: writes campaigns, cannot fund them."""
    user = make_user("mia@alpaca.example", first_name="Mia")
    member_add(brand=alpaca, user=user, role=Role.MARKETER)
    return user


def page(client, user, url):
    client.force_login(user)
    return client.get(url).content.decode()


def test_a_marketer_is_told_who_funds_a_campaign_instead_of_a_dead_end(client, mia, fiona, summer):
    html = page(client, mia, reverse("campaign_detail", args=["alpaca", summer.pk]))

    assert 'id="who-funds"' in html
    assert "Alice" in html and "Fiona" in html  # the owner and the finance member, by name
    assert reverse("campaign_fund", args=["alpaca", summer.pk]) not in html
    assert "As a marketer you create and edit campaigns" in html


def test_a_finance_member_gets_the_fund_form_and_no_one_to_ask(client, fiona, summer):
    html = page(client, fiona, reverse("campaign_detail", args=["alpaca", summer.pk]))

    assert reverse("campaign_fund", args=["alpaca", summer.pk]) in html
    assert 'id="who-funds"' not in html
    assert "As a finance member you fund campaigns" in html


def test_a_marketers_new_campaign_says_who_funds_it(client, mia, alpaca):
    client.force_login(mia)

    response = client.post(
        reverse("campaign_new", args=["alpaca"]),
        {
            "name": "Autumn",
            "package": "whatsapp_reward",
            "currency": "EUR",
            "countries": ["DE"],
            "languages": ["en"],
        },
        follow=True,
    )

    html = response.content.decode()
    assert "the owner or a finance member funds it" in html
    assert "Fund it, check the rules" not in html


def test_a_new_brands_empty_overview_offers_the_first_step(client, make_user):
    owner = make_user("nina@new.example", first_name="Nina")
    brand_create(name="New Brand", slug="new-brand", owner=owner, currency="EUR")

    html = page(client, owner, reverse("brand_dashboard", args=["new-brand"]))

    assert "Create your first campaign" in html
    assert reverse("campaign_list", args=["new-brand"]) + "#new-campaign" in html


def test_a_viewer_is_told_who_creates_campaigns(client, make_user, vic):
    brand = brand_create(name="Quiet", slug="quiet", owner=make_user("q@quiet.example"), currency="EUR")
    member_add(brand=brand, user=vic, role=Role.VIEWER)

    html = page(client, vic, reverse("brand_dashboard", args=["quiet"]))

    assert "Create your first campaign" not in html
    assert "The owner or a marketer creates campaigns" in html
    assert "As a viewer you can see everything here but change nothing" in html
