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
