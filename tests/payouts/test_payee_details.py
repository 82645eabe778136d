"""Pat gives a name, a contact and bank details; bad input is refused with a message, nothing stored."""

import pytest
from django.core import mail
from django.db import connection
from django.test import Client
from django.urls import reverse

from payouts.models import PayeeAccount
from tests.conftest import rewarded_in_browser
from tests.payouts.conftest import submissions_process

pytestmark = pytest.mark.django_db

GOOD = {
    "name": "Pat Example",
    "email": "pat@example.com",
    "phone": "",
    "iban": "DE89 3704 0044 0532 0130 00",
    "consent": "on",
}


def submit(client, campaign, **changes):
    response = client.post(reverse("payouts:payee", args=[campaign.slug]), GOOD | changes)
    submissions_process()
    return response


def test_good_details_are_stored_encrypted_and_lead_to_the_status_page(client, summer):
    person = rewarded_in_browser(client, summer)

    response = submit(client, summer)

    assert response.status_code == 302
    assert response["Location"] == reverse("payouts:status_page", args=[summer.slug, person.token])
    payee = PayeeAccount.objects.get()
    assert payee.holder_name == "Pat Example" and payee.account.iban == "DE89370400440532013000"
    assert (payee.rail, payee.bank_name, payee.account_masked) == ("sepa", "Commerzbank", "DE•• •••• 3000")
    with connection.cursor() as cursor:
        cursor.execute("SELECT holder_name, account, email FROM payouts_payeeaccount")
        raw = " ".join(cursor.fetchone())
    assert "Pat" not in raw and "DE89" not in raw and "example.com" not in raw


def test_good_details_cost_the_claim_one_statement(client, summer, django_assert_num_queries):
    """The claim's busiest page: the details are kept, after every check (the person's claim, their
    brand, no details of theirs on file or waiting), by one statement (payouts.sql)."""
    rewarded_in_browser(client, summer)
    client.get(reverse("payouts:payee", args=[summer.slug]))  # the campaign is cached, as on the form

    with django_assert_num_queries(1):
        response = client.post(reverse("payouts:payee", args=[summer.slug]), GOOD)

    assert response.status_code == 302


def test_the_status_link_is_mailed(client, summer, django_capture_on_commit_callbacks):
    person = rewarded_in_browser(client, summer)

    with django_capture_on_commit_callbacks(execute=True):
        submit(client, summer)

    (message,) = [m for m in mail.outbox if summer.name in m.subject]
    assert message.to == ["pat@example.com"]
    assert f"/c/{summer.slug}/status/{person.token}/" in message.body


def test_the_status_mail_speaks_the_persons_language(client, summer, django_capture_on_commit_callbacks):
    rewarded_in_browser(client, summer)

    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("payouts:payee", args=[summer.slug]), GOOD, headers={"Accept-Language": "de"})

    (message,) = [m for m in mail.outbox if summer.name in m.subject]
    assert "Hallo Pat Example" in message.body


def test_the_status_page_shows_actions_and_the_masked_payout(client, summer):
    person = rewarded_in_browser(client, summer)
    submit(client, summer)

    page = client.get(reverse("payouts:status_page", args=[summer.slug, person.token])).content.decode()
    actions = client.get(reverse("verification:status_actions", args=[person.token])).content.decode()

    assert "DE•• •••• 3000" in page and "DE89370400440532013000" not in page
    assert "Queued for transfer" in page and "€1.00" in page
    assert "Connect your TikTok account" in actions and "Approved" in actions


def test_a_wrong_status_token_is_404(client, summer):
    assert client.get(reverse("payouts:status_page", args=[summer.slug, "nope"])).status_code == 404
    assert client.get(reverse("verification:status_actions", args=["nope"])).status_code == 404


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"iban": "DE89 3704 0044 0532 0130 01"}, "check digits do not match"),
        ({"iban": "DE89 3704 0044 0532 0130"}, "wrong number of characters"),
        ({"iban": "XX89 3704 0044 0532 0130 00"}, "not a country that uses IBANs"),
        ({"iban": "BR15 0000 0000 0000 1093 2840 814P 2"}, "This account is at a bank in Brazil"),
        ({"iban": ""}, "Enter your IBAN"),
        ({"phone": "+49 12", "email": ""}, "not a valid phone number"),
        ({"phone": "hello", "email": ""}, "with its country code"),
        ({"email": "pat@", "phone": ""}, "Enter a valid email address"),
        ({"email": "", "phone": ""}, "Give an email address or a WhatsApp number"),
        ({"consent": ""}, "Please agree to the terms"),
        ({"name": ""}, "Enter your name as your bank knows it"),
        ({"name": "P" * 141}, "at most 140 characters"),
    ],
)
def test_bad_details_are_refused_with_a_clear_message_and_nothing_stored(client, summer, changes, message):
    rewarded_in_browser(client, summer)

    response = submit(client, summer, **changes)

    assert response.status_code == 400
    assert message in response.content.decode()
    assert not PayeeAccount.objects.exists()


def test_a_script_in_the_name_is_rendered_harmless(client, summer):
    rewarded_in_browser(client, summer)

    response = submit(client, summer, name="<script>alert(1)</script>", iban="DE00")

    body = response.content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


def test_details_without_any_reward_are_refused(client, summer):
    response = submit(client, summer)

    assert response.status_code == 400
    assert "Complete at least one step" in response.content.decode()
    assert not PayeeAccount.objects.exists()


@pytest.mark.parametrize("status", ["paused", "ended"])
def test_a_closed_campaign_takes_no_details(client, summer, status):
    from campaigns.services.campaigns import campaign_transition

    rewarded_in_browser(client, summer)
    campaign_transition(campaign=summer, to=status)

    response = submit(client, summer)

    assert response.status_code in (400, 404)
    assert not PayeeAccount.objects.exists()


def test_a_draft_campaign_has_no_public_page(client, alpaca):
    from campaigns.services.campaigns import campaign_create

    campaign_create(
        brand=alpaca, name="Secret", package="cashback", currency="EUR", countries=["DE"], languages=[]
    )

    assert client.get("/c/secret/").status_code == 404
    assert client.post(reverse("payouts:payee", args=["secret"]), GOOD).status_code == 404


def test_too_many_submissions_from_one_address_are_slowed_down(client, summer):
    rewarded_in_browser(client, summer)
    codes = [submit(client, summer, iban="DE00").status_code for _ in range(12)]

    assert codes[:10] == [400] * 10
    assert codes[10:] == [429, 429]
    response = submit(client, summer)
    assert response.status_code == 429 and response["Retry-After"] == "60"
    assert "Too many attempts" in response.content.decode()
    assert not PayeeAccount.objects.exists()


def test_a_post_without_csrf_token_is_refused(summer):
    strict = Client(enforce_csrf_checks=True)
    rewarded_in_browser(strict, summer)

    response = submit(strict, summer)

    assert response.status_code == 403
    assert not PayeeAccount.objects.exists()


def test_live_iban_feedback_names_the_bank_or_the_problem(client):
    ok = client.post(reverse("payouts:iban_feedback"), {"iban": "DE89370400440532013000"}).content.decode()
    bad = client.post(reverse("payouts:iban_feedback"), {"iban": "DE89370400440532013001"}).content.decode()

    assert "Commerzbank" in ok and "COBADEFFXXX" in ok
    assert "check digits do not match" in bad


def test_uk_and_us_campaigns_ask_for_their_rails_details(client, make_live_campaign):
    pounds = make_live_campaign(slug="uk-club", package="tiktok_only", currency="GBP")
    rewarded_in_browser(client, pounds)

    form = client.get(reverse("payouts:payee", args=["uk-club"])).content.decode()
    bad = submit(client, pounds, sort_code="12-34", account_number="12345678")
    good = submit(client, pounds, sort_code="12-34-56", account_number="12345678")

    assert "Sort code" in form and "IBAN" not in form
    assert "six digits" in bad.content.decode()
    assert good.status_code == 302 and PayeeAccount.objects.get().rail == "uk_fps"


def test_us_routing_numbers_are_checksummed(client, make_live_campaign):
    dollars = make_live_campaign(slug="us-club", package="tiktok_only", currency="USD")
    rewarded_in_browser(client, dollars)

    bad = submit(client, dollars, routing_number="011000016", account_number="123456")
    good = submit(client, dollars, routing_number="011000015", account_number="123456")

    assert "valid checksum" in bad.content.decode()
    assert good.status_code == 302 and PayeeAccount.objects.get().rail == "us_ach"


def test_a_currency_without_a_rail_is_told_so(client, make_live_campaign):
    francs = make_live_campaign(slug="ch-club", package="tiktok_only", currency="CHF")
    rewarded_in_browser(client, francs)

    response = submit(client, francs)

    assert response.status_code == 400
    assert "not offered yet" in response.content.decode()


def test_forms_share_their_declared_fields_and_a_bad_value_does_not_stick_to_the_next_form():
    from payouts.forms import ManualPayoutForm, PayeeForm

    refused = PayeeForm(GOOD | {"iban": "DE00 0000"}, currency="EUR")
    accepted = PayeeForm(GOOD, currency="EUR")
    manual = ManualPayoutForm(currency="EUR")

    assert not refused.is_valid() and "iban" in refused.errors
    assert accepted.is_valid(), accepted.errors
    assert accepted.fields["iban"] is refused.fields["iban"]  # shared, never copied per form
    # The rail's fields only (the Latin spelling of a name is shown only when the name needs it).
    assert set(accepted.fields) == {"name", "email", "phone", "iban", "name_latin", "consent"}
    assert set(PayeeForm(currency="GBP").fields) >= {"sort_code", "account_number"}
    assert str(manual.fields["name"].label).startswith("Payee's full name")
    assert str(PayeeForm(currency="EUR").fields["name"].label) == "Full name, as your bank knows it"


def test_while_a_claim_is_reviewed_the_status_page_says_the_payout_is_on_hold(client, summer):
    sam = Client()
    rewarded_in_browser(sam, summer, subject="oid-sam")
    submit(sam, summer, email="sam@example.com")  # Sam's account first: Pat's claim is now checked
    person = rewarded_in_browser(client, summer)
    submit(client, summer)

    page = client.get(reverse("payouts:status_page", args=[summer.slug, person.token])).content.decode()

    assert person.claims.get().status == "needs_review"
    assert "On hold" in page and "A person is checking your claim before anything is sent" in page
    assert "Queued for transfer" not in page and "Confirmed, waiting to be sent" not in page


def test_sent_from_the_landing_page_by_htmx_the_browser_is_sent_to_the_status_page(client, summer):
    person = rewarded_in_browser(client, summer)

    response = client.post(reverse("payouts:payee", args=[summer.slug]), GOOD, headers={"HX-Request": "true"})

    assert response.status_code == 204
    assert response["HX-Redirect"] == reverse("payouts:status_page", args=[summer.slug, person.token])
