"""The quickstart started as it says, with a test key: an owner of a brand nobody verified yet makes
a test key on the dashboard, and the first purchase it reports earns cashback (it was refused
no_campaign: the test twin had no campaign)."""

import re

import pytest
from django.urls import reverse

from campaigns.models import Campaign
from campaigns.modes import brand_test_twin
from campaigns.services.brands import brand_create
from joyback.api.models import InboundEvent
from tests.api.conftest import Api, purchase
from verification import inbox

pytestmark = pytest.mark.django_db


@pytest.fixture
def fresh(alice):
    """Alice's new brand: not verified by staff, so no live key yet."""
    return brand_create(name="Otter Teas", owner=alice)


def key_made(client, alice, fresh) -> str:
    twin = brand_test_twin(brand=fresh)
    client.force_login(alice)
    page = client.post(
        reverse("api_key_new", args=[f"{fresh.slug}--test"]), {"name": "dev", "scopes": ["events"]}
    )
    assert page.status_code == 200, page.content.decode()[:2000]
    return twin, re.search(r"jb_test_[A-Za-z0-9_\-]+", page.content.decode())[0]


def test_the_first_purchase_with_a_new_test_key_earns_cashback(client, alice, fresh):
    twin, secret = key_made(client, alice, fresh)

    accepted = Api(client, secret).post("events", purchase())

    assert accepted.status_code == 202, accepted.content
    inbox.inbound_events_process()  # the worker's part
    event = InboundEvent.objects.get()
    assert (event.status, event.error) == ("processed", None), event.error
    campaign = Campaign.objects.get(brand=twin)
    assert (campaign.status, campaign.package) == ("live", "cashback")
    assert not Campaign.objects.filter(brand=fresh).exists()  # nothing made in live data


def test_a_second_test_key_makes_no_second_campaign(client, alice, fresh):
    key_made(client, alice, fresh)
    key_made(client, alice, fresh)

    assert Campaign.objects.count() == 1
