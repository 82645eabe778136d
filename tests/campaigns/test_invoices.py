"""The platform's monthly invoice to each live brand: numbered without a gap by the issuer's sequence
(even when issued at once by several workers), a line per campaign, VAT by the brand's country
(domestic, reverse charge in the EU with a VAT number, none outside the EU; an EU brand without a
number pays the platform's VAT: a check that cannot be sure never zero-rates), downloaded as PDF
and CSV by the brand's owner and finance members only."""

import re
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.urls import reverse
from django.utils import timezone, translation

from campaigns.fees import fee_plans_forget
from campaigns.invoice_documents import invoice_pdf
from campaigns.invoices import vat_for
from campaigns.models import Brand, FeeCharge, FeePlan, Invoice, InvoiceSequence, VatTreatment
from campaigns.services.brands import brand_legal_details_save
from campaigns.services.invoices import invoice_issue, invoices_issue, month_start
from campaigns.services.refusals import CampaignError
from joyback.background import SCHEDULES
from tests.conftest import verified
from verification.services.participants import identity_attach, participant_create
from verification.services.rewards import action_reward

pytestmark = pytest.mark.django_db

LAST_MONTH = month_start(month_start(timezone.localdate()) - timedelta(days=1))


@pytest.fixture
def staff_pair(make_user):
    return (
        make_user("sam@joyback.example", is_staff=True),
        make_user("tara@joyback.example", is_staff=True),
    )


def plan_for(brand, staff_pair):
    sam, tara = staff_pair
    fee_plans_forget()  # as a confirmed plan change does
    FeePlan.objects.create(
        brand=brand,
        currency="EUR",
        per_action=10,
        payout_bps=500,
        changed_by=sam,
        approved_by=tara,
        changed_at=timezone.now(),
    )


def rewards_last_month(campaign, count=2, prefix="p"):
    for number in range(count):
        person = participant_create(brand=campaign.brand)
        identity = identity_attach(
            participant=person, provider="tiktok", subject=f"{prefix}{number}", display_name="P"
        )
        action_reward(rule=campaign.rules.get(trigger="tiktok_login"), identity=identity)
    a_day_last_month = timezone.now().replace(day=1) - timedelta(days=3)
    FeeCharge.objects.filter(campaign=campaign).update(created_at=a_day_last_month)


def located(brand, country, vat_id="", vies="valid"):
    """The brand in `country` with `vat_id`, which VIES said is `vies` (VatIdCheck)."""
    Brand.objects.filter(pk=brand.pk).update(
        country=country, vat_id=vat_id, vies_vat_id=vat_id, vies_status=vies, vies_request_identifier="WAPI1"
    )
    brand.refresh_from_db()
    return brand


@pytest.fixture
def billed(summer, staff_pair):
    """Alpaca (Germany) with two rewards of last month on its summer campaign: 2 x (10 + 5) cents."""
    plan_for(summer.brand, staff_pair)
    rewards_last_month(summer)
    return summer.brand


# ---- VAT by the brand's country -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("country", "vat_id", "vies", "treatment", "rate"),
    [
        ("DE", "", "", VatTreatment.DOMESTIC, 1900),
        ("DE", "DE123456789", "valid", VatTreatment.DOMESTIC, 1900),
        ("FR", "FR12345678901", "valid", VatTreatment.REVERSE_CHARGE, 0),
        ("GR", "EL123456789", "valid", VatTreatment.REVERSE_CHARGE, 0),
        ("US", "", "", VatTreatment.OUTSIDE_EU, 0),
        ("CN", "", "", VatTreatment.OUTSIDE_EU, 0),
        # No number, or one of another country: not shown to be a business abroad, so taxed here.
        ("FR", "", "", VatTreatment.DOMESTIC, 1900),
        ("FR", "DE123456789", "valid", VatTreatment.DOMESTIC, 1900),
        ("", "", "", VatTreatment.DOMESTIC, 1900),
        # A number VIES did not confirm (yet): taxed here too, never at zero VAT.
        ("FR", "FR12345678901", "invalid", VatTreatment.DOMESTIC, 1900),
        ("FR", "FR12345678901", "unavailable", VatTreatment.DOMESTIC, 1900),
        ("FR", "FR12345678901", "unchecked", VatTreatment.DOMESTIC, 1900),
        ("FR", "FR12345678901", "", VatTreatment.DOMESTIC, 1900),
    ],
)
def test_the_vat_a_brands_country_calls_for(country, vat_id, vies, treatment, rate):
    vat = vat_for(country=country, vat_id=vat_id, vies=vies)

    assert (vat.treatment, vat.rate_bps) == (treatment, rate)


def test_a_german_brand_is_charged_german_vat(billed):
    invoice = invoice_issue(brand=billed, currency="EUR", period_start=LAST_MONTH)

    assert invoice.net == 2 * (10 + 5) == 30
    assert (invoice.vat_treatment, invoice.vat, invoice.total) == (
        VatTreatment.DOMESTIC,
        6,
        36,
    )  # 19% of 30 = 5.7
    assert "VAT 19% of the net amount." in pdf_text(invoice_pdf(invoice))


def test_a_french_brand_with_its_vat_number_is_reverse_charged(billed):
    located(billed, "FR", "FR12345678901")

    invoice = invoice_issue(brand=billed, currency="EUR", period_start=LAST_MONTH)

    assert (invoice.vat_treatment, invoice.vat, invoice.total) == (VatTreatment.REVERSE_CHARGE, 0, 30)
    assert invoice.customer_vat_id == "FR12345678901"
    text = pdf_text(invoice_pdf(invoice))
    assert "Reverse charge" in text and "FR12345678901" in text


def test_a_french_brand_without_a_vat_number_pays_the_platforms_vat(billed):
    located(billed, "FR")

    invoice = invoice_issue(brand=billed, currency="EUR", period_start=LAST_MONTH)

    assert (invoice.vat_treatment, invoice.vat_rate_bps, invoice.vat) == (VatTreatment.DOMESTIC, 1900, 6)


def test_an_american_brand_pays_no_vat(billed):
    located(billed, "US")

    invoice = invoice_issue(brand=billed, currency="EUR", period_start=LAST_MONTH)

    assert (invoice.vat_treatment, invoice.vat, invoice.total) == (VatTreatment.OUTSIDE_EU, 0, 30)
    assert "outside the European Union" in pdf_text(invoice_pdf(invoice))


def test_a_vat_number_of_another_country_is_refused_and_nothing_changes(alpaca):
    with pytest.raises(CampaignError, match="not one of FR"):
        brand_legal_details_save(
            brand=alpaca, legal_name="Alpaca SAS", registration_number="RCS 1", country="FR", vat_id="DE123"
        )

    alpaca.refresh_from_db()
    assert (alpaca.country, alpaca.vat_id) == ("DE", "")


# ---- issuing and numbering ------------------------------------------------------------------------


def test_an_invoice_has_a_line_per_campaign_and_takes_each_fee_once(billed, make_live_campaign):
    winter = make_live_campaign(slug="winter-warm")
    rewards_last_month(winter, count=1, prefix="w")

    issued = invoices_issue()

    (invoice,) = issued
    assert invoice.number == "JB-000001" and invoice.period_start == LAST_MONTH
    lines = {line.campaign_name: (line.actions, line.rewards, line.net) for line in invoice.lines.all()}
    assert lines == {"Summer Glow": (2, 2_00, 30), "Winter Warm": (1, 1_00, 15)}
    assert invoice.net == 45 and not FeeCharge.objects.filter(invoice__isnull=True).exists()
    assert invoices_issue() == []  # a second run issues nothing twice


def test_this_months_fees_wait_for_the_month_to_end(summer, staff_pair):
    plan_for(summer.brand, staff_pair)
    rewards_last_month(summer)
    FeeCharge.objects.update(created_at=timezone.now())

    assert invoices_issue() == []


def test_test_data_is_never_invoiced(alpaca, billed):
    from campaigns.modes import brand_test_twin  # deferred: only this test needs the twin

    assert invoice_issue(brand=brand_test_twin(brand=alpaca), currency="EUR", period_start=LAST_MONTH) is None


def test_the_management_command_issues_what_is_due(billed, capsys):
    call_command("invoices_issue")

    assert "JB-000001" in capsys.readouterr().out
    assert Invoice.objects.count() == 1


def test_a_monthly_schedule_issues_them():
    (schedule,) = [s for s in SCHEDULES if s.func == "campaigns.tasks.invoices_issue_task"]

    assert schedule.monthly and schedule.cadence == "monthly"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_invoices_issued_at_once_are_numbered_without_a_gap(make_user, make_live_campaign, staff_pair):
    """Eight brands' invoices issued by eight threads at once, and each brand's twice: every brand
    gets one invoice, and the numbers are 1 to 8, each once."""
    brands = []
    for number in range(8):
        owner = make_user(f"owner{number}@brand.example")
        brand = verified(_brand(owner, number))
        plan_for(brand, staff_pair)
        campaign = make_live_campaign(slug=f"camp-{number}", brand=brand)
        rewards_last_month(campaign, count=1, prefix=f"b{number}-")
        brands.append(brand)
    barrier = threading.Barrier(16)

    def issue(index):
        try:
            barrier.wait()
            return invoice_issue(brand=brands[index % 8], currency="EUR", period_start=LAST_MONTH).number
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=16) as pool:
        numbers = list(pool.map(issue, range(16)))

    assert sorted(set(numbers)) == [f"JB-{n:06d}" for n in range(1, 9)]
    assert Invoice.objects.count() == 8
    assert InvoiceSequence.objects.get(issuer="JB").last_number == 8


def _brand(owner, number):
    from campaigns.services.brands import brand_create  # deferred: only the race makes brands here

    return brand_create(name=f"Brand {number}", slug=f"brand-{number}", owner=owner, currency="EUR")


# ---- the downloads: the brand's owner and finance only --------------------------------------------


@pytest.fixture
def invoice(billed):
    return invoice_issue(brand=billed, currency="EUR", period_start=LAST_MONTH)


def test_finance_downloads_the_pdf_and_the_csv(client, fiona, invoice):
    client.force_login(fiona)

    pdf = client.get(reverse("brand_invoice_pdf", args=["alpaca", invoice.pk]))
    csv = client.get(reverse("brand_invoice_csv", args=["alpaca", invoice.pk]))

    assert pdf.status_code == 200 and pdf["Content-Type"] == "application/pdf"
    assert pdf.content.startswith(b"%PDF-1.4") and "JB-000001" in pdf_text(pdf.content)
    rows = b"".join(csv.streaming_content).decode("utf-8-sig").splitlines()
    assert rows[0].startswith("Invoice,Period,Campaign")
    assert rows[1].startswith("JB-000001,") and "Summer Glow" in rows[1]
    assert rows[-1].split(",")[7:10] == ["0.30", "0.06", "0.36"]
    assert rows[-1].rstrip().endswith(",VAT due")  # not taken yet: the brand's funds are all budgeted


def test_the_finance_page_lists_the_invoices(client, fiona, invoice):
    client.force_login(fiona)

    text = client.get(reverse("brand_finance", args=["alpaca"])).content.decode()

    assert "JB-000001" in text and reverse("brand_invoice_pdf", args=["alpaca", invoice.pk]) in text
    # Every cent of Alpaca's is in its campaign's budget: the VAT could not be taken yet.
    assert invoice.vat_state == "short" and 'data-vat-state="short">VAT due<' in text


def test_a_viewer_sees_no_invoices_and_may_not_download_them(client, vic, invoice):
    client.force_login(vic)

    assert "JB-000001" not in client.get(reverse("brand_finance", args=["alpaca"])).content.decode()
    assert client.get(reverse("brand_invoice_pdf", args=["alpaca", invoice.pk])).status_code == 403


@pytest.mark.parametrize("kind", ["brand_invoice_pdf", "brand_invoice_csv"])
def test_another_brand_cannot_reach_an_invoice(client, bob, bison, invoice, kind):
    client.force_login(bob)

    assert client.get(reverse(kind, args=["alpaca", invoice.pk])).status_code == 404
    assert client.get(reverse(kind, args=["bison", invoice.pk])).status_code == 404
    assert client.get(reverse(kind, args=["bison--test", invoice.pk])).status_code == 404


def test_the_pdf_is_written_in_the_readers_language(invoice):
    with translation.override("de"):
        german = pdf_text(invoice_pdf(invoice))
    with translation.override("zh-hans"):
        chinese = invoice_pdf(invoice)

    assert "Rechnung JB-000001" in german
    assert b"/UniGB-UCS2-H" in chinese and re.search(rb"<[0-9A-F]{8,}> Tj", chinese)


def test_the_pdf_is_well_formed():
    """Each object where the cross-reference table says it is, and the table where startxref says."""
    from campaigns.invoice_pdf import Page, pdf_document  # deferred: the writer alone, no invoice

    page = Page()
    page.text(50, 800, "Grüße (and a bracket) \\ 中文")
    page.text(50, 780, "Straße", bold=True)
    pdf = pdf_document(pages=[page, Page()], title="Test")

    startxref = int(re.search(rb"startxref\n(\d+)\n%%EOF\n$", pdf).group(1))
    assert pdf[startxref:].startswith(b"xref\n0 ")
    offsets = re.findall(rb"(\d{10}) 00000 n ", pdf[startxref:])
    for number, offset in enumerate(offsets, start=1):
        assert pdf[int(offset) :].startswith(b"%d 0 obj\n" % number)
    assert b"/Count 2" in pdf


def pdf_text(pdf: bytes) -> str:
    """The Latin text of the page streams, as a reader would extract it."""
    found = []
    for literal in re.findall(rb"\(((?:\\.|[^\\)])*)\) Tj", pdf):
        unescaped = re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m[1], 8)]), literal)
        unescaped = re.sub(rb"\\(.)", rb"\1", unescaped)
        found.append(unescaped.decode("cp1252"))
    return "\n".join(found)
