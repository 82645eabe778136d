"""A year's reports made from the ledger: what the bank confirmed for reportable rewards, per person
and quarter, equal to the ledger's postings for those rewards to the cent; people without their
details listed and left out of the file; filing takes two staff; a filed report is corrected by
a new message that names the row it replaces."""

import pytest
from django.contrib.admin.models import LogEntry
from django.core.management import call_command
from lxml import etree

from payouts.models import Payout, TaxReport
from payouts.taxreports.dpi import DPI, STF, dpi_validate
from payouts.taxreports.services import (
    TaxReportRefused,
    tax_report_confirm_filed,
    tax_report_generate,
    tax_report_mark_filed,
    tax_row_correct,
)
from tests.payouts.conftest import staff_user
from tests.payouts.taxreports.conftest import service_reward_paid

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("operator")]
NS = {"dpi": DPI, "stf": STF}


@pytest.fixture
def rita(make_user):
    return staff_user(make_user, "rita@joyback.example", "file_taxreport")


@pytest.fixture
def tom(make_user):
    return staff_user(make_user, "tom@joyback.example", "file_taxreport")


def this_year():
    return Payout.objects.get().settled_at.year


def test_a_paid_personal_service_is_reported_and_reconciles_with_the_ledger(
    client, summer, django_capture_on_commit_callbacks, rita
):
    service_reward_paid(client, summer, django_capture_on_commit_callbacks, subject="jurgen")
    assert Payout.objects.get().status == "settled"

    report = tax_report_generate(jurisdiction="dac7", year=this_year(), actor=rita)

    assert report.totals == report.ledger_totals == {"EUR": Payout.objects.get().amount}
    assert dpi_validate(report.file.encode()) == []
    document = etree.fromstring(report.file.encode())
    seller = document.find("dpi:DPIBody/dpi:ReportableSeller", namespaces=NS)
    person = "dpi:Identity/dpi:IndividualSeller/dpi:Standard/dpi:IndSellerID"
    assert seller.findtext(f"{person}/dpi:Name/dpi:LastName", namespaces=NS) == "Groß"
    assert seller.findtext(f"{person}/dpi:TIN", namespaces=NS) == "86095742719"
    assert LogEntry.objects.filter(object_id=str(report.pk), user=rita).exists()
    # Nobody is reported in the UK or the US for it.
    assert tax_report_generate(jurisdiction="uk", year=this_year(), actor=rita).rows.count() == 0


def test_a_login_reward_is_not_reported(client, summer, django_capture_on_commit_callbacks, rita):
    person = service_reward_paid(client, summer, django_capture_on_commit_callbacks, subject="pat")
    from verification.models import ActionClaim

    ActionClaim.objects.filter(participant=person).update(tax_class="promotional")
    report = tax_report_generate(jurisdiction="dac7", year=this_year(), actor=rita)
    assert report.rows.count() == 0 and report.totals == {}
    assert b"DPI403" in report.file.encode()


def test_a_person_without_tax_details_is_listed_and_left_out_of_the_file(
    client, summer, django_capture_on_commit_callbacks, rita
):
    service_reward_paid(client, summer, django_capture_on_commit_callbacks, subject="anon", profile=False)
    report = tax_report_generate(jurisdiction="dac7", year=this_year(), actor=rita)
    row = report.rows.get()
    assert row.missing == "address,birth_date,name,tin"
    assert report.totals == report.ledger_totals == {}
    assert b"ReportableSeller" not in report.file.encode()


def test_filing_takes_a_second_person_and_a_filed_report_is_never_made_again(
    client, summer, django_capture_on_commit_callbacks, rita, tom
):
    service_reward_paid(client, summer, django_capture_on_commit_callbacks, subject="jurgen")
    year = this_year()
    report = tax_report_generate(jurisdiction="dac7", year=year, actor=rita)

    with pytest.raises(TaxReportRefused):
        tax_report_mark_filed(report=report, reference="", actor=rita)
    tax_report_mark_filed(report=report, reference="BZST-2027-000123", actor=rita)
    with pytest.raises(TaxReportRefused) as refused:
        tax_report_confirm_filed(report=report, actor=rita)
    assert "second person" in refused.value.message
    report = tax_report_confirm_filed(report=report, actor=tom)
    assert report.status == "filed" and report.filing_confirmed_by == tom

    with pytest.raises(TaxReportRefused):
        tax_report_generate(jurisdiction="dac7", year=year, actor=rita)


def test_correcting_a_filed_row_makes_an_oecd2_record_naming_it(
    client, summer, django_capture_on_commit_callbacks, rita, tom
):
    service_reward_paid(client, summer, django_capture_on_commit_callbacks, subject="jurgen")
    report = tax_report_generate(jurisdiction="dac7", year=this_year(), actor=rita)
    tax_report_mark_filed(report=report, reference="BZST-1", actor=rita)
    tax_report_confirm_filed(report=report, actor=tom)
    filed_row = report.rows.get()

    with pytest.raises(TaxReportRefused):
        tax_row_correct(row=filed_row, changes={"tin": "65929970489"}, reason="", actor=rita)
    new = tax_row_correct(row=filed_row, changes={"tin": "65929970489"}, reason="typo in the TIN", actor=rita)

    correction = new.report
    assert correction.corrects == report and new.doc_type == "OECD2" and new.corrects == filed_row
    document = etree.fromstring(correction.file.encode())
    assert document.findtext("dpi:MessageSpec/dpi:MessageTypeIndic", namespaces=NS) == "DPI402"
    seller = document.find("dpi:DPIBody/dpi:ReportableSeller", namespaces=NS)
    assert seller.findtext("dpi:DocSpec/stf:CorrDocRefId", namespaces=NS) == filed_row.doc_ref_id
    assert "65929970489" in correction.file
    report.refresh_from_db()
    assert report.status == "filed" and "86095742719" in report.file  # what was filed stays as filed


def test_the_command_makes_every_report_and_writes_files_and_statements(
    client, summer, django_capture_on_commit_callbacks, tmp_path
):
    service_reward_paid(client, summer, django_capture_on_commit_callbacks, subject="jurgen")
    call_command("tax_reports", year=this_year(), out=str(tmp_path))
    assert TaxReport.objects.count() == 3
    names = sorted(path.name for path in tmp_path.iterdir())
    assert any(name.endswith(".xml") for name in names)
    assert any(name.startswith("IRS-1099NEC") for name in names)
    statements = [path for path in tmp_path.iterdir() if path.name.startswith("statement-dac7")]
    assert len(statements) == 1 and statements[0].read_bytes().startswith(b"%PDF")


def test_a_report_that_does_not_reconcile_cannot_be_filed(
    client, summer, django_capture_on_commit_callbacks, rita
):
    service_reward_paid(client, summer, django_capture_on_commit_callbacks, subject="jurgen")
    report = tax_report_generate(jurisdiction="dac7", year=this_year(), actor=rita)
    TaxReport.objects.filter(pk=report.pk).update(ledger_totals={"EUR": report.totals["EUR"] + 1})

    with pytest.raises(TaxReportRefused) as refused:
        tax_report_mark_filed(report=report, reference="BZST-1", actor=rita)
    assert "differ from the ledger" in refused.value.message
    report.refresh_from_db()
    assert report.status == "draft" and report.filing_reference == ""


def test_the_platforms_own_missing_details_make_no_file(
    client, summer, django_capture_on_commit_callbacks, rita, settings
):
    service_reward_paid(client, summer, django_capture_on_commit_callbacks, subject="jurgen")
    settings.TAX_HMRC_OPERATOR_ID = ""
    with pytest.raises(TaxReportRefused) as refused:
        tax_report_generate(jurisdiction="uk", year=this_year(), actor=rita)
    assert "TAX_HMRC_OPERATOR_ID" in refused.value.message
    assert not TaxReport.objects.filter(jurisdiction="uk").exists()
