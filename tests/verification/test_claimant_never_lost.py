"""Pat never loses what was typed, sees each error where the form is, and can finish the demo."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
from django.test import Client
from django.urls import reverse

from payouts.management.commands.demo_payouts import PEOPLE
from payouts.models import PayeeAccount
from tests.conftest import rewarded_in_browser
from tests.verification.test_engagement import DISCLOSED, counts, share, steps_html
from tests.verification.test_tiktok_login import authorize
from tests.verification.test_whatsapp_optin import code_for, deliver  # noqa: F401 - a fixture
from verification.models import ActionClaim, SandboxTikTokUser
from verification.sandbox.tiktok.display_api import video_post, video_share_url
from verification.sandbox.whatsapp import message_envelope

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}


@pytest.fixture
def club(make_live_campaign):
    return make_live_campaign(slug="club", package="whatsapp_reward")


@pytest.fixture
def video(client, summer):
    """Pat connected TikTok in this browser and posted a disclosed video with 10 views."""
    client.get(authorize(client, summer.slug, display_name="Pat Creator"))
    return video_post(user=SandboxTikTokUser.objects.get(display_name="Pat Creator"), caption=DISCLOSED)


# 1. Errors where people look, and nothing typed lost


def test_an_empty_bank_form_sent_by_htmx_answers_with_the_errors_in_place(client, summer):
    rewarded_in_browser(client, summer)

    response = client.post(reverse("payouts:payee", args=[summer.slug]), {}, headers=HTMX)

    html = response.content.decode()
    assert response.status_code == 400
    assert "<html" not in html  # the fragment, swapped into the page (the htmx-config meta lets 400 through)
    assert "Please check what is marked below" in html
    for said in (
        "Enter your name as your bank knows it.",
        "Give an email address or a WhatsApp number",
        "Enter your IBAN.",
        "Please agree to the terms",
    ):
        assert said in html  # every problem at once, each next to its field
    assert 'aria-describedby="id_name-error"' in html
    assert not PayeeAccount.objects.exists()


def test_a_missing_consent_without_javascript_shows_the_whole_page_with_what_was_typed(client, summer):
    rewarded_in_browser(client, summer)

    response = client.post(
        reverse("payouts:payee", args=[summer.slug]),
        {"name": "Pat Example", "email": "pat@example.com", "iban": "DE40370400440888013000"},
    )

    html = response.content.decode()
    assert response.status_code == 400
    assert "<html" in html and 'value="Pat Example"' in html and 'value="DE40370400440888013000"' in html
    assert 'id="consent-error">Please agree to the terms' in html
    assert not PayeeAccount.objects.exists()


@pytest.mark.parametrize("template", ["base.html", "public_base.html"])
def test_every_page_lets_htmx_show_refused_forms_and_names_its_icon(template):
    html = (Path(settings.BASE_DIR) / "templates" / template).read_text()

    config = re.search(r'<meta name="htmx-config" content=\'([^\']+)\'', html).group(1)
    assert '{"code": "(400|409|422|429)", "swap": true, "error": false}' in config
    assert 'rel="icon"' in html and finders.find("favicon.svg")


def test_the_favicon_address_browsers_guess_is_answered(client):
    response = client.get("/favicon.ico")

    assert response.status_code == 301 and response["Location"].endswith("favicon.svg")


def test_while_waiting_for_whatsapp_only_that_step_polls(client, club):
    code_for(client, club)

    html = client.get(reverse("verification:steps", args=[club.slug]), headers=HTMX).content.decode()

    (poller,) = re.findall(r"<div hx-get=[^>]*every 3s[^>]*>", html)
    assert 'hx-select="#step-whatsapp_optin"' in poller and 'hx-target="#step-whatsapp_optin"' in poller
    assert 'id="step-whatsapp_optin"' in html


def test_the_message_arriving_refreshes_the_rest_of_the_page_once(client, club, deliver):  # noqa: F811
    code = code_for(client, club)
    url = reverse("verification:steps", args=[club.slug]) + "?waiting=optin"
    waiting = client.get(url, headers=HTMX)

    deliver(client, message_envelope(wa_id="4915123456789", name="Pat", text=f"JOY {code}"))
    arrived = client.get(url, headers=HTMX)

    assert "HX-Trigger" not in waiting
    assert arrived["HX-Trigger"] == "rewards-changed"
    assert "every 3s" not in arrived.content.decode()


def test_a_typed_video_link_is_kept_when_the_steps_reload(client, summer, video):
    html = steps_html(client, summer)

    form = re.search(r'<form [^>]*id="share-form-ugc_share"[^>]*>', html).group(0)
    assert "hx-preserve" in form


def test_without_javascript_the_steps_are_a_page_of_their_own(client, summer, video):
    page = client.get(reverse("verification:steps", args=[summer.slug]))
    landing = client.get(reverse("campaign_landing", args=[summer.slug])).content.decode()

    html = page.content.decode()
    assert "<html" in html and 'name="from" value="page"' in html
    assert reverse("verification:steps", args=[summer.slug]) in landing
    assert "{#" not in landing and "{#" not in html  # no template comment leaks into the page
    response = client.post(
        reverse("verification:share_submit", args=[summer.slug]),
        {"video_url": "https://example.com/x", "trigger": "ugc_share", "from": "page"},
    )
    assert response["Location"] == reverse("verification:steps", args=[summer.slug])
    assert "Paste the link of your TikTok video" in client.get(response["Location"]).content.decode()


# 8. The demo can be finished


def close_window(campaign) -> str:
    return reverse("verification:share_window_close", args=[campaign.slug])


def test_the_share_step_links_the_sandbox_studio_and_back(client, summer, video):
    html = steps_html(client, summer)

    assert reverse("verification:sandbox_tiktok_studio") + "?next=" in html
    studio = client.get(reverse("verification:sandbox_tiktok_studio"), {"next": f"/c/{summer.slug}/#steps"})
    assert f'href="/c/{summer.slug}/#steps"' in studio.content.decode()
    elsewhere = client.get(reverse("verification:sandbox_tiktok_studio"), {"next": "https://evil.example/"})
    assert 'href="https://evil.example/' not in elsewhere.content.decode()
    assert "Back to the campaign" not in elsewhere.content.decode()


def test_the_sandbox_closes_the_window_now_and_pays(client, summer, video):
    share(client, summer, video_share_url(video))
    claim = ActionClaim.objects.get(rule__trigger="ugc_share")
    assert "Close the window now" in steps_html(client, summer)
    counts(video, view_count=900, like_count=80)

    client.post(close_window(summer), {"claim": claim.pk})

    claim.refresh_from_db()
    assert (claim.status, claim.reason) == ("approved", "thresholds_met")
    assert "your reward is confirmed" in steps_html(client, summer)


def test_outside_the_sandbox_the_window_cannot_be_moved(client, summer, video, settings):
    share(client, summer, video_share_url(video))
    claim = ActionClaim.objects.get(rule__trigger="ugc_share")
    settings.SANDBOX = False

    response = client.post(close_window(summer), {"claim": claim.pk})

    claim.refresh_from_db()
    assert response.status_code == 404
    assert (claim.status, claim.check_at > claim.created_at) == ("pending", True)
    assert "Close the window now" not in steps_html(client, summer)


def test_another_browser_cannot_close_pats_window(client, summer, video):
    share(client, summer, video_share_url(video))
    claim = ActionClaim.objects.get(rule__trigger="ugc_share")
    response = Client().post(close_window(summer), {"claim": claim.pk})

    assert response.status_code == 404
    assert ActionClaim.objects.get(pk=claim.pk).status == "pending"


def test_no_demo_account_is_one_a_visitor_types():
    readme = (Path(settings.BASE_DIR) / "README.md").read_text()
    form = (Path(settings.BASE_DIR) / "templates/payouts/_payee_form.html").read_text()
    placeholders = {"".join(p.split()) for p in re.findall(r'placeholder="(DE[0-9 ]+)"', form)}
    typed = set(re.findall(r"\bDE\d{20}\b", readme)) | placeholders

    assert placeholders
    assert typed.isdisjoint(iban for _, iban in PEOPLE)


# 9. The steps a page shows fit its package


@pytest.mark.parametrize("package", ["cashback", "whatsapp_reward"])
def test_pages_without_a_post_give_no_posting_instructions(client, make_live_campaign, package):
    campaign = make_live_campaign(slug=f"no-post-{package}".replace("_", "-"), package=package)

    html = client.get(reverse("campaign_landing", args=[campaign.slug])).content.decode()

    assert "Paid partnership" not in html and "start your caption" not in html.lower()


def test_the_cashback_page_says_how_the_reward_comes_instead_of_asking_for_a_step(client, make_live_campaign):
    campaign = make_live_campaign(slug="cashback-week", package="cashback")

    html = client.get(reverse("payouts:payee", args=[campaign.slug]), headers=HTMX).content.decode()

    assert "once Alpaca Coffee confirms your purchase" in html
    assert "Complete a step above first" not in html


def test_steps_are_named_for_people_not_by_their_code(client, summer):
    html = steps_html(client, summer)

    assert "Post a video about it on TikTok" in html and "UGC share" not in html
    # What the TikTok consent screen asks for is what the step says we read.
    assert "views, likes and comments" in html and "only read your public profile name" not in html
