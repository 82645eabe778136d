"""A brand member (Vic, who has no second factor yet) signs in with email and password, with a second
factor once they enable one."""

import pytest
from allauth.mfa.totp.internal.auth import (
    TOTP,
    format_hotp_value,
    generate_totp_secret,
    hotp_value,
    yield_hotp_counters_from_time,
)
from django.urls import reverse

from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db


def sign_in(client, email, password=PASSWORD):
    return client.post(reverse("account_login"), {"login": email, "password": password})


def test_a_member_signs_in_and_lands_on_their_brand_dashboard(client, vic, alpaca):
    response = sign_in(client, "vic@alpaca.example")
    assert response.status_code == 302

    response = client.get(response["Location"], follow=True)

    assert response.request["PATH_INFO"] == reverse("brand_dashboard", args=["alpaca"])
    assert b"Alpaca Coffee" in response.content
    assert b"Available funding" in response.content or b"No money yet" in response.content


def test_the_email_is_case_insensitive(client, vic, alpaca):
    assert sign_in(client, "ALICE@Alpaca.Example").status_code == 302


def test_a_wrong_password_is_refused_with_a_message(client, vic):
    response = sign_in(client, "vic@alpaca.example", "not the password")

    assert response.status_code == 200
    assert b"not correct" in response.content
    assert "_auth_user_id" not in client.session


def test_with_totp_enabled_the_password_alone_is_not_enough(client, vic, alpaca):
    secret = generate_totp_secret()
    TOTP.activate(vic, secret)

    response = sign_in(client, "vic@alpaca.example")
    assert response["Location"] == reverse("mfa_authenticate")
    assert "_auth_user_id" not in client.session
    assert client.get(reverse("brand_dashboard", args=["alpaca"])).status_code == 302

    wrong = client.post(reverse("mfa_authenticate"), {"code": "000000"})
    assert wrong.status_code == 200 and "_auth_user_id" not in client.session

    counters = list(yield_hotp_counters_from_time())
    counter = counters[len(counters) // 2]  # the current period, whatever the tolerance
    code = format_hotp_value(hotp_value(secret, counter))
    response = client.post(reverse("mfa_authenticate"), {"code": code})

    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(vic.pk)


def test_a_member_can_open_the_two_factor_settings(client, vic, alpaca):
    client.force_login(vic)

    response = client.get(reverse("mfa_index"))

    assert response.status_code == 200
    assert b"Authenticator App" in response.content
