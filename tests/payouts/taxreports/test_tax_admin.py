"""Rita and Tom (staff, second factor on) on the tax reports' admin page: Rita makes the year's
report and marks it filed, Tom confirms it, a row is corrected into a new message; each step is in
the admin's history; staff without the permission see none of it."""

import zipfile
from io import BytesIO

import pytest
from django.contrib.admin.models import LogEntry
from django.urls import reverse

from payouts.models import Payout, TaxReport
from tests.conftest import SignedInClient
from tests.payouts.conftest import staff_user
from tests.payouts.taxreports.conftest import service_reward_paid

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("operator")]


def signed_in(user):
    browser = SignedInClient()
    browser.force_login(user)
    return browser


@pytest.fixture
def rita(make_user):
    return staff_user(make_user, "rita@joyback.example", "file_taxreport", "view_taxreport")


@pytest.fixture
def tom(make_user):
    return staff_user(make_user, "tom@joyback.example", "file_taxreport", "view_taxreport")


def test_a_year_made_reviewed_filed_by_two_and_corrected(
    client, summer, django_capture_on_commit_callbacks, rita, tom
):
    service_reward_paid(client, summer, django_capture_on_commit_callbacks, subject="jurgen")
    year = Payout.objects.get().settled_at.year
    staff = signed_in(rita)

    response = staff.post(reverse("admin:payouts_taxreport_generate"), {"year": year, "jurisdiction": "dac7"})
    report = TaxReport.objects.get(jurisdiction="dac7")
    assert response.status_code == 302 and response.url == reverse(
        "admin:payouts_taxreport_change", args=[report.pk]
    )
    page = staff.get(response.url).content.decode()
    assert "Jürgen Groß" in page and "€1.00" in page and "icon-yes" in page  # reconciled

    download = staff.get(reverse("admin:payouts_taxreport_file", args=[report.pk]))
    assert download["Content-Disposition"].endswith('.xml"') and b"DPI_OECD" in download.content
    statements = staff.get(reverse("admin:payouts_taxreport_statements", args=[report.pk]))
    assert [name.endswith(".pdf") for name in zipfile.ZipFile(BytesIO(statements.content)).namelist()] == [
        True
    ]

    filing = reverse("admin:payouts_taxreport_filing", args=[report.pk])
    staff.post(filing, {"step": "mark", "reference": "BZSt-2027-1"})
    staff.post(filing, {"step": "confirm"})  # Rita cannot be her own second person
    report.refresh_from_db()
    assert report.status == "filing"
    signed_in(tom).post(filing, {"step": "confirm"})
    report.refresh_from_db()
    assert report.status == "filed" and report.filing_confirmed_by == tom

    row = report.rows.get()
    correct = reverse("admin:payouts_taxreport_correct", args=[row.pk])
    fields = {
        "first_name": "Jürgen",
        "last_name": "Groß",
        "tin": "65929970489",
        "tin_country": "de",
        "birth_date": "1990-04-01",
        "street": "Leopoldstraße 7",
        "postcode": "80802",
        "city": "München",
        "country": "de",
        "iban": "DE89370400440532013000",
        "reason": "the person sent their right TIN",
    }
    response = staff.post(correct, fields)
    correction = TaxReport.objects.get(corrects=report)
    assert response.url == reverse("admin:payouts_taxreport_change", args=[correction.pk])
    assert correction.rows.get().doc_type == "OECD2" and "65929970489" in correction.file

    history = list(LogEntry.objects.order_by("pk").values_list("user__email", "change_message"))
    assert [who for who, _ in history] == [
        "rita@joyback.example",
        "rita@joyback.example",
        "tom@joyback.example",
        "rita@joyback.example",
    ]
    assert "the person sent their right TIN" in history[-1][1]


def test_staff_without_the_permission_see_no_report(make_user):
    drew = staff_user(make_user, "drew@joyback.example")
    browser = signed_in(drew)
    assert browser.get(reverse("admin:payouts_taxreport_generate")).status_code == 403
    assert browser.get(reverse("admin:payouts_taxreport_changelist")).status_code == 403


def test_one_person_paid_by_two_brands_is_one_seller_and_corrected_whole(
    client, summer, make_live_campaign, bison, django_capture_on_commit_callbacks, rita, tom
):
    from django.test import Client
    from lxml import etree

    from payouts.taxreports.dpi import DPI, STF
    from payouts.taxreports.services import (
        tax_report_confirm_filed,
        tax_report_generate,
        tax_report_mark_filed,
        tax_row_correct,
    )

    ns = {"dpi": DPI, "stf": STF}
    bikes = make_live_campaign(slug="bikes", brand=bison)
    service_reward_paid(client, summer, django_capture_on_commit_callbacks, subject="jurgen")
    service_reward_paid(Client(), bikes, django_capture_on_commit_callbacks, subject="jurgen-bikes")
    paid = sum(Payout.objects.values_list("amount", flat=True))
    year = Payout.objects.first().settled_at.year
    report = tax_report_generate(jurisdiction="dac7", year=year, actor=rita)

    # The ledger is reconciled per brand's row; the file has the person once, with the sum.
    first, second = report.rows.order_by("id")
    assert {first.brand_id, second.brand_id} == {summer.brand_id, bison.pk}
    assert report.totals == report.ledger_totals == {"EUR": paid}
    document = etree.fromstring(report.file.encode())
    sellers = document.findall("dpi:DPIBody/dpi:ReportableSeller", namespaces=ns)
    assert len(sellers) == 1
    assert sellers[0].findtext("dpi:DocSpec/stf:DocRefId", namespaces=ns) == first.doc_ref_id

    # Staff see which rows are one person.
    page = signed_in(rita).get(
        reverse("admin:payouts_taxreport_change", args=[report.pk]), HTTP_ACCEPT_LANGUAGE="de"
    )
    text = page.content.decode()
    assert f"Gemeldet als eine Person zusammen mit {second.doc_ref_id}" in text

    # A filed person is corrected whole: both brands' rows, one seller replacing the filed one.
    tax_report_mark_filed(report=report, reference="BZST-1", actor=rita)
    tax_report_confirm_filed(report=report, actor=tom)
    new = tax_row_correct(row=second, changes={"last_name": "Gross"}, reason="spelling", actor=rita)
    correction = new.report
    assert sorted(correction.rows.values_list("corrects_id", flat=True)) == [first.pk, second.pk]
    document = etree.fromstring(correction.file.encode())
    (seller,) = document.findall("dpi:DPIBody/dpi:ReportableSeller", namespaces=ns)
    assert seller.findtext("dpi:DocSpec/stf:CorrDocRefId", namespaces=ns) == first.doc_ref_id
    assert "Gross" in correction.file
    # Corrected again before it is filed: the same rows change, none is added.
    tax_row_correct(row=first, changes={"last_name": "Groß"}, reason="it was right", actor=rita)
    assert correction.rows.count() == 2


def test_staff_read_what_a_person_is_missing_in_words(
    client, summer, django_capture_on_commit_callbacks, rita
):
    from payouts.taxreports.services import tax_report_generate

    service_reward_paid(client, summer, django_capture_on_commit_callbacks, subject="anon", profile=False)
    report = tax_report_generate(jurisdiction="dac7", year=Payout.objects.get().settled_at.year, actor=rita)
    assert report.rows.get().missing == "address,birth_date,name,tin"
    url = reverse("admin:payouts_taxreport_change", args=[report.pk])
    german = signed_in(rita).get(url, HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert "Adresse, Geburtsdatum, Name, Steuer-Identifikationsnummer" in german
    assert "address,birth_date" not in german
    english = signed_in(rita).get(url).content.decode()
    assert "Address, Date of birth, Name, Tax identification number" in english
