"""A person paid for a video in each of Germany, Spain, the UK and the US gives their tax details
where their status page asks for them, in their own language: the TIN their country issues is
checked (a wrong one refused, saying what it should look like), and the payout's hold is lifted."""

import pytest

from campaigns.services.campaigns import campaign_create, campaign_transition
from campaigns.services.funding import campaign_fund
from payouts.links import status_page_path
from payouts.tax.selectors import tax_details_needed, tax_identity_read, tax_profile_current
from tests.conftest import fund
from tests.e2e.conftest import no_serious_violations
from verification.services.participants import identity_attach, participant_create
from verification.services.rewards import action_reward

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PEOPLE = {
    # country: (browser language, currency, wrong TIN, right TIN, what the page says, stored TIN, kind)
    "DE": ("de", "EUR", "36574261800", "36 574 261 809", "Deine Steuerdaten", "36574261809", "de_idnr"),
    "ES": ("es", "EUR", "X2482300A", "X-2482300W", "Tus datos fiscales", "X2482300W", "es_nie"),
    "GB": ("en", "GBP", "QQ 12 34 56 C", "AB 12 34 56 C", "Your tax details", "AB123456C", "gb_nino"),
    "US": ("en", "USD", "078-05-1120", "536-90-4399", "Your tax details", "536904399", "us_ssn"),
}
ADDRESSES = {
    "DE": ("Torstraße 1", "10119", "Berlin", ""),
    "ES": ("Calle de Alcalá 42", "28014", "Madrid", ""),
    "GB": ("10 Downing Street", "SW1A 2AA", "London", ""),
    "US": ("350 Fifth Avenue", "10118", "New York", "NY"),
}


def video_rewarded(brand, country, currency):
    """A person who made a video for the brand's campaign in their country, rewarded for it."""
    slug = f"creators-{country.lower()}"
    fund(brand, 100_00, currency, reference=f"E2E-TAX-{country}")
    campaign = campaign_create(
        brand=brand,
        name=f"Creators {country}",
        slug=slug,
        package="tiktok_only",
        currency=currency,
        countries=[country],
        languages=["en"],
    )
    campaign_fund(campaign=campaign, amount=100_00)
    campaign = campaign_transition(campaign=campaign, to="live")
    person = participant_create(brand=brand)
    identity = identity_attach(
        participant=person, provider="tiktok", subject=f"open-id-{slug}", display_name="Pat"
    )
    action_reward(rule=campaign.rules.get(trigger="tiktok_login"), identity=identity)
    action_reward(rule=campaign.rules.get(trigger="ugc_share"), identity=identity)
    return campaign, person


@pytest.mark.parametrize("country", list(PEOPLE))
def test_a_creator_gives_their_tax_details_in_their_language(
    live_server, open_page, screenshot, alpaca, country
):
    language, currency, wrong, right, heading, stored, kind = PEOPLE[country]
    campaign, person = video_rewarded(alpaca, country, currency)
    assert tax_details_needed(participant_id=person.pk)
    page = open_page("phone", language)
    page.goto(live_server.url + status_page_path(slug=campaign.slug, token=person.token))

    notice = page.locator("#tax-needed")
    notice.wait_for()
    screenshot(page, f"70-tax-{country.lower()}-status-asks")
    notice.get_by_role("link").click()
    page.get_by_role("heading", name=heading).wait_for()

    page.locator("select[name=residence_country]").select_option(country)
    # The form is drawn again for the country: its TIN's name, and a US address's state.
    chosen = page.locator(f"select[name=residence_country] option[value={country}][selected]")
    chosen.wait_for(state="attached")
    line1, postal, city, state = ADDRESSES[country]
    page.locator("input[name=legal_name]").fill("Pat Example")
    page.locator("input[name=birth_date]").fill("1994-03-02")
    page.locator("input[name=address_line1]").fill(line1)
    page.locator("input[name=postal_code]").fill(postal)
    page.locator("input[name=city]").fill(city)
    if state:
        page.locator("input[name=region]").fill(state)
    page.locator("input[name=tin]").fill(wrong)
    page.locator("input[name=certify]").check()
    page.locator("button[type=submit]").click()

    page.locator(".error-summary").wait_for()
    assert page.evaluate("document.activeElement.classList.contains('error-summary')")
    assert tax_profile_current(participant_id=person.pk) is None
    screenshot(page, f"71-tax-{country.lower()}-wrong-tin")
    no_serious_violations(page)

    page.locator("input[name=tin]").fill(right)
    if not page.locator("input[name=certify]").is_checked():
        page.locator("input[name=certify]").check()
    screenshot(page, f"72-tax-{country.lower()}-form")
    page.locator("button[type=submit]").click()
    page.locator("#tax-saved").wait_for()
    screenshot(page, f"73-tax-{country.lower()}-saved")

    identity = tax_identity_read(profile=tax_profile_current(participant_id=person.pk))
    assert (identity.tin, identity.tin_kind, identity.residence_country) == (stored, kind, country)
    assert identity.us_status == ("w9" if country == "US" else "w8ben")
    assert identity.language == ("de" if language == "de" else "es" if language == "es" else "en")
    assert not tax_details_needed(participant_id=person.pk)
    assert page.locator("#tax-needed").count() == 0
