"""Alice writes a brief that passes the checks on her campaign page, and the same brief with one
thing added that may not pass: a rating floor after a list of ratings not needed is refused, with the
words that refused it; a disclosure asked for "for the first hour" only is held for JoyBack's team,
with the words that held it and how to ask for it plainly."""

import pytest

from tests.compliance.conftest import funded_draft, share_instructions
from tests.e2e.conftest import no_serious_violations, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSES = "The rules pass the disclosure and fair-review checks."


@pytest.mark.parametrize(
    ("lawful_words", "other_words", "shown", "shots"),
    [
        (
            "You don't need to give us a ten or five stars.",
            "You don't need to give us a ten or five stars is the minimum.",
            ["conditions the reward on a sentiment"],
            ("lawful-brief-01-a-list-not-needed-passes", "lawful-brief-02-a-floor-after-it-is-refused"),
        ),
        (
            "Put #ad at the start of the caption.",
            "Put #ad at the start of the caption for the first hour.",
            ["asks for the disclosure with more than where it stands", "for the first hour"],
            ("disclosure-plainly-01-at-the-start-passes", "disclosure-plainly-02-for-an-hour-is-held"),
        ),
    ],
)
def test_a_lawful_brief_passes_and_the_same_with_more_does_not(
    live_server, open_page, screenshot, alice, alpaca, lawful_words, other_words, shown, shots
):
    lawful = funded_draft(alpaca, "Lawful brief")
    share_instructions(lawful, lawful_words)
    other = funded_draft(alpaca, "Brief with more")
    share_instructions(other, other_words)

    brand = open_page()
    sign_in(brand, live_server, "alice@alpaca.example")
    brand.goto(f"{live_server.url}/brands/alpaca/campaigns/{lawful.pk}/#compliance")
    brand.get_by_text(PASSES).wait_for()
    no_serious_violations(brand)
    screenshot(brand, shots[0])

    brand.goto(f"{live_server.url}/brands/alpaca/campaigns/{other.pk}/#compliance")
    for text in shown:
        brand.get_by_text(text).first.wait_for()
    assert brand.get_by_text(PASSES).count() == 0
    screenshot(brand, shots[1])
