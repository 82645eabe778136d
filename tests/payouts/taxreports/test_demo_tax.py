"""make run's demo: a year of demo activity makes tax reports that pass the official schema and
reconcile with the ledger, a person in each of Germany, Spain and the UK reported where they live,
and the US creator, paid in dollars by the demo's US campaign, the payee of the 1099-NEC, with the
sandbox's own platform operator (no setting given)."""

import pytest
from django.core.management import call_command
from django.utils import timezone

from payouts.models import TaxReport
from payouts.taxreports.dpi import dpi_validate

pytestmark = pytest.mark.django_db


def test_the_demo_year_reports_validate_and_reconcile():
    call_command("demo_seed")
    call_command("demo_funding")
    call_command("demo_tax")
    call_command("demo_tax")  # again: nothing twice

    year = timezone.now().year
    reports = {report.jurisdiction: report for report in TaxReport.objects.filter(year=year)}
    assert set(reports) == {"dac7", "uk", "us"}
    for report in reports.values():
        assert report.totals == report.ledger_totals, report.jurisdiction
    dac7, uk = reports["dac7"], reports["uk"]
    assert dpi_validate(dac7.file.encode()) == [] and dpi_validate(uk.file.encode()) == []
    assert sorted(row.seller.count("Jonas") + row.seller.count("Lucía") for row in dac7.rows.all()) == [1, 1]
    assert "O'Brien" in uk.rows.get().seller
    assert uk.totals == {"EUR": uk.rows.get().total} and uk.totals["EUR"] > 0
    us = reports["us"]
    payee = us.rows.get()
    assert "Zhang" in payee.seller and payee.currency == "USD" and payee.missing == ""
    assert us.totals == {"USD": 2_100_00}
    payees = [line for line in us.file.split("\r\n") if line.startswith("B")]
    assert len(payees) == 1 and payees[0][54:66] == "000000210000"
