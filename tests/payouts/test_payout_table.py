"""The brand's table of all payouts, as finance searches it: by the person (their e-mail or TikTok
handle), the rail and the amount, the CSV always of the rows shown."""

import pytest
from django.urls import reverse

from payouts.models import Payout

pytestmark = pytest.mark.django_db


def shown(client, **filters):
    page = client.get(reverse("payouts:payout_table", args=["alpaca"]), filters).context["page"]
    return [payout.end_to_end_id for payout in page]


def test_a_payout_is_found_by_the_person_the_rail_and_the_amount(owed, client, fiona, alpaca):
    owed()
    payout = Payout.objects.get()
    client.force_login(fiona)

    assert shown(client, q="pat@example.com") == [payout.end_to_end_id]  # the e-mail, by its hash
    assert shown(client, q="@Pat") == [payout.end_to_end_id]  # the TikTok handle
    assert shown(client, q="nobody@example.com") == []
    assert shown(client, scheme=payout.scheme) == [payout.end_to_end_id]
    assert shown(client, scheme="swift") == []
    typed = f"{payout.amount / 100:.2f}"  # as finance reads it on the bank's line
    above = f"{payout.amount / 100 + 0.01:.2f}"
    assert shown(client, amount_min=typed, amount_max=typed) == [payout.end_to_end_id]
    assert shown(client, amount_min=above) == []
    export = client.get(reverse("payouts:payout_table_csv", args=["alpaca"]), {"amount_min": above})
    assert len(b"".join(export.streaming_content).decode().splitlines()) == 1  # the header alone


def test_an_amount_with_too_many_decimals_is_said_and_left_out(owed, client, fiona, alpaca):
    owed()
    client.force_login(fiona)

    response = client.get(reverse("payouts:payout_table", args=["alpaca"]), {"amount_min": "1.999"})

    assert "1.999 is not an amount." in response.content.decode()
    assert len(response.context["page"].object_list) == 1


@pytest.mark.parametrize("table", ["payouts:payout_table", "payouts:reconciliation", "verification:claims"])
def test_the_last_day_a_date_field_takes_is_said_and_left_out(owed, client, fiona, alpaca, table):
    owed()
    client.force_login(fiona)

    response = client.get(reverse(table, args=["alpaca"]), {"end": "9999-12-31"})

    assert response.status_code == 200
    assert "less than or equal to" in response.content.decode()
    assert len(response.context["page"].object_list) == 1


def test_a_payout_is_found_by_the_reference_on_the_payees_statement(owed, client, fiona, alpaca):
    """Outside IBAN rails the payee's bank shows the payout's short reference: finance finds the
    payout by it, and its page shows it."""
    owed()
    payout = Payout.objects.get()
    client.force_login(fiona)

    assert shown(client, q=payout.beneficiary_reference.lower()) == [payout.end_to_end_id]
    page = client.get(reverse("payouts:payout_detail", args=["alpaca", payout.pk])).content.decode()
    assert payout.beneficiary_reference in page
