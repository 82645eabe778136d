"""The reconciliation dashboard as finance members and viewers use it, the CSV export and the API."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from joyback.api.services import api_key_create
from payouts.models import Payout, ReconciliationException, StatementLine
from tests.payouts.camt_fixtures import Ntry, Tx, camt053, paid
from tests.payouts.conftest import IBANS

pytestmark = pytest.mark.django_db


def page(brand):
    return reverse("payouts:reconciliation", args=[brand.slug])


def upload(client, brand, data, name="statement.xml"):
    return client.post(
        reverse("payouts:statement_upload", args=[brand.slug]),
        {"statement": SimpleUploadedFile(name, data, content_type="application/xml")},
        follow=True,
    )


def test_finance_uploads_a_statement_and_sees_the_exception(owed, client, fiona, alpaca):
    owed(iban=IBANS["pending"])
    payout = Payout.objects.get()
    client.force_login(fiona)

    response = upload(client, alpaca, camt053([paid(payout), Ntry(amount=9_00, ref="FEE", info="Bank fee")]))

    body = response.content.decode()
    assert "1 matched" in body or "matched" in body
    assert "Unknown statement line" in body and "Bank fee" in body
    payout.refresh_from_db()
    assert payout.status == "settled"


def test_a_bad_upload_is_refused_with_its_line(client, fiona, alpaca):
    client.force_login(fiona)
    data = camt053([Ntry(amount=1_00, ref="Z", info="x")])

    response = upload(client, alpaca, data[:-60])

    assert "line" in response.content.decode() and "truncated" in response.content.decode()
    assert StatementLine.objects.count() == 0


def test_a_viewer_reads_but_cannot_upload_or_resolve(client, vic, alpaca):
    client.force_login(vic)
    assert client.get(page(alpaca)).status_code == 200
    assert upload(client, alpaca, camt053([])).status_code == 403
    exception = ReconciliationException.objects.create(brand=alpaca, reason="unknown_line", currency="EUR")
    response = client.post(
        reverse("payouts:exception_resolve", args=[alpaca.slug, exception.pk]), {"action": "repaid"}
    )
    assert response.status_code == 403


def test_finance_resolves_an_exception_from_the_queue(owed, client, fiona, alpaca):
    owed(iban=IBANS["pending"])
    payout = Payout.objects.get()
    client.force_login(fiona)
    upload(client, alpaca, camt053([Ntry(amount=payout.amount, ref="T", txs=[Tx("JBTYPO", payout.amount)])]))
    exception = ReconciliationException.objects.get()

    client.post(
        reverse("payouts:exception_resolve", args=[alpaca.slug, exception.pk]),
        {"action": "link", "payout": payout.end_to_end_id, "note": "typo in the reference"},
    )

    exception.refresh_from_db()
    assert exception.status == "resolved"
    assert exception.resolutions.get().actor == fiona
    payout.refresh_from_db()
    assert payout.status == "settled"


def test_the_table_filters_pages_by_seek_and_exports_csv(owed, client, vic, alpaca):
    owed()
    payout = Payout.objects.get()
    client.force_login(vic)

    found = client.get(page(alpaca), {"q": payout.end_to_end_id, "part": "table"}, HTTP_HX_REQUEST="true")
    missing = client.get(page(alpaca), {"status": "returned", "part": "table"}, HTTP_HX_REQUEST="true")
    bad = client.get(page(alpaca), {"date_from": "yesterday", "amount_min": "lots"})
    csv = client.get(reverse("payouts:reconciliation_csv", args=[alpaca.slug]), {"status": "settled"})

    assert payout.end_to_end_id in found.content.decode() and "<html" not in found.content.decode()
    assert payout.end_to_end_id not in missing.content.decode()
    assert bad.status_code == 200 and "is not a date" in bad.content.decode()
    rows = b"".join(csv.streaming_content).decode().splitlines()
    assert rows[0].startswith("id,end_to_end_id") and payout.end_to_end_id in rows[1]


def test_another_brands_member_gets_404(client, bob, alpaca):
    client.force_login(bob)
    assert client.get(page(alpaca)).status_code == 404


def test_the_api_takes_a_statement_with_a_payouts_key(owed, client, alpaca):
    owed(iban=IBANS["pending"])
    payout = Payout.objects.get()
    key = api_key_create(brand_id=alpaca.pk, name="erp", scopes=["payouts"]).secret
    url = reverse("api_statements")

    ok = client.post(
        url, camt053([paid(payout)]), content_type="application/xml", HTTP_AUTHORIZATION=f"Bearer {key}"
    )
    bad = client.post(url, b"<x/>", content_type="application/xml", HTTP_AUTHORIZATION=f"Bearer {key}")

    assert ok.status_code == 201 and ok.json()["matched"] == 1
    assert bad.status_code == 422 and "camt.053" in bad.content.decode()
    assert (
        client.get(
            reverse("api_statement", args=[ok.json()["id"]]), HTTP_AUTHORIZATION=f"Bearer {key}"
        ).json()["status"]
        == "done"
    )


def test_a_payout_reference_of_unicode_digits_is_an_unknown_payout(client, fiona, alpaca):
    client.force_login(fiona)
    exception = ReconciliationException.objects.create(brand=alpaca, reason="unknown_line", currency="EUR")

    response = client.post(
        reverse("payouts:exception_resolve", args=[alpaca.slug, exception.pk]),
        {"action": "link", "payout": "\u00b2"},
        follow=True,
    )

    assert response.status_code == 200
    assert "No payout of this brand" in response.content.decode()
