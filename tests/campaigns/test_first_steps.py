"""A new brand's first steps: the home page offers a free try and says what costs what; test data's
play money is topped up without a second factor; where a second factor is asked for, its setup ends
with a way back to the page and the amount typed there."""

import pytest
from django.urls import reverse

from campaigns.models import Role
from campaigns.modes import brand_test_twin
from campaigns.services.brands import member_add
from joyback.ledger.models import Account, AccountKind

pytestmark = pytest.mark.django_db


def funding(brand) -> int:
    account = Account.objects.filter(kind=AccountKind.BRAND_FUNDING, brand_id=brand.pk).first()
    return account.balance if account else 0


def test_the_home_page_offers_a_free_try_and_the_pricing(client):
    html = client.get("/").content.decode()
    assert "Try it free" in html and f'href="{reverse("account_signup")}"' in html
    assert "Pricing" in html and "The rewards you set" in html


@pytest.fixture
def fred(make_user, alpaca):
    """Finance at Alpaca, without a second factor yet."""
    user = make_user("fred@alpaca.example")
    member_add(brand=alpaca, user=user, role=Role.FINANCE)
    return user


def test_test_data_is_topped_up_with_play_money_without_a_second_factor(client, fred, alpaca):
    twin = brand_test_twin(brand=alpaca)
    client.force_login(fred)

    response = client.post(reverse("brand_topup", args=["alpaca--test"]), {"amount": "250.00"})

    assert response.status_code == 302 and funding(twin) == 250_00


def test_a_live_top_up_still_asks_for_the_second_factor_and_keeps_the_typed_amount(client, fred, alpaca):
    client.force_login(fred)
    finance = "http://testserver" + reverse("brand_finance", args=["alpaca"])

    response = client.post(
        reverse("brand_topup", args=["alpaca"]), {"amount": "250.00"}, HTTP_REFERER=finance
    )

    assert response.status_code == 403 and funding(alpaca) == 0
    assert client.session["mfa_next"] == reverse("brand_finance", args=["alpaca"]) + "?amount=250.00"
    page = client.get(client.session["mfa_next"]).content.decode()
    assert 'value="250.00"' in page


def test_a_referer_of_another_site_is_not_where_the_setup_leads(client, fred, alpaca):
    client.force_login(fred)
    client.post(
        reverse("brand_topup", args=["alpaca"]), {"amount": "1"}, HTTP_REFERER="https://evil.example/x"
    )
    assert "mfa_next" not in client.session


def test_the_recovery_codes_page_leads_on(client, alice):
    from allauth.mfa.recovery_codes.internal.auth import RecoveryCodes

    RecoveryCodes.activate(alice)
    client.force_login(alice)
    html = client.get(reverse("mfa_view_recovery_codes")).content.decode()
    assert "Continue to your dashboard" in html and "Recovery Codes" in html

    session = client.session
    session["mfa_next"] = "/brands/alpaca/finance/?amount=250"
    session.save()
    html = client.get(reverse("mfa_view_recovery_codes")).content.decode()
    assert 'href="/brands/alpaca/finance/?amount=250"' in html and "Continue where you were" in html
