"""Two staff making or filing the same year at once, on PostgreSQL: one report, filed once."""

import pytest
from django.test import Client

from payouts.models import Payout, TaxReport
from payouts.taxreports.services import TaxReportRefused, tax_report_generate, tax_report_mark_filed
from tests.payouts.conftest import staff_user
from tests.payouts.taxreports.conftest import service_reward_paid
from tests.verification.test_claim_races import race

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("operator"),
]


def test_making_one_year_at_once_keeps_one_report_with_each_person_once(
    summer, make_user, django_capture_on_commit_callbacks
):
    service_reward_paid(Client(), summer, django_capture_on_commit_callbacks, subject="jurgen")
    staff = [staff_user(make_user, f"s{i}@joyback.example", "file_taxreport") for i in range(4)]
    year = Payout.objects.get().settled_at.year

    results = race(4, lambda i: tax_report_generate(jurisdiction="dac7", year=year, actor=staff[i]))

    assert all(isinstance(r, TaxReport | TaxReportRefused) for r in results), results
    report = TaxReport.objects.get()
    assert report.rows.count() == 1 and report.totals == report.ledger_totals
    again = race(4, lambda i: tax_report_mark_filed(report=report, reference=f"REF-{i}", actor=staff[i]))
    assert sum(isinstance(r, TaxReport) for r in again) == 1
    assert all(isinstance(r, TaxReport | TaxReportRefused) for r in again), again
