"""A reverse charge rests on the EU's VIES: a brand's VAT number is asked of VIES (its REST API,
POST /check-vat-number) by the `payouts-vies-checks` schedule, and only a number VIES confirmed
valid is reverse-charged, with VIES's consultation number and date kept on the brand and the
invoice. Fail closed: a number VIES says is not valid, or that VIES could not answer for (a member
state's register down, too many requests), is charged VAT and the brand is told in words; VIES is
asked again on a backoff. The sandbox VIES answers and fails in VIES's format.
"""

import json
from datetime import timedelta

import httpx
import pytest
from django.urls import reverse
from django.utils import timezone, translation

from campaigns.invoice_documents import invoice_pdf
from campaigns.models import Brand, Invoice, VatIdCheck, VatTreatment
from campaigns.modes import brand_test_twin
from campaigns.services.brands import brand_vat_id_save
from campaigns.services.funding import brand_deposit_record
from campaigns.services.invoices import invoice_issue
from payouts import vat_ids
from payouts.providers import vies
from tests.campaigns.test_invoices import LAST_MONTH, pdf_text, plan_for, rewards_last_month

pytestmark = pytest.mark.django_db

# VIES's answer for a valid number asked with the requester's own number, as the Commission's REST
# API gives it (a member state that does not share the trader's name and address says "---").
VIES_VALID = {
    "countryCode": "FR",
    "vatNumber": "12345678901",
    "requestDate": "2026-12-06T10:15:30.123Z",
    "valid": True,
    "requestIdentifier": "WAPIAAAAX3lU8bHe",
    "name": "ALPACA SAS",
    "address": "1 RUE DU CAFE\n75001 PARIS",
    "traderName": "",
    "traderNameMatch": "NOT_PROCESSED",
}


def vies_error(code: str) -> dict:
    return {"actionSucceed": False, "errorWrappers": [{"error": code, "message": code}]}


@pytest.fixture(autouse=True)
def requester(settings):
    settings.INVOICE_ISSUER_VAT_ID = "DE 811 907 980"


def answering(monkeypatch, reply):
    """VIES answering each request with `reply(request)`; the requests are kept."""
    sent = []

    def handler(request):
        sent.append(request)
        return reply(request)

    client = httpx.Client(transport=httpx.MockTransport(handler), base_url="http://sandbox.localhost")
    monkeypatch.setattr(vies, "http_client", lambda: client)
    return sent


def french(brand, vat_id="FR12345678901") -> Brand:
    Brand.objects.filter(pk=brand.pk).update(country="FR", vat_id=vat_id, vies_next_check_at=timezone.now())
    brand.refresh_from_db()
    return brand


# ---- the adapter: VIES's request and answers --------------------------------------------------------


def test_the_request_is_vies_check_vat_number_with_the_requesters_number(monkeypatch):
    sent = answering(monkeypatch, lambda request: httpx.Response(200, json=VIES_VALID))

    answer = vies.vat_number_check(vat_id="FR12345678901")

    (request,) = sent
    assert request.method == "POST" and request.url.path.endswith("/rest-api/check-vat-number")
    assert json.loads(request.content) == {
        "countryCode": "FR",
        "vatNumber": "12345678901",
        "requesterMemberStateCode": "DE",
        "requesterNumber": "811907980",
    }
    assert answer == vies.ViesAnswer(
        valid=True,
        request_date="2026-12-06T10:15:30.123Z",
        request_identifier="WAPIAAAAX3lU8bHe",
        name="ALPACA SAS",
        address="1 RUE DU CAFE\n75001 PARIS",
    )


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (200, "MS_UNAVAILABLE"),
        (200, "MS_MAX_CONCURRENT_REQ"),
        (200, "GLOBAL_MAX_CONCURRENT_REQ"),
        (500, "SERVICE_UNAVAILABLE"),
        (500, "TIMEOUT"),
        (400, "INVALID_REQUESTER_INFO"),
        (400, "IP_BLOCKED"),
    ],
)
def test_an_error_that_says_nothing_of_the_number_is_unavailable_whatever_the_http_status(
    monkeypatch, status, code
):
    answering(monkeypatch, lambda request: httpx.Response(status, json=vies_error(code)))

    with pytest.raises(vies.ViesUnavailable) as unavailable:
        vies.vat_number_check(vat_id="FR12345678901")
    assert unavailable.value.code == code


@pytest.mark.parametrize("code", ["INVALID_INPUT", "VAT_BLOCKED"])
def test_a_number_vies_refuses_is_not_valid(monkeypatch, code):
    answering(monkeypatch, lambda request: httpx.Response(400, json=vies_error(code)))

    assert vies.vat_number_check(vat_id="FR12345678901") == vies.ViesAnswer(valid=False, error=code)


def test_no_answer_is_unavailable_never_a_guess(monkeypatch):
    answering(monkeypatch, lambda request: httpx.Response(502, text="<html>Bad gateway</html>"))
    with pytest.raises(vies.ViesUnavailable, match="HTTP_502"):
        vies.vat_number_check(vat_id="FR12345678901")

    def lost(request):
        raise httpx.ConnectTimeout("timed out", request=request)

    answering(monkeypatch, lost)
    with pytest.raises(vies.ViesUnavailable, match="NETWORK"):
        vies.vat_number_check(vat_id="FR12345678901")


# ---- the sandbox VIES, in VIES's format ---------------------------------------------------------


def sandbox_asks(vat_id: str, **body):
    with vies.http_client() as client:
        return client.post(
            "/sandbox/vies/rest-api/check-vat-number",
            json={"countryCode": vat_id[:2], "vatNumber": vat_id[2:], **body},
        )


def test_the_sandbox_answers_as_vies_does():
    asked = sandbox_asks("FR12345678901", requesterMemberStateCode="DE", requesterNumber="811907980")
    answer = asked.json()
    assert asked.status_code == 200 and set(VIES_VALID) <= set(answer)
    assert answer["valid"] is True and answer["requestIdentifier"].startswith("WAPI")
    # Without the requester's number VIES gives no consultation number.
    assert "requestIdentifier" not in sandbox_asks("FR12345678901").json()
    assert sandbox_asks("FR12345678200").json()["valid"] is False


@pytest.mark.parametrize(
    ("vat_id", "body", "status", "code"),
    [
        ("FR12345678301", {}, 200, "MS_UNAVAILABLE"),
        ("FR12345678600", {}, 200, "MS_MAX_CONCURRENT_REQ"),
        ("FR12345678300", {}, 500, "SERVICE_UNAVAILABLE"),
        ("FR12345678302", {}, 500, "TIMEOUT"),
        ("FR12345678201", {}, 400, "INVALID_INPUT"),
        ("GR123456789", {}, 400, "INVALID_INPUT"),  # Greece is EL in VIES
        ("FR1", {}, 400, "INVALID_INPUT"),
        (
            "FR12345678901",
            {"requesterMemberStateCode": "US", "requesterNumber": "1"},
            400,
            "INVALID_REQUESTER_INFO",
        ),
    ],
)
def test_the_sandbox_fails_as_vies_fails(vat_id, body, status, code):
    asked = sandbox_asks(vat_id, **body)

    assert asked.status_code == status
    assert asked.json() == {
        "actionSucceed": False,
        "errorWrappers": [{"error": code, "message": asked.json()["errorWrappers"][0]["message"]}],
    }


# ---- as the brand sees it: its VAT number, its invoices ------------------------------------------


@pytest.fixture
def billed(summer, make_user):
    staff = make_user("sam@joyback.example", is_staff=True), make_user("tara@joyback.example", is_staff=True)
    plan_for(summer.brand, staff)
    rewards_last_month(summer)
    return summer.brand


def finance_page(client, user) -> str:
    client.force_login(user)
    return client.get(reverse("brand_finance", args=["alpaca"])).content.decode()


def test_a_number_vies_confirms_is_reverse_charged_with_its_consultation_number(client, alice, billed):
    client.force_login(alice)
    Brand.objects.filter(pk=billed.pk).update(country="FR")
    saved = client.post(reverse("brand_vat_id", args=["alpaca"]), {"vat_id": "fr 123 456 789 01"})
    assert saved.status_code == 302
    assert 'data-vies="unchecked"' in finance_page(client, alice)
    assert "Being checked with the EU&#x27;s VIES" in finance_page(client, alice)

    assert vat_ids.vat_ids_check() == {"valid": 1}

    billed.refresh_from_db()
    assert (billed.vat_id, billed.vies_status, billed.vies_vat_id) == (
        "FR12345678901",
        "valid",
        "FR12345678901",
    )
    assert billed.vies_request_identifier.startswith("WAPI") and billed.vies_request_date
    page = finance_page(client, alice)
    assert 'data-vies="valid"' in page and billed.vies_request_identifier in page
    invoice = invoice_issue(brand=billed, currency="EUR", period_start=LAST_MONTH)
    assert (invoice.vat_treatment, invoice.vat, invoice.total) == (VatTreatment.REVERSE_CHARGE, 0, 30)
    assert (invoice.customer_vies_status, invoice.customer_vies_request_identifier) == (
        "valid",
        billed.vies_request_identifier,
    )
    assert "data-vies-evidence" in finance_page(client, alice)
    assert f"consultation number {billed.vies_request_identifier}" in pdf_text(invoice_pdf(invoice))
    assert vat_ids.vat_ids_check() == {}  # confirmed: asked again in a month
    assert vat_ids.vat_ids_check(now=timezone.now() + vat_ids.RECHECK_VALID) == {"valid": 1}


def test_a_number_vies_says_is_not_valid_is_charged_vat_and_the_brand_is_told(client, alice, billed):
    french(billed, "FR12345678200")

    assert vat_ids.vat_ids_check() == {"invalid": 1}

    billed.refresh_from_db()
    invoice = invoice_issue(brand=billed, currency="EUR", period_start=LAST_MONTH)
    assert (invoice.vat_treatment, invoice.vat_rate_bps, invoice.vat) == (VatTreatment.DOMESTIC, 1900, 6)
    assert invoice.customer_vies_status == "invalid"
    page = finance_page(client, alice)
    assert 'data-vat-hint="invalid"' in page and "FR12345678200" in page
    assert 'data-vies-charged="invalid"' in page
    with translation.override("de"):
        assert (
            "VIES" in str(VatIdCheck.INVALID.label)
            and str(VatIdCheck.INVALID.label) != "Not known to the EU's VIES"
        )


def test_vies_unavailable_is_asked_again_later_and_the_invoice_meanwhile_carries_vat(client, alice, billed):
    french(billed, "FR12345678301")  # France's register: MS_UNAVAILABLE

    assert vat_ids.vat_ids_check() == {"unavailable": 1}
    billed.refresh_from_db()
    assert (billed.vies_status, billed.vies_error) == ("unavailable", "MS_UNAVAILABLE")
    assert vat_ids.vat_ids_check() == {}  # not asked every run
    first_retry = billed.vies_next_check_at - timezone.now()
    assert timedelta(minutes=14) < first_retry <= vat_ids.RETRY_AFTER
    later = timezone.now() + timedelta(hours=1)
    assert vat_ids.vat_ids_check(now=later) == {"unavailable": 1}
    billed.refresh_from_db()
    assert billed.vies_next_check_at - later > vat_ids.RETRY_AFTER  # the backoff grew

    invoice = invoice_issue(brand=billed, currency="EUR", period_start=LAST_MONTH)
    assert (invoice.vat_treatment, invoice.vat) == (VatTreatment.DOMESTIC, 6)
    assert invoice.customer_vies_status == "unavailable"
    page = finance_page(client, alice)
    assert 'data-vat-hint="unavailable"' in page and 'data-vies-charged="unavailable"' in page


def test_vies_unavailable_later_keeps_a_confirmation_of_the_same_number(billed, monkeypatch):
    french(billed)
    assert vat_ids.vat_ids_check() == {"valid": 1}
    answering(monkeypatch, lambda request: httpx.Response(200, json=vies_error("MS_UNAVAILABLE")))

    assert vat_ids.vat_ids_check(now=timezone.now() + vat_ids.RECHECK_VALID) == {"unavailable": 1}

    billed.refresh_from_db()
    assert billed.vies_status == "valid" and billed.vies_error == "MS_UNAVAILABLE"
    invoice = invoice_issue(brand=billed, currency="EUR", period_start=LAST_MONTH)
    assert invoice.vat_treatment == VatTreatment.REVERSE_CHARGE


def test_a_changed_number_is_unconfirmed_until_vies_answers_for_it(billed):
    french(billed)
    assert vat_ids.vat_ids_check() == {"valid": 1}

    billed = brand_vat_id_save(brand=billed, vat_id="FR98765432109")

    invoice = invoice_issue(brand=billed, currency="EUR", period_start=LAST_MONTH)
    assert (invoice.vat_treatment, invoice.customer_vies_status) == (VatTreatment.DOMESTIC, "unchecked")


def test_an_answer_about_a_number_changed_meanwhile_is_not_kept(billed, monkeypatch):
    french(billed)

    def changed_while_asked(request):
        Brand.objects.filter(pk=billed.pk).update(vat_id="FR98765432109")
        return httpx.Response(200, json=VIES_VALID)

    answering(monkeypatch, changed_while_asked)
    assert vat_ids.vat_ids_check() == {"changed": 1}
    billed.refresh_from_db()
    assert billed.vies_status == "unchecked" and billed.vies_vat_id == ""


def test_a_bad_number_is_refused_clearly_and_nothing_changes(client, alice, billed):
    Brand.objects.filter(pk=billed.pk).update(country="FR")
    client.force_login(alice)

    refused = client.post(reverse("brand_vat_id", args=["alpaca"]), {"vat_id": "DE123456789"})

    assert refused.status_code == 400
    assert "This VAT number is not one of FR" in refused.content.decode()
    billed.refresh_from_db()
    assert billed.vat_id == ""


def test_only_the_owner_changes_the_number(client, fiona, billed):
    client.force_login(fiona)

    assert (
        client.post(reverse("brand_vat_id", args=["alpaca"]), {"vat_id": "FR12345678901"}).status_code == 403
    )
    billed.refresh_from_db()
    assert billed.vat_id == ""


def test_brands_vies_does_not_decide_for_are_not_asked(billed, alpaca):
    Brand.objects.filter(pk=billed.pk).update(vat_id="DE123456789")  # the platform's own country
    twin = brand_test_twin(brand=alpaca)
    Brand.objects.filter(pk=twin.pk).update(country="FR", vat_id="FR12345678901")

    assert vat_ids.vat_ids_check() == {}


def test_the_checks_run_on_their_schedule():
    from joyback.background import SCHEDULES  # deferred: only this test reads the schedules

    (schedule,) = [item for item in SCHEDULES if item.func == "payouts.tasks.vat_ids_check_task"]
    assert schedule.minutes and timedelta(minutes=schedule.minutes) <= vat_ids.RETRY_AFTER


# ---- the finance page's balance rows ----------------------------------------------------------------


def test_each_row_of_balances_says_its_currency(client, alice, alpaca):
    brand_deposit_record(brand=alpaca, amount=100_00, currency="EUR", bank_reference="EUR-1")
    brand_deposit_record(brand=alpaca, amount=200_00, currency="USD", bank_reference="USD-1")

    page = finance_page(client, alice)

    assert 'data-currency-row="EUR"' in page and 'data-currency-row="USD"' in page
    assert page.index("In EUR") < page.index("€100.00") < page.index("In USD") < page.index("$200.00")
    assert Invoice.objects.count() == 0
