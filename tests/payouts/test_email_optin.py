"""Pat, who opted in on WhatsApp and earned the reward, is offered Alpaca Coffee's email news on the
reward page: the brand's words for the campaign in Pat's language, a box left unticked, never a
condition of the reward. Nothing is in force until Pat opens the link mailed to the address (double
opt-in); then the consent is recorded with the words shown and the form submission as proof, and Pat
is in the brand's email audience, its export and its CRM sync, until the one-click unsubscribe."""

import re

import pytest
from django.urls import reverse

from campaigns.services.consent import consent_wording_save
from payouts.audience.crm import crm_connect, crm_sync
from payouts.audience.selectors import audience_export_rows
from payouts.links import status_page_path
from payouts.models import SandboxCrmProfile
from tests.payouts.audience_helpers import audience_person
from verification.consent_views import unsubscribe_token
from verification.models import ConsentRecord
from verification.selectors import consent_in_force, consents_current

pytestmark = pytest.mark.django_db
WORDS = {
    "en": "I agree that Alpaca Coffee sends me news and offers by email.",
    "de": "Ich bin einverstanden, dass Alpaca Coffee mir Neuigkeiten und Angebote per E-Mail sendet.",
}


@pytest.fixture
def club(make_live_campaign, alice):
    campaign = make_live_campaign(slug="club", package="whatsapp_reward")
    for language, text in WORDS.items():
        consent_wording_save(campaign=campaign, channel="email", language=language, text=text, user=alice)
    return campaign


@pytest.fixture
def pat(club):
    return audience_person(campaign=club, wa_id="4915100000001")


def _page(client, club, pat, language="en"):
    url = status_page_path(slug=club.slug, token=pat.participant.token)
    return client.get(url, HTTP_ACCEPT_LANGUAGE=language).content.decode()


@pytest.fixture
def ask(client, club, pat, django_capture_on_commit_callbacks):
    def post(**extra):
        wording = club.consent_wordings.filter(channel="email", language="en").get()
        body = {
            "campaign": club.pk,
            "wording": wording.pk,
            "email": "Pat@Example.com",
            "agree": "yes",
            **extra,
        }
        with django_capture_on_commit_callbacks(execute=True):  # the mail goes after commit
            return client.post(reverse("payouts:email_optin", args=[pat.participant.token]), body)

    return post


def _link(mailoutbox) -> str:
    return re.search(r"https?://\S+/email/confirm/\S+/", mailoutbox[-1].body).group(0).split("testserver")[-1]


def test_the_reward_page_offers_the_brands_words_in_the_persons_language_unticked(client, club, pat):
    page = _page(client, club, pat, "de")
    assert WORDS["de"] in page
    box = re.search(r'<input type="checkbox" name="agree"[^>]*>', page).group(0)
    assert "checked" not in box
    assert "your reward is the same either way" in _page(client, club, pat).lower()


def test_nothing_is_in_force_until_the_mailed_link_is_confirmed(client, ask, pat, mailoutbox):
    response = ask()
    assert response.status_code == 200 and "pat@example.com" in response.content.decode()
    assert [m.to for m in mailoutbox] == [["pat@example.com"]]
    assert not consent_in_force(participant_id=pat.participant_id, channel="email")

    link = _link(mailoutbox)
    assert WORDS["en"] in client.get(link).content.decode()  # a scanner's GET confirms nothing
    assert not consent_in_force(participant_id=pat.participant_id, channel="email")

    assert client.post(link).status_code == 200
    record = ConsentRecord.objects.get(channel="email")
    assert (record.action, record.source, record.text, record.language) == (
        "given",
        "form",
        WORDS["en"],
        "en",
    )
    assert record.identity.subject == "pat@example.com" and record.proof.startswith("form:")
    assert record.wording.version == 1 and record.brand_name == "Alpaca Coffee"
    client.post(link)  # a second click records nothing new
    assert ConsentRecord.objects.filter(channel="email").count() == 1


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"agree": ""}, "Tick the box"),
        ({"email": "not-an-address"}, "valid email"),
        ({"wording": "0"}, "no email"),
    ],
)
def test_an_unticked_box_a_bad_address_or_other_words_change_nothing(ask, mailoutbox, change, words):
    response = ask(**change)
    assert response.status_code == 400 and words in response.content.decode()
    assert mailoutbox == [] and not ConsentRecord.objects.filter(channel="email").exists()


def test_a_forged_link_is_refused(client, ask, mailoutbox):
    ask()
    forged = _link(mailoutbox)[:-6] + "xxxxx/"
    assert client.post(forged).status_code == 400
    assert not ConsentRecord.objects.filter(channel="email").exists()


def test_the_confirmed_person_is_in_the_export_and_the_crm_sync_and_unsubscribes_in_one_click(
    client, club, pat, alice, ask, mailoutbox
):
    ask()
    client.post(_link(mailoutbox))

    assert {r.channel for r in consents_current(brand=club.brand)} == {"whatsapp", "email"}
    exported = audience_export_rows(brand=club.brand, filters={})
    assert "pat@example.com" in {row.identity.subject for row in exported}
    key = "0123456789abcdef0123456789abcdef-us21"
    connection = crm_connect(
        brand=club.brand, user=alice, kind="mailchimp", api_key=key, list_id="a1b2c3d4e5"
    )
    assert crm_sync(connection_id=connection.pk) == "synced"
    assert SandboxCrmProfile.objects.get().email == "pat@example.com"

    token = unsubscribe_token(participant_id=pat.participant_id)
    client.post(reverse("verification:unsubscribe", args=[token]), {"List-Unsubscribe": "One-Click"})
    assert not consent_in_force(participant_id=pat.participant_id, channel="email")
    assert consent_in_force(participant_id=pat.participant_id, channel="whatsapp")


def test_another_brands_campaign_cannot_be_used_to_opt_in(client, club, pat, make_live_campaign, bison):
    other = make_live_campaign(slug="bikes", brand=bison, package="whatsapp_reward")
    response = client.post(
        reverse("payouts:email_optin", args=[pat.participant.token]),
        {"campaign": other.pk, "wording": 1, "email": "pat@example.com", "agree": "yes"},
    )
    assert response.status_code == 404
