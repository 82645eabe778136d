"""What a brand's people are told by mail: a sign-up confirmation that names the product, the brand
verified by staff, a deposit booked; and the dashboard stops asking for the confirmation once given."""

import re

import pytest
from allauth.account.models import EmailAddress
from django.core import mail
from django.urls import reverse

from campaigns.services.brands import brand_create

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-and-unusual-passphrase-42"


def test_the_sign_up_mail_names_joyback_not_the_host(client):
    signed_up = client.post(
        reverse("account_signup"),
        {"email": "nora@example.com", "password1": PASSWORD, "password2": PASSWORD},
        headers={"Accept-Language": "de"},
    )
    assert signed_up.status_code == 302

    (message,) = mail.outbox
    text = message.subject + message.body
    assert message.subject == "JoyBack: Bestätige deine E-Mail-Adresse"
    assert "Hallo von JoyBack" in message.body and "Dein JoyBack-Team" in message.body
    assert "127.0.0.1" not in text and "example.com!" not in text and "Hello from" not in text
    link = re.search(r"http://\S+/accounts/confirm-email/\S+/", message.body)[0]
    assert client.get(link.replace("http://testserver", "")).status_code in (200, 302)


def test_the_dashboard_stops_asking_for_the_confirmation_once_given(client, make_user):
    nora = make_user("nora@example.com")
    brand_create(name="Nora Noodles", slug="nora", owner=nora, currency="EUR")
    client.force_login(nora)
    ask = "Confirm your email address with the link we sent"

    assert ask in client.get(reverse("brand_dashboard", args=["nora"])).content.decode()

    EmailAddress.objects.create(user=nora, email=nora.email, verified=True, primary=True)
    assert ask not in client.get(reverse("brand_dashboard", args=["nora"])).content.decode()
