"""Pat's browser is Pat's participant through a signed cookie: set at the first step, unforgeable,
too old after the session age, and never another brand's."""

import time

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from payouts.models import PayeeSubmission
from tests.conftest import rewarded_in_browser
from tests.payouts.test_payee_details import GOOD
from verification.models import Participant
from verification.sessions import COOKIE, participant_cookie_value, participants_from_cookie

pytestmark = pytest.mark.django_db

REFUSED = "Complete at least one step above first"


def send_details(client, campaign):
    return client.post(reverse("payouts:payee", args=[campaign.slug]), GOOD)


def test_the_first_step_sets_an_httponly_signed_cookie_naming_the_participant(client, make_live_campaign):
    club = make_live_campaign(slug="club", package="whatsapp_reward")

    response = client.post(reverse("verification:whatsapp_start", args=[club.slug]))

    cookie = response.cookies[COOKIE]
    assert cookie["httponly"] and cookie["samesite"] == "Lax"
    assert cookie["max-age"] == settings.SESSION_COOKIE_AGE
    (participant_id,) = participants_from_cookie(cookie.value).values()
    assert Participant.objects.filter(pk=participant_id, brand=club.brand).exists()
    assert "Cookie" in response["Vary"]


def test_a_cookie_changed_to_name_someone_else_is_refused_and_nothing_stored(client, summer):
    pat = rewarded_in_browser(client, summer)
    sam = rewarded_in_browser(Client(), summer, subject="open-id-sam")  # owed a reward too
    genuine = client.cookies[COOKIE].value
    client.cookies[COOKIE] = genuine.replace(f"-{pat.pk}:", f"-{sam.pk}:", 1)  # Pat's signature kept

    response = send_details(client, summer)

    assert response.status_code == 400 and REFUSED in response.content.decode()
    assert not PayeeSubmission.objects.exists()


def test_a_cookie_older_than_the_session_age_names_nobody(client, summer, monkeypatch):
    rewarded_in_browser(client, summer)
    later = time.time() + settings.SESSION_COOKIE_AGE + 1
    monkeypatch.setattr("django.core.signing.time.time", lambda: later)

    response = send_details(client, summer)

    assert response.status_code == 400 and REFUSED in response.content.decode()
    assert not PayeeSubmission.objects.exists()


def test_one_browser_keeps_a_participant_per_brand(client, summer, bison, make_live_campaign):
    pat = rewarded_in_browser(client, summer)
    elsewhere = make_live_campaign(brand=bison, slug="bison-club", package="tiktok_only")
    pat_at_bison = rewarded_in_browser(client, elsewhere, subject="open-id-pat-bison")

    assert participants_from_cookie(client.cookies[COOKIE].value) == {
        summer.brand_id: pat.pk,
        bison.pk: pat_at_bison.pk,
    }
    assert send_details(client, summer).status_code == 302
    assert send_details(client, elsewhere).status_code == 302
    assert participant_cookie_value({1: 2}) != participant_cookie_value({1: 3})
