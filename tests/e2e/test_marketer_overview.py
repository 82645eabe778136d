"""Alice, Alpaca's owner, at her desk and on her phone, in English and German: the overview tells her
what the money bought (visits, the funnel to paid people, cost per action, the videos' reach), the
charts can be read and their values read out, the claims table filters, pages and downloads what
it shows, and on a phone each row is a card without sideways scrolling.

Each page is checked with axe-core: no serious or critical accessibility violation.
"""

import csv
import io
from datetime import timedelta

import pytest
from django.utils import timezone

from campaigns.visits import landing_visit_add
from tests.e2e.conftest import SCREENSHOTS, no_serious_violations, sign_in
from verification.models import ActionClaim, ClaimStatus
from verification.services.participants import identity_attach, participant_create
from verification.services.rewards import action_reward

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def no_sideways_scroll(page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"the page is {width}px wide"


@pytest.fixture
def busy_summer(summer):
    """A live campaign with a month's visits, 30 people rewarded and two shared videos."""
    today = timezone.now().date()
    for _ in range(120):
        landing_visit_add(campaign_id=summer.pk, day=today)
    for _ in range(45):
        landing_visit_add(campaign_id=summer.pk, day=today - timedelta(days=3))
    login = summer.rules.get(trigger="tiktok_login")
    share = summer.rules.get(trigger="ugc_share")
    for index in range(30):
        person = participant_create(brand=summer.brand)
        identity = identity_attach(
            participant=person, provider="tiktok", subject=f"e2e-{index}", display_name=f"Creator {index:02d}"
        )
        action_reward(rule=login, identity=identity)
        if index < 2:
            ActionClaim.objects.create(
                campaign=summer,
                brand_id=summer.brand_id,
                rule=share,
                participant=person,
                identity=identity,
                amount=share.reward_amount,
                currency="EUR",
                status=ClaimStatus.PENDING,
                evidence={
                    "video": {"video_id": f"v{index}", "view_count": 1200 + index * 800, "like_count": 96}
                },
            )
    return summer


@pytest.fixture
def patient_page(open_page):
    """Alice's pages wait longer: on a busy machine the overview's fragments take a while."""

    def opened(size="desktop", language="en"):
        return open_page(size, language, timeout=15_000, accept_downloads=True)

    return opened


def overview_loaded(page):
    # Three fragments, each its own request: on a busy machine they take a while to arrive.
    for part in (
        "#overview-funnel .funnel-bars",
        "#chart-visits svg.chart-svg",
        "#chart-reach svg.chart-svg",
    ):
        page.locator(part).wait_for(timeout=60_000)


@pytest.mark.parametrize(("size", "language"), [("desktop", "en"), ("phone", "de")])
def test_the_overview_shows_what_the_money_bought(
    live_server, patient_page, screenshot, alice, busy_summer, size, language
):
    page = patient_page(size, language)
    sign_in(page, live_server, alice.email, next_path="/brands/alpaca/")

    overview_loaded(page)

    funnel = page.locator("#overview-funnel")
    visited = "Landing page visits" if language == "en" else "Besuche der Landingpage"
    assert visited in funnel.inner_text()
    assert "165" in funnel.inner_text()  # visits of the 30 days
    assert "30" in funnel.inner_text()  # people who started and were verified
    cost = "Cost per verified action" if language == "en" else "Kosten pro bestätigter Aktion"
    assert cost in funnel.inner_text()
    reach = page.locator("#overview-reach")
    assert ("3,200" if language == "en" else "3.200") in reach.inner_text()  # views of the two videos
    assert "Dr " not in page.locator("main").inner_text()  # the ledger is finance's page
    # The values are there as text too: the table behind each chart opens.
    page.locator("#chart-visits summary").click()
    assert "120" in page.locator("#chart-visits table").inner_text()
    # and on hover (an SVG title on each bar)
    assert page.locator("#chart-visits rect title").count() == 30
    no_serious_violations(page)
    if size == "phone":
        no_sideways_scroll(page)
    screenshot(page, f"marketer-overview-{size}-{language}")
    for part in ("overview-funnel", "overview-traffic", "overview-reach"):
        page.locator(f"#{part}").screenshot(path=str(SCREENSHOTS / f"marketer-{part}-{size}-{language}.png"))


def test_the_overview_by_week_for_one_campaign(live_server, patient_page, screenshot, alice, busy_summer):
    page = patient_page("desktop", "en")
    sign_in(page, live_server, alice.email, next_path="/brands/alpaca/")
    overview_loaded(page)

    page.locator("#id_period").select_option("week")
    page.locator("#id_campaign").select_option(str(busy_summer.pk))
    page.get_by_role("button", name="Show", exact=True).click()
    overview_loaded(page)

    assert "period=week" in page.url
    assert "Week from" in page.locator("#chart-visits table thead").text_content()
    screenshot(page, "marketer-overview-weekly")


def test_the_claims_table_filters_pages_and_downloads(
    live_server, patient_page, screenshot, alice, busy_summer
):
    page = patient_page("desktop", "en")
    sign_in(page, live_server, alice.email, next_path="/brands/alpaca/claims/")

    assert "1\u201325 of 32 rows" in page.locator(".pager").inner_text()
    page.get_by_role("link", name="Next").click()
    page.wait_for_url("**page=2**")
    assert "26\u201332 of 32 rows" in page.locator(".pager").inner_text()

    page.get_by_label("Status").select_option("pending")
    page.get_by_role("button", name="Filter").click()
    page.locator(".pager", has_text="1\u20132 of 2 rows").wait_for()
    assert page.locator("tbody tr").count() == 2
    no_serious_violations(page)
    screenshot(page, "marketer-claims-filtered-desktop-en")

    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download these rows (CSV)").click()
    text = open(download_info.value.path(), encoding="utf-8-sig").read()  # noqa: SIM115
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][:4] == ["Claim", "When", "Campaign", "Step"]
    assert len(rows) == 3 and {row[5] for row in rows[1:]} == {"Pending"}


def test_on_a_phone_the_claims_are_cards_in_german(live_server, patient_page, screenshot, alice, busy_summer):
    page = patient_page("phone", "de")
    sign_in(page, live_server, alice.email, next_path="/brands/alpaca/claims/")

    first = page.locator("tbody tr").first
    assert page.locator("thead").first.bounding_box()["width"] <= 1  # the header row is hidden
    status = first.locator("td[data-label='Status']")
    assert status.is_visible()
    box = status.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390  # status and reward are on screen
    assert first.locator("td[data-label='Belohnung']").is_visible()
    no_sideways_scroll(page)
    no_serious_violations(page)
    screenshot(page, "marketer-claims-phone-de")
    page.locator("tbody tr").first.screenshot(path=str(SCREENSHOTS / "marketer-claims-card-phone-de.png"))


@pytest.mark.parametrize(("size", "language"), [("desktop", "en"), ("phone", "de")])
def test_the_people_and_payouts_tables(
    live_server, patient_page, screenshot, alice, busy_summer, size, language
):
    page = patient_page(size, language)
    sign_in(page, live_server, alice.email, next_path="/brands/alpaca/people/")

    assert "Creator 29" in page.locator("main").inner_text()
    no_serious_violations(page)
    if size == "phone":
        no_sideways_scroll(page)
    screenshot(page, f"marketer-people-{size}-{language}")

    page.goto(f"{live_server.url}/brands/alpaca/payouts/all/")
    no_serious_violations(page)
    screenshot(page, f"marketer-payouts-{size}-{language}")


@pytest.mark.parametrize(("size", "language"), [("desktop", "en"), ("phone", "de")])
def test_the_campaign_page_draws_its_budget(
    live_server, patient_page, screenshot, alice, busy_summer, size, language
):
    page = patient_page(size, language)
    sign_in(page, live_server, alice.email, next_path=f"/brands/alpaca/campaigns/{busy_summer.pk}/")

    page.locator("#chart-budget svg.chart-svg").wait_for()
    assert page.locator("#chart-budget svg.chart-svg text").count() >= 4  # axis labels: amounts and dates
    assert "EUR" in page.locator("#chart-budget figcaption").inner_text()
    no_serious_violations(page)
    if size == "phone":
        no_sideways_scroll(page)
    screenshot(page, f"marketer-campaign-{size}-{language}")
    page.locator("#live").screenshot(
        path=str(SCREENSHOTS / f"marketer-campaign-charts-{size}-{language}.png")
    )


def test_a_new_brand_is_offered_its_first_step(live_server, patient_page, screenshot, alice, alpaca):
    page = patient_page("phone", "en")
    sign_in(page, live_server, alice.email, next_path="/brands/alpaca/")

    assert page.get_by_role("link", name="Create your first campaign").is_visible()
    no_serious_violations(page)
    screenshot(page, "marketer-overview-empty-phone-en")
