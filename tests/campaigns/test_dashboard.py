"""The brand dashboard shows the brand's balances to every member role; finance's page its ledger."""

import pytest
from django.urls import reverse

from campaigns.services.funding import brand_deposit_record
from tests.conftest import fund

pytestmark = pytest.mark.django_db


@pytest.fixture
def funded_alpaca(alpaca):
    fund(alpaca, 2500_00, "EUR", reference="SEPA-REF-1")
    return alpaca


def test_the_owner_sees_the_funding_balance(client, alice, funded_alpaca):
    client.force_login(alice)

    response = client.get(reverse("brand_dashboard", args=["alpaca"]))

    assert response.status_code == 200
    assert "€2,500.00" in response.content.decode()
    # The bookings are finance's reading, on their own page.
    assert "to the virtual account" not in response.content.decode()
    finance = client.get(reverse("brand_finance", args=["alpaca"])).content.decode()
    assert "to the virtual account" in finance and "€2,500.00" in finance


@pytest.mark.parametrize("persona", ["fiona", "vic"])
def test_finance_and_viewers_read_the_dashboard(client, request, funded_alpaca, persona):
    client.force_login(request.getfixturevalue(persona))

    assert client.get(reverse("brand_dashboard", args=["alpaca"])).status_code == 200


def test_the_balances_refresh_as_a_fragment(client, alice, funded_alpaca):
    client.force_login(alice)

    response = client.get(reverse("brand_dashboard", args=["alpaca"]), headers={"HX-Request": "true"})

    body = response.content.decode()
    assert body.lstrip().startswith('<section id="balances"')
    assert "<html" not in body
    assert "€2,500.00" in body


def test_the_same_bank_deposit_booked_twice_counts_once(alpaca):
    first = brand_deposit_record(brand=alpaca, amount=100_00, currency="EUR", bank_reference="DUP-1")
    second = brand_deposit_record(brand=alpaca, amount=100_00, currency="EUR", bank_reference="DUP-1")

    assert first.pk == second.pk


def test_the_account_statement_lists_entries(client, alice, funded_alpaca):
    client.force_login(alice)
    finance = client.get(reverse("brand_finance", args=["alpaca"]))
    account = finance.context["balances"]["accounts"][0]

    response = client.get(reverse("brand_account", args=["alpaca", account.pk]))

    assert response.status_code == 200
    assert "to the virtual account" in response.content.decode()  # the deposit on its own IBAN


def test_a_member_of_several_brands_picks_one(client, alice, alpaca, bison):
    from campaigns.services.brands import member_add

    member_add(brand=bison, user=alice, role="viewer")
    client.force_login(alice)

    response = client.get(reverse("brand_home"))

    assert response.status_code == 200
    assert b"Alpaca Coffee" in response.content and b"Bison Bikes" in response.content


def test_a_user_without_brand_is_told_so(client, make_user):
    client.force_login(make_user("nobody@example.com"))

    response = client.get(reverse("brand_home"))

    assert (
        b"not on a brand's team yet" in response.content
        and b"invite you from its Team page" in response.content
    )


def test_a_new_user_creates_their_brand_and_becomes_its_owner(client, make_user):
    dora = make_user("dora@dodo.example")
    client.force_login(dora)

    response = client.post(reverse("brand_new"), {"name": "Dodo Drinks", "currency": "GBP"})

    assert response.status_code == 302
    assert response["Location"] == reverse("brand_dashboard", args=["dodo-drinks"])
    assert dora.memberships.get().role == "owner"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"name": "", "currency": "EUR"}, "This field is required."),
        ({"name": "X", "currency": "XXX"}, "Select a valid choice."),
        ({"name": "<script>alert(1)</script>" * 10, "currency": "EUR"}, "at most 120 characters"),
    ],
)
def test_a_bad_brand_is_refused_with_a_message_and_nothing_created(client, make_user, data, message):
    from campaigns.models import Brand

    client.force_login(make_user("dora@dodo.example"))

    response = client.post(reverse("brand_new"), data)

    assert response.status_code == 200
    assert message in response.content.decode()
    assert "<script>alert" not in response.content.decode()
    assert not Brand.objects.exists()


def test_two_brands_with_one_name_get_distinct_slugs(alice, bob):
    from campaigns.services.brands import brand_create

    first = brand_create(name="Same Name", owner=alice)
    second = brand_create(name="Same Name", owner=bob)

    assert (first.slug, second.slug) == ("same-name", "same-name-2")
