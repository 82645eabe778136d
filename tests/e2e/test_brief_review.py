"""Sam (JoyBack staff) opens the briefs waiting for review in the admin, reads what the linter could
not check in Alice's brief and sends it back with what to change; Alice reads his note where she
takes the campaign live."""

import pytest
from django.contrib.auth.models import Permission

from tests.compliance.conftest import RATING_IS_YOURS, funded_draft, share_instructions
from tests.conftest import totp_enable
from tests.e2e.conftest import no_serious_violations, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

WORDS = "Tell a story about your grandmother's kitchen while the coffee brews"


@pytest.fixture
def sam(make_user):
    user = totp_enable(make_user("sam@joyback.example", is_staff=True, first_name="Sam"))
    user.user_permissions.add(Permission.objects.get(codename="review_brief"))
    return user


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
