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


def test_the_owner_is_told_in_the_brands_language_when_staff_verify_the_brand(
    client, make_user, django_capture_on_commit_callbacks
):
    from campaigns.services.brands import brand_legal_details_save, brand_verify
    from tests.conftest import totp_enable

    nora = make_user("nora@example.com")
    brand = brand_create(name="Nora Noodles", slug="nora", owner=nora, currency="EUR")
    EmailAddress.objects.create(user=nora, email=nora.email, verified=True, primary=True)
    brand_legal_details_save(brand=brand, legal_name="Nora GmbH", registration_number="HRB 1", country="DE")
    sam = totp_enable(make_user("sam@joyback.example", is_staff=True, is_superuser=True))

    with django_capture_on_commit_callbacks(execute=True):
        brand_verify(brand=brand, actor=sam)

    (message,) = [m for m in mail.outbox if m.subject == "Nora Noodles ist verifiziert"]
    assert message.to == ["nora@example.com"]
    # Funding opens once the payment provider verified the company too: the mail says so.
    assert "/brands/nora/" in message.body and "sobald auch unser Zahlungsdienst" in message.body
    # The payment provider, onboarding the brand after staff, verified it too (the sandbox's, at
    # once): told in the same language.
    (provider,) = [m for m in mail.outbox if m.subject == "Adyen hat Nora Noodles verifiziert"]
    assert "/brands/nora/funding/" in provider.body


def test_owners_and_finance_are_told_once_when_a_deposit_is_booked(
    alpaca, alice, fiona, django_capture_on_commit_callbacks
):
    from payouts.funding.deposits import brand_deposit_book

    for _replay in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            brand_deposit_book(brand=alpaca, amount=1_234_50, currency="EUR", bank_reference="JB-ALPACA-77")

    told = [
        m for m in mail.outbox if "arrived for Alpaca Coffee" in m.subject or "Alpaca Coffee" in m.subject
    ]
    assert sorted(m.to[0] for m in told) == sorted([alice.email, fiona.email])
    (to_alice,) = [m for m in told if m.to == [alice.email]]
    assert "1.234,50\xa0€" in to_alice.subject  # a German brand's people read German
    assert "JB-ALPACA-77" in to_alice.body and "(Mitteleuropäische " in to_alice.body
