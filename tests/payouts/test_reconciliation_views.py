"""The reconciliation dashboard as finance members and viewers use it: the bank's evidence for each
deposit and payout, "compare with my bank statement" (which books nothing) and the CSV export."""

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from joyback.ledger.models import Entry
from payouts.models import BrandFundingReference, Payout, ProviderDeposit, StatementImport, StatementLine
from payouts.reconciliation.references import brand_deposit_reference
from payouts.reconciliation.statement_import import statement_import_create
from tests.conftest import fund, own_account_open
from tests.payouts.camt_fixtures import Ntry, camt053, paid
from tests.payouts.conftest import IBANS

pytestmark = pytest.mark.django_db


def page(brand):
    return reverse("payouts:reconciliation", args=[brand.slug])


def compare(client, brand, data, name="my-statement.xml", **headers):
    return client.post(
        reverse("payouts:statement_compare", args=[brand.slug]),
        {"statement": SimpleUploadedFile(name, data, content_type="application/xml")},
        **headers,
    )


def feed(data):
    return statement_import_create(data=data, filename="bank.xml", channel="feed")


def test_finance_sees_the_bank_line_behind_each_payout_and_deposit(owed, client, fiona, alpaca):
    owed(iban=IBANS["pending"])
    payout = Payout.objects.get()
    reference = brand_deposit_reference(alpaca)
    feed(
        camt053(
            [
                paid(payout, ref="BANK-PAYOUT-1"),
                Ntry(amount=500_00, credit=True, ref="BANK-DEPOSIT-1", remittance=f"Top-up {reference}"),
            ]
        )
    )
    client.force_login(fiona)

    body = client.get(page(alpaca)).content.decode()

    # The payout's line is shown; money with the brand's reference on the platform's account is not
    # the brand's deposit (an exception for staff), and no payment reference is offered to fund.
    assert reference not in body and "BANK-PAYOUT-1" in body and "BANK-DEPOSIT-1" not in body


def queries(client, url) -> int:
    cache.clear()  # every figure computed, as on a page nobody opened lately
    with CaptureQueriesContext(connection) as statements:
        assert client.get(url).status_code == 200
    return len(statements)


def test_the_page_asks_as_much_on_its_first_visit_with_one_payout_as_later_with_many_lines(
    owed, client, fiona, alpaca
):
    owed(iban=IBANS["pending"])
    payout = Payout.objects.get()
    client.force_login(fiona)
    assert not BrandFundingReference.objects.exists()  # made on the page's first visit

    first = queries(client, page(alpaca))
    reference = brand_deposit_reference(alpaca)
    feed(
        camt053(
            [
                paid(payout, ref="BANK-PAYOUT-1"),
                *(Ntry(amount=7_00 + n, ref=f"UNKNOWN-{n}", info="Nobody's") for n in range(3)),
                *(Ntry(amount=100_00 * n, credit=True, ref=f"DEP-{n}", remittance=reference) for n in (1, 2)),
            ]
        )
    )
    assert StatementLine.objects.count() == 6

    assert queries(client, page(alpaca)) == first


def test_a_bad_file_to_compare_is_refused_with_its_line(client, fiona, alpaca):
    client.force_login(fiona)
    data = camt053([Ntry(amount=1_00, ref="Z", info="x")])

    response = compare(client, alpaca, data[:-60])

    assert "line" in response.content.decode() and "truncated" in response.content.decode()
    assert StatementLine.objects.count() == 0


def test_compare_shows_which_transfers_arrived_and_books_nothing(client, fiona, alpaca):
    reference = brand_deposit_reference(alpaca)
    feed(camt053([Ntry(amount=300_00, credit=True, ref="DEP-ARRIVED", remittance=reference)]))
    before = (StatementImport.objects.count(), StatementLine.objects.count(), Entry.objects.count())
    mine = camt053(
        [
            Ntry(amount=300_00, ref="MY-1", remittance=f"Funding {reference}"),
            Ntry(amount=700_00, ref="MY-2", remittance=f"Funding {reference}"),
            Ntry(amount=9_99, ref="MY-3", remittance="Coffee beans"),
        ],
        msg_id="MY-BANK",
    )
    client.force_login(fiona)

    response = compare(client, alpaca, mine, HTTP_HX_REQUEST="true")

    body = response.content.decode()
    assert "<html" not in body
    # Sent to the platform's account, a brand's transfer never arrives as its funding (it funds its
    # own virtual IBAN): neither shows as arrived.
    assert body.count('class="compared arrived"') == 0
    assert body.count('class="compared missing"') == 2 and "700.00" in body
    assert "Coffee beans" not in body
    assert (StatementImport.objects.count(), StatementLine.objects.count(), Entry.objects.count()) == before


def test_a_transfer_to_the_brands_own_iban_shows_arrived_once_the_provider_booked_it(
    client, fiona, alpaca, bison
):
    mine_iban, theirs_iban = own_account_open(alpaca).iban, own_account_open(bison).iban
    statement = camt053(
        [
            Ntry(amount=250_00, ref="MY-1", creditor_iban=mine_iban, remittance="Top-up"),
            Ntry(amount=80_00, ref="MY-2", creditor_iban=theirs_iban, remittance="Bikes"),
        ],
        msg_id="MY-BANK",
    )
    client.force_login(fiona)

    def compared() -> str:
        return compare(client, alpaca, statement, HTTP_HX_REQUEST="true").content.decode()

    # Sent, not yet booked by the provider: shown, not arrived; a transfer to another account is
    # not a transfer to JoyBack.
    before = compared()
    assert before.count('class="compared missing"') == 1 and "250.00" in before and "80.00" not in before
    # Another brand's deposit of the same amount, booked on its own account, is never Alpaca's.
    fund(bison, 250_00)
    assert compared().count('class="compared arrived"') == 0
    # The provider's webhook booked Alpaca's on its own virtual account: arrived, with its transfer.
    fund(alpaca, 250_00)
    booked = ProviderDeposit.objects.get(brand=alpaca, amount=250_00)
    after = compared()
    assert after.count('class="compared arrived"') == 1 and 'class="compared missing"' not in after
    assert booked.transfer_id in after


def test_a_viewer_reads_but_cannot_compare(client, vic, alpaca):
    client.force_login(vic)
    assert client.get(page(alpaca)).status_code == 200
    assert compare(client, alpaca, camt053([])).status_code == 403


def test_the_payouts_are_the_payouts_table_with_the_banks_evidence(owed, client, vic, alpaca):
    owed()
    payout = Payout.objects.get()
    feed(camt053([paid(payout, ref="BANK-PAYOUT-7")]))
    client.force_login(vic)

    body = client.get(page(alpaca)).content.decode()
    found = client.get(page(alpaca), {"q": payout.end_to_end_id}, HTTP_HX_REQUEST="true")
    missing = client.get(page(alpaca), {"status": "returned"}, HTTP_HX_REQUEST="true")
    bad = client.get(page(alpaca), {"start": "yesterday", "amount_min": "lots"})
    csv = client.get(reverse("payouts:reconciliation_csv", args=[alpaca.slug]), {"status": "settled"})

    # The same filters, pages and CSV as the brand's table of all payouts, and the bank's line.
    assert 'action="/brands/alpaca/reconciliation/"' in body and "Download these rows (CSV)" in body
    assert "/brands/alpaca/reconciliation/payouts.csv" in body
    assert "BANK-PAYOUT-7" in body
    assert found.content.decode().lstrip().startswith('<div id="results">')
    assert payout.end_to_end_id in found.content.decode() and "BANK-PAYOUT-7" in found.content.decode()
    assert payout.end_to_end_id not in missing.content.decode()
    assert bad.status_code == 200 and "Enter a valid date." in bad.content.decode()
    assert "Enter a number." in bad.content.decode()
    rows = b"".join(csv.streaming_content).decode().lstrip("\ufeff").splitlines()
    assert rows[0].startswith("EndToEndId,") and payout.end_to_end_id in rows[1]
    assert "Status code" in rows[0] and ",settled," in rows[1]  # the code beside the words


def test_another_brands_member_gets_404(client, bob, alpaca):
    client.force_login(bob)
    assert client.get(page(alpaca)).status_code == 404


def test_another_brands_member_cannot_compare(client, bob, alpaca):
    client.force_login(bob)
    assert compare(client, alpaca, camt053([])).status_code == 404
