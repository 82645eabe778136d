"""Alice writes a brief that forbids a rating condition over a list: it passes the checks on her
campaign page. The same words with a floor added after the list are refused there, with the words
that refused them."""

import pytest

from tests.compliance.conftest import funded_draft, share_instructions
from tests.e2e.conftest import no_serious_violations, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_lawful_list_passes_and_a_floor_after_it_is_refused(
    live_server, open_page, screenshot, alice, alpaca
):
    lawful = funded_draft(alpaca, "Honest ratings")
    share_instructions(lawful, "You don't need to give us a ten or five stars.")
    floor = funded_draft(alpaca, "Rating floor")
    share_instructions(floor, "You don't need to give us a ten or five stars is the minimum.")

    brand = open_page()
    sign_in(brand, live_server, "alice@alpaca.example")
    brand.goto(f"{live_server.url}/brands/alpaca/campaigns/{lawful.pk}/#compliance")
    brand.get_by_text("The rules pass the disclosure and fair-review checks.").wait_for()
    no_serious_violations(brand)
    screenshot(brand, "lawful-brief-01-a-list-not-needed-passes")

    brand.goto(f"{live_server.url}/brands/alpaca/campaigns/{floor.pk}/#compliance")
    brand.get_by_text("conditions the reward on a sentiment").first.wait_for()
    assert brand.get_by_text("The rules pass the disclosure and fair-review checks.").count() == 0
    screenshot(brand, "lawful-brief-02-a-floor-after-it-is-refused")
