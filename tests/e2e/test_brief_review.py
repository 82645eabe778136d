"""Sam (JoyBack staff) opens the briefs waiting for review in the admin, reads what the linter could
not check in Alice's brief and sends it back with what to change; Alice reads his note where she
takes the campaign live. A disclosure asked for with more than where it stands goes live only once
Sam and Tess both approved it."""

import pytest

from tests.compliance.conftest import RATING_IS_YOURS, funded_draft, share_instructions
from tests.e2e.conftest import no_serious_violations, sign_in
from tests.payouts.conftest import staff_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

WORDS = "Tell a story about your grandmother's kitchen while the coffee brews"
HELD_DISCLOSURE = (
    "Put #ad at the start of the caption. Someone will ask in the comments whether Alpaca paid you, "
    "so please answer honestly that it's a paid partnership."
)
PASSES = "The rules pass the disclosure and fair-review checks."


@pytest.fixture
def sam(make_user):
    return staff_user(make_user, "sam@joyback.example", "review_brief", app_label="compliance")


@pytest.fixture
def tess(make_user):
    return staff_user(make_user, "tess@joyback.example", "review_brief", app_label="compliance")


def test_staff_send_a_brief_back_and_the_brand_reads_why(
    live_server, open_page, screenshot, alice, alpaca, sam
):
    campaign = funded_draft(alpaca, "Kitchen stories")
    rule = share_instructions(campaign, WORDS)

    staff = open_page()
    sign_in(staff, live_server, sam.email, next_path="/admin/")
    staff.get_by_role("link", name="Briefs waiting for review").click()
    staff.get_by_role("link", name=str(rule.pk), exact=True).click()
    staff.get_by_text("What JoyBack could not check on its own").wait_for()
    screenshot(staff, "brief-review-01-staff-reads")
    staff.get_by_label("What the brand must change (it reads this)").fill(
        "Name the blend you show, and keep family stories optional."
    )
    staff.get_by_role("button", name="Send back to the brand").click()
    staff.get_by_text("Sent back: the brand reads your note").wait_for()
    screenshot(staff, "brief-review-02-sent-back")

    brand = open_page()
    sign_in(brand, live_server, "alice@alpaca.example")
    brand.goto(f"{live_server.url}/brands/alpaca/campaigns/{campaign.pk}/")
    brand.get_by_role("button", name="Go live").first.click()
    brand.get_by_text("keep family stories optional").first.wait_for()
    no_serious_violations(brand)
    screenshot(brand, "brief-review-03-brand-reads-the-note")


def test_the_brand_asks_staff_to_read_words_refused_for_sure(
    live_server, open_page, screenshot, alice, alpaca, sam
):
    campaign = funded_draft(alpaca, "Rate it")
    rule = share_instructions(campaign, RATING_IS_YOURS)

    brand = open_page()
    sign_in(brand, live_server, "alice@alpaca.example")
    brand.goto(f"{live_server.url}/brands/alpaca/campaigns/{campaign.pk}/#compliance")
    brand.get_by_role("button", name="These words are lawful: ask JoyBack's team to read them").click()
    brand.get_by_text("Two of them must approve the exact words").wait_for()
    no_serious_violations(brand)
    screenshot(brand, "brief-review-04-brand-asks")

    staff = open_page()
    sign_in(staff, live_server, sam.email, next_path="/admin/")
    staff.goto(f"{live_server.url}/admin/compliance/briefreview/{rule.pk}/change/")
    staff.get_by_text("Refused for sure: the brand asks you to read them").wait_for()
    screenshot(staff, "brief-review-05-staff-reads-a-request")


def test_a_disclosure_held_for_what_it_says_besides_goes_live_only_once_two_staff_approved_it(
    live_server, open_page, screenshot, alice, alpaca, sam, tess
):
    campaign = funded_draft(alpaca, "Honest answers")
    rule = share_instructions(campaign, HELD_DISCLOSURE)

    first = open_page()
    sign_in(first, live_server, sam.email, next_path="/admin/compliance/briefreview/")
    first.get_by_text("may be a disclosure asked for with more than where it stands").wait_for()
    first.get_by_role("link", name=str(rule.pk), exact=True).click()
    first.get_by_label("Why these words are lawful").fill("The answer it asks for is the disclosure itself.")
    first.get_by_role("button", name="Approve these words").click()
    first.get_by_text("Approved: a second staff member must approve these words too.").wait_for()
    first.get_by_text("a second staff member's approval").wait_for()
    first.get_by_role("link", name=str(rule.pk), exact=True).click()
    first.get_by_text("You approved these words already").wait_for()
    assert first.get_by_role("button", name="Approve these words").count() == 0
    screenshot(first, "brief-review-06-one-approval-is-not-enough")

    brand = open_page()
    sign_in(brand, live_server, "alice@alpaca.example")
    brand.goto(f"{live_server.url}/brands/alpaca/campaigns/{campaign.pk}/#compliance")
    brand.get_by_text("asks for the disclosure with more than where it stands").first.wait_for()
    assert brand.get_by_text(PASSES).count() == 0

    second = open_page()
    sign_in(second, live_server, tess.email, next_path=f"/admin/compliance/briefreview/{rule.pk}/change/")
    second.get_by_text("One staff member approved these words").wait_for()
    second.get_by_label("Why these words are lawful").fill("Agreed: an honest answer that it is paid.")
    second.get_by_role("button", name="Approve these words").click()
    second.get_by_text("Approved: the brand can take the campaign live with these words.").wait_for()
    screenshot(second, "brief-review-07-the-second-approval")

    brand.reload()
    brand.get_by_text(PASSES).wait_for()
    no_serious_violations(brand)
