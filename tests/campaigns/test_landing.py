"""The public page of a campaign: what a visitor sees, and what they are told when it is closed."""

import pytest
from django.urls import reverse

from campaigns.selectors import _local_campaigns, campaign_public_cached
from campaigns.services.campaigns import campaign_transition
from campaigns.services.landing import landing_cache_clear
from verification.services.participants import identity_attach, participant_create
from verification.services.rewards import action_reward

pytestmark = pytest.mark.django_db


def test_a_live_campaign_shows_the_reward_the_disclosure_and_the_steps(client, summer):
    response = client.get(reverse("campaign_landing", args=[summer.slug]))

    body = response.content.decode()
    assert response.status_code == 200
    assert "Alpaca Coffee" in body and "€7.00" in body
    assert "Ad · Paid partnership with Alpaca Coffee" in body
    assert reverse("verification:steps", args=[summer.slug]) in body
    assert reverse("payouts:payee", args=[summer.slug]) in body


@pytest.mark.parametrize(
    ("status", "message"),
    [("paused", "paused for the moment"), ("ended", "has ended")],
)
def test_a_closed_campaign_says_so_politely(client, summer, status, message):
    campaign_transition(campaign=summer, to=status)

    page = client.get(reverse("campaign_landing", args=[summer.slug])).content.decode()
    steps = client.get(reverse("verification:steps", args=[summer.slug])).content.decode()

    assert message in page
    assert "Connect TikTok" not in steps


def test_an_empty_budget_is_fully_claimed(client, make_live_campaign):
    campaign = make_live_campaign(slug="tiny", package="whatsapp_reward", budget=2_00)
    identity = identity_attach(
        participant=participant_create(brand=campaign.brand), provider="whatsapp", subject="1"
    )
    action_reward(rule=campaign.rules.get(), identity=identity)

    page = client.get(reverse("campaign_landing", args=["tiny"])).content.decode()
    start = client.post(reverse("verification:whatsapp_start", args=["tiny"]))

    assert "fully claimed" in page
    assert start["Location"] == reverse("campaign_landing", args=["tiny"])


def test_an_unknown_campaign_is_404(client):
    assert client.get("/c/nothing-here/").status_code == 404


def test_the_cached_page_follows_a_pause_at_once(client, summer, django_capture_on_commit_callbacks):
    url = reverse("campaign_landing", args=[summer.slug])
    assert "paused for the moment" not in client.get(url).content.decode()

    with django_capture_on_commit_callbacks(execute=True):
        campaign_transition(campaign=summer, to="paused")

    assert "paused for the moment" in client.get(url).content.decode()


def test_the_page_is_cached_per_language(client, summer):
    url = reverse("campaign_landing", args=[summer.slug])

    english = client.get(url, headers={"Accept-Language": "en"}).content.decode()
    german = client.get(url, headers={"Accept-Language": "de"}).content.decode()

    assert "How to earn it" in english and "How to earn it" not in german


@pytest.fixture
def shared_cache(settings):
    """As with Redis: each web process also keeps the pages it fetched for a moment."""
    from campaigns import selectors

    settings.REDIS_URL, settings.LANDING_LOCAL_SECONDS = "redis://cache.invalid/0", 1
    selectors._local_pages.clear()
    yield
    selectors._local_pages.clear()


def test_with_a_shared_cache_a_change_shows_at_once_where_it_was_made(
    client, summer, shared_cache, django_capture_on_commit_callbacks
):
    url = reverse("campaign_landing", args=[summer.slug])
    assert "paused for the moment" not in client.get(url).content.decode()

    with django_capture_on_commit_callbacks(execute=True):
        campaign_transition(campaign=summer, to="paused")

    assert "paused for the moment" in client.get(url).content.decode()


def test_with_a_shared_cache_other_processes_follow_within_the_local_seconds(
    client, summer, shared_cache, monkeypatch
):
    import time

    from django.core.cache import cache

    from campaigns.models import Campaign

    url = reverse("campaign_landing", args=[summer.slug])
    client.get(url)  # rendered and put in the shared cache
    client.get(url)  # fetched from it, and kept by this process
    # Another process pauses the campaign: the shared cache forgets the page, this process's copy stays.
    Campaign.objects.filter(pk=summer.pk).update(status="paused")
    cache.clear()

    assert "paused for the moment" not in client.get(url).content.decode()
    later = time.monotonic() + 1.5
    monkeypatch.setattr(time, "monotonic", lambda: later)
    assert "paused for the moment" in client.get(url).content.decode()


def test_before_its_steps_load_the_page_lists_each_step_laid_out_as_the_steps_are(client, summer):
    """Without JavaScript (or before htmx loads the steps) the list is the page's own: each step's
    name and reward in the same heading row the loaded steps use, not run together."""
    body = client.get(reverse("campaign_landing", args=[summer.slug])).content.decode()

    steps = body[body.index('id="steps"') : body.index('id="payee"')]
    assert steps.count('<div class="step-head"><span class="step-title">') == summer.rules.count()


def test_each_process_keeps_the_public_campaign_under_the_shared_stamp(summer):
    kept = campaign_public_cached(slug=summer.slug)
    kept.name = "Set by one request"
    # Another request of the same process gets its own copy, not what the first one changed.
    assert campaign_public_cached(slug=summer.slug).name == summer.name

    campaign_transition(campaign=summer, to="paused")
    landing_cache_clear(campaign=summer)
    # Another process still holds its copy under the old stamp: the stamp is gone, so it reads anew.
    _local_campaigns[summer.slug] = ("an older stamp", kept)

    assert campaign_public_cached(slug=summer.slug).status == "paused"
