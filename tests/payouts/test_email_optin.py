"""Pat, who opted in on WhatsApp and earned the reward, is offered Alpaca Coffee's email news on the
reward page: the brand's words for the campaign in Pat's language, a box left unticked, never a
condition of the reward. Nothing is in force until Pat opens the link mailed to the address (double
opt-in); then the consent is recorded with the words shown and the form submission as proof, and Pat
is in the brand's email audience, its export and its CRM sync, until the one-click unsubscribe."""

import re

import pytest
from django.core import signing
from django.urls import reverse

from campaigns.services.consent import consent_wording_save
from payouts.audience.crm import crm_connect, crm_sync
from payouts.audience.email_optin import CONFIRM_SALT
from payouts.audience.selectors import audience_export_rows
from payouts.links import status_page_path
from payouts.models import SandboxCrmProfile
from tests.conftest import SignedInClient
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


# --- As an attacker -------------------------------------------------------------------------------
# A stranger's view of the email double opt-in: someone holding one reward page's link (their own)
# tries to make JoyBack mail a victim's address again and again, to confirm for others, to replay or
# alter the signed link, and to go around CSRF. Each attempt is refused.


VICTIM = "victim@example.org"


@pytest.fixture
def mallory(club):
    """The attacker: a person who earned a reward, so holds their own reward page's link."""
    return audience_person(campaign=club, wa_id="4915100000666")


def _ask(client, club, person, *, email=VICTIM, address="203.0.113.9", capture=None):
    wording = club.consent_wordings.get(channel="email", language="en")
    body = {"campaign": club.pk, "wording": wording.pk, "email": email, "agree": "yes"}
    url = reverse("payouts:email_optin", args=[person.participant.token])
    with capture(execute=True):
        return client.post(url, body, REMOTE_ADDR=address)


def _mailed_link(mail) -> str:
    return re.search(r"https?://\S+/email/confirm/\S+/", mail.body).group(0).split("testserver")[-1]


# --- Floods ----------------------------------------------------------------------------------------


def test_one_reward_link_cannot_flood_a_strangers_mailbox_from_many_addresses(
    client, club, mallory, mailoutbox, django_capture_on_commit_callbacks
):
    """Mail bombing: the only limit is 5 a minute per client address. An attacker with any reward
    link and a handful of addresses (an IPv6 /64 is 2^64 of them) makes JoyBack, under the brand's
    name, mail the same victim without end; nothing counts per reward page or per recipient."""
    for n in range(12):
        _ask(client, club, mallory, address=f"198.51.100.{n + 1}", capture=django_capture_on_commit_callbacks)

    to_victim = [m for m in mailoutbox if m.to == [VICTIM]]
    assert len(to_victim) <= 3, f"{len(to_victim)} confirmation mails sent to one address that never asked"


def test_one_reward_link_cannot_mail_hundreds_of_addresses(
    client, club, mallory, mailoutbox, django_capture_on_commit_callbacks
):
    """Spam relay: one reward page asks for confirmations to any number of different addresses
    (each a mail from JoyBack's domain, with the brand's name), limited only per client address."""
    for n in range(12):
        _ask(
            client,
            club,
            mallory,
            email=f"target{n}@example.org",
            address=f"2001:db8::{n + 1:x}",
            capture=django_capture_on_commit_callbacks,
        )

    assert len(mailoutbox) <= 3, f"one reward page sent confirmation mails to {len(mailoutbox)} addresses"


def test_ipv6_neighbours_share_the_opt_in_limit(
    client, club, mallory, mailoutbox, django_capture_on_commit_callbacks
):
    """Addresses of one IPv6 /64 are one machine's (one customer's prefix): counting each address
    apart lets one host send without limit."""
    codes = [
        _ask(
            client,
            club,
            mallory,
            address=f"2001:db8:0:1::{n + 1:x}",
            capture=django_capture_on_commit_callbacks,
        ).status_code
        for n in range(8)
    ]
    assert 429 in codes, f"8 requests from one /64 all answered {set(codes)}"


# --- Links and forms -------------------------------------------------------------------------------


def test_a_get_of_the_link_records_nothing_and_the_post_needs_csrf(
    club, mallory, mailoutbox, django_capture_on_commit_callbacks
):
    browser = SignedInClient(enforce_csrf_checks=True)
    page = browser.get(reverse("payouts:status_page", args=[club.slug, mallory.participant.token]))
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode()).group(1)
    wording = club.consent_wordings.get(channel="email", language="en")
    url = reverse("payouts:email_optin", args=[mallory.participant.token])
    body = {"campaign": club.pk, "wording": wording.pk, "email": "m@example.org", "agree": "yes"}
    assert SignedInClient(enforce_csrf_checks=True).post(url, body).status_code == 403
    with django_capture_on_commit_callbacks(execute=True):
        assert browser.post(url, {**body, "csrfmiddlewaretoken": token}).status_code == 200
    link = _mailed_link(mailoutbox[-1])

    assert browser.get(link).status_code == 200
    assert SignedInClient(enforce_csrf_checks=True).post(link).status_code == 403
    assert not ConsentRecord.objects.filter(channel="email").exists()


def test_an_altered_or_reused_link_records_nothing_more(
    client, club, mallory, mailoutbox, make_live_campaign, bison, django_capture_on_commit_callbacks
):
    _ask(client, club, mallory, email="m@example.org", capture=django_capture_on_commit_callbacks)
    link = _mailed_link(mailoutbox[-1])
    token = link.rstrip("/").rsplit("/", 1)[1]
    found = signing.loads(token, salt=CONFIRM_SALT)

    # The payload is readable but not writable: another address, person or brand's campaign.
    other_brand = make_live_campaign(slug="bikes", brand=bison, package="whatsapp_reward")
    for change in ({"e": VICTIM}, {"p": found["p"] + 1}, {"c": other_brand.pk}):
        forged = signing.dumps({**found, **change}, salt="another-salt", compress=True)
        assert client.post(reverse("payouts:email_optin_confirm", args=[forged])).status_code == 400
        tampered = signing.dumps({**found, **change}, compress=True)  # the right key, no salt
        assert client.post(reverse("payouts:email_optin_confirm", args=[tampered])).status_code == 400
    assert not ConsentRecord.objects.filter(channel="email").exists()

    # Confirmed once; after the one-click unsubscribe the same link does not sign the person up again.
    assert client.post(link).status_code == 200
    client.post(
        reverse("verification:unsubscribe", args=[unsubscribe_token(participant_id=mallory.participant_id)]),
        {"List-Unsubscribe": "One-Click"},
    )
    client.post(link)
    assert not consent_in_force(participant_id=mallory.participant_id, channel="email")


def test_another_brands_wording_or_a_wrong_reward_link_is_refused(
    client, club, mallory, make_live_campaign, bison, bob, mailoutbox
):
    other = make_live_campaign(slug="bikes", brand=bison, package="whatsapp_reward")
    consent_wording_save(
        campaign=other,
        channel="email",
        language="en",
        text="I agree that Bison Bikes sends me news by email.",
        user=bob,
    )
    theirs = other.consent_wordings.get(channel="email")
    url = reverse("payouts:email_optin", args=[mallory.participant.token])
    body = {"campaign": club.pk, "wording": theirs.pk, "email": "m@example.org", "agree": "yes"}
    assert client.post(url, body).status_code == 400
    wrong = reverse("payouts:email_optin", args=["not-a-token"])
    assert (
        client.post(
            wrong, {**body, "wording": club.consent_wordings.get(channel="email", language="en").pk}
        ).status_code
        == 404
    )
    assert mailoutbox == []
