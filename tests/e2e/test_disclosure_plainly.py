"""Alice asks for the #ad at the start of the caption: her campaign page says the rules pass. The
same brief asking for it "for the first hour" only is held for JoyBack's team to read, with the words
that held it, and she is told she may change them."""

import pytest

from tests.compliance.conftest import funded_draft, share_instructions
from tests.e2e.conftest import no_serious_violations, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_plain_disclosure_passes_and_one_kept_for_an_hour_is_held(
    live_server, open_page, screenshot, alice, alpaca
):
    plain = funded_draft(alpaca, "Plain disclosure")
    share_instructions(plain, "Put #ad at the start of the caption.")
    hour = funded_draft(alpaca, "Disclosure for an hour")
    share_instructions(hour, "Put #ad at the start of the caption for the first hour.")

    brand = open_page()
    sign_in(brand, live_server, "alice@alpaca.example")
    brand.goto(f"{live_server.url}/brands/alpaca/campaigns/{plain.pk}/#compliance")
    brand.get_by_text("The rules pass the disclosure and fair-review checks.").wait_for()
    no_serious_violations(brand)
    screenshot(brand, "disclosure-plainly-01-at-the-start-passes")

    brand.goto(f"{live_server.url}/brands/alpaca/campaigns/{hour.pk}/#compliance")
    brand.get_by_text("says more than JoyBack can check on its own").first.wait_for()
    brand.get_by_text("for the first hour").first.wait_for()
    assert brand.get_by_text("The rules pass the disclosure and fair-review checks.").count() == 0
    screenshot(brand, "disclosure-plainly-02-for-an-hour-is-held")
