"""A person on a phone, in their own language, always knows where they stand: why a claim was
decided and what to do next, where their money is when they come back, and where the keyboard is.

Each page is checked with axe-core: no serious or critical accessibility violation.
"""

import pytest

from tests.e2e.conftest import no_serious_violations
from tests.e2e.test_claimant_journeys import connect_tiktok, live

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def summer(alpaca):
    campaign = live(alpaca, slug="summer-glow", package="all_in_one", headline="Paid for loving our summer range")
    campaign.rules.filter(trigger="ugc_share").update(min_views=1000)
    return campaign


def post_in_studio(page, live_server, *, views, name="Pat Creator"):
    """The person posts a disclosed video in the sandbox TikTok and copies its link."""
    page.goto(f"{live_server.url}/sandbox/tiktok/studio/")
    page.locator("#display_name").select_option(name)
    page.locator("#caption").fill("Ad · Paid partnership with Alpaca Coffee #summer")
    page.locator("#view_count").fill(str(views))
    page.locator(".studio-form button[type=submit]").click()
    return page.locator(".video-url").first.inner_text()


def share_and_close_window(page, live_server, link):
    page.goto(f"{live_server.url}/c/summer-glow/")
    page.locator("#video-url-ugc_share").fill(link)
    page.locator("#share-form-ugc_share input[name=label_attested]").check()
    page.locator("#share-form-ugc_share button[type=submit]").click()
    close = page.locator("#step-ugc_share form[action*='close-window'] button")
    close.wait_for()
    close.click()


def test_a_video_below_the_views_asked_for_says_why_what_it_had_and_what_next_in_spanish(
    live_server, open_page, screenshot, summer
):
    page = open_page("phone", "es")
    connect_tiktok(page, live_server)
    link = post_in_studio(page, live_server, views=300)

    share_and_close_window(page, live_server, link)

    step = page.locator("#step-ugc_share.state-rejected")
    step.wait_for()
    text = " ".join(step.inner_text().split())  # Spanish groups thousands with a (no-break) space
    assert "Tu vídeo no alcanzó las visualizaciones" in text
    assert "Se necesitaban 1 000 visualizaciones; tu vídeo tuvo 300." in text
    assert "Publica otro vídeo con la indicación de publicidad" in text
    assert "below_threshold" not in page.content()
    screenshot(page, "60-rejected-below-threshold-es-phone")
    no_serious_violations(page)

    # The status page says the same beside the amount it would have earned.
    from verification.models import Participant

    token = Participant.objects.get().token
    page.goto(f"{live_server.url}/c/summer-glow/status/{token}/")
    actions = page.locator("#status-actions .decision-rejected")
    actions.wait_for()
    assert "Se necesitaban 1 000 visualizaciones; tu vídeo tuvo 300." in " ".join(actions.inner_text().split())
    assert "habrías ganado" in page.locator("#status-actions").inner_text()
    screenshot(page, "61-status-rejected-es-phone")
    no_serious_violations(page)
