"""Standalone payouts through the API: a brand's backend pays somebody, follows the payout by GET
and by webhook, cancels it while it may; bad input is refused field by field with nothing stored."""

import json

import pytest
from django.test import Client

from joyback.api.keys import api_key_create, api_key_rotate
from joyback.api.webhooks.endpoints import webhook_endpoint_create
from joyback.ledger.models import Account, AccountKind
from joyback.ledger.selectors import ledger_drift
from payouts.models import PayeeAccount, Payout, SandboxBankPayment
from payouts.submission.sweeps import payouts_sweep
from tests.api.conftest import Api
from tests.conftest import fund
from tests.payouts.conftest import IBANS
from tests.verification.test_claim_races import race
from verification.models import Participant

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _new_accounts_need_no_second_approval(settings):
    """These tests are about the payout itself; the controls on payouts (limits, the second
    approval of a first payout to an account) are tested in tests/payouts/test_payout_controls.py."""
    settings.PAYOUT_NEW_ACCOUNT_APPROVAL = False


def payout_body(amount=25_00, currency="EUR", **payee):
    return {
        "amount": amount,
        "currency": currency,
        "payee": {"name": "Mo Manual", "email": "mo@example.com", "iban": IBANS["settle"], **payee},
    }


# A payee abroad's address: international transfers carry it.
TORONTO = {
    "address_line": "200 Bay Street",
    "address_city": "Toronto",
    "address_postal_code": "M5J 2J5",
    "address_region": "ON",
    "address_country": "CA",
}


def funding(brand):
    return Account.objects.get(kind=AccountKind.BRAND_FUNDING, brand_id=brand.pk, currency="EUR").balance


@pytest.fixture
def funded(alpaca):
    fund(alpaca, 2_000_00, "EUR", reference="DEP-API")
    return alpaca


@pytest.fixture
def api(make_api, funded):
    return make_api(funded, scopes=("read", "payouts"))


def nothing_stored():
    return not (Payout.objects.exists() or PayeeAccount.objects.exists() or Participant.objects.exists())


def test_a_small_payout_is_made_and_paid(api, funded, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post("payouts", payout_body(), idempotency_key="p-1")

    assert response.status_code == 201
    made = response.json()
    assert (made["status"], made["amount"], made["currency"], made["manual"]) == (
        "created",
        25_00,
        "EUR",
        True,
    )
    assert [step["to_status"] for step in made["history"]] == ["created"]
    assert funding(funded) == 2_000_00 - 25_00
    later = api.get(f"payouts/{made['id']}").json()
    assert later["status"] == "settled"
    assert [step["to_status"] for step in later["history"]][-1] == "settled"


def test_payee_details_never_come_back_unmasked(api, django_capture_on_commit_callbacks):
    body = payout_body(phone="+49 151 23456789")
    made = api.post("payouts", body).json()
    for text in (
        json.dumps(made),
        api.get(f"payouts/{made['id']}").content.decode(),
        api.get("payouts").content.decode(),
    ):
        for secret in ("Mo Manual", "mo@example.com", "+4915123456789", IBANS["settle"], "370400440532"):
            assert secret not in text
    assert made["payee"]["name"] == "M••• M•••"
    assert made["payee"]["email"] == "m•••@example.com"
    assert made["payee"]["account"].endswith("3000")


def test_above_the_threshold_it_waits_for_approval_in_the_dashboard(api, settings):
    settings.PAYOUT_APPROVAL_THRESHOLD = 500_00
    made = api.post("payouts", payout_body(amount=900_00)).json()
    assert made["status"] == "awaiting_approval"
    assert not SandboxBankPayment.objects.exists()


@pytest.mark.parametrize(
    ("currency", "payee", "field"),
    [
        ("GBP", {"iban": "", "sort_code": "12-34-56", "account_number": "31926819"}, None),
        ("USD", {"iban": "", "routing_number": "011000015", "account_number": "123456789"}, None),
        ("CAD", {"iban": "", "bic": "ROYCCAT2", "account_number": "12345678", **TORONTO}, None),
        ("CAD", {"iban": "", "bic": "ROYCCAT2", "account_number": "12345678"}, "payee.address_line"),
        ("GBP", {"iban": "", "sort_code": "1234", "account_number": "31926819"}, "payee.sort_code"),
        (
            "USD",
            {"iban": "", "routing_number": "011000016", "account_number": "1234"},
            "payee.routing_number",
        ),
        ("CAD", {"iban": "", "bic": "NOPE", "account_number": "12345678", **TORONTO}, "payee.bic"),
    ],
)
def test_each_rail_takes_its_own_bank_details(api, funded, currency, payee, field):
    fund(funded, 1_000_00, currency, reference=f"DEP-{currency}")
    response = api.post("payouts", payout_body(amount=10_00, currency=currency, **payee))
    if field is None:
        assert response.status_code == 201, response.json()
        assert response.json()["currency"] == currency
    else:
        assert response.status_code == 400
        assert response.json()["error"]["field"] == field
        assert not Payout.objects.exists()


@pytest.mark.parametrize(
    ("body", "field", "code"),
    [
        (payout_body(iban="DE89370400440532013001"), "payee.iban", "invalid"),
        (payout_body(email="", phone=""), "payee", "invalid"),
        (payout_body(email="not-an-email"), "payee.email", "invalid"),
        (payout_body(phone="12"), "payee.phone", "invalid"),
        (payout_body(name=""), "payee.name", "blank"),
        (payout_body(amount="12.50"), "amount", "invalid"),
        (payout_body(amount=0), "amount", "min_value"),
        (payout_body(currency="XYZ"), "currency", "invalid_currency"),
        (payout_body(currency="CHF"), "currency", "currency_unsupported"),
        (payout_body(amount=5_000_00), "amount", "insufficient_funds"),
        ({"amount": 10_00, "currency": "EUR"}, "payee", "required"),
    ],
)
def test_bad_input_is_refused_with_its_field_and_nothing_is_stored(api, funded, body, field, code):
    response = api.post("payouts", body)

    assert response.status_code in (400, 409), response.content
    error = response.json()["error"]
    assert (error["field"], error["code"]) == (field, code)
    assert error["message"]
    assert nothing_stored()
    assert funding(funded) == 2_000_00


def test_payouts_need_the_payouts_scope(make_api, funded):
    reader = make_api(funded, scopes=("read", "events"))
    assert reader.post("payouts", payout_body()).status_code == 403
    assert reader.get("payouts").status_code == 403
    assert nothing_stored()


def test_the_list_filters_by_status_and_creation_time(api, settings):
    settings.PAYOUT_APPROVAL_THRESHOLD = 500_00
    small = api.post("payouts", payout_body(amount=10_00)).json()
    large = api.post("payouts", payout_body(amount=600_00)).json()

    assert [row["id"] for row in api.get("payouts").json()["data"]] == [large["id"], small["id"]]
    waiting = api.get("payouts", status="awaiting_approval").json()["data"]
    assert [row["id"] for row in waiting] == [large["id"]]
    assert api.get("payouts", created_after=small["created_at"]).json()["data"]
    assert api.get("payouts", created_before=small["created_at"]).json()["data"] == []
    page = api.get("payouts", limit=1).json()
    assert page["has_more"] and [row["id"] for row in page["data"]] == [large["id"]]
    rest = api.get("payouts", limit=1, starting_after=large["id"]).json()
    assert [row["id"] for row in rest["data"]] == [small["id"]] and not rest["has_more"]
    for name, value in (("status", "paid"), ("created_after", "yesterday")):
        response = api.get("payouts", **{name: value})
        assert response.status_code == 400 and response.json()["error"]["field"] == name


def test_a_payout_not_yet_sent_is_cancelled_and_the_money_returns(api, funded, settings):
    settings.PAYOUT_APPROVAL_THRESHOLD = 500_00
    made = api.post("payouts", payout_body(amount=900_00)).json()

    response = api.post(f"payouts/{made['id']}/cancel", None, idempotency_key="c-1")

    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    assert funding(funded) == 2_000_00
    assert ledger_drift() == []
    again = api.post(f"payouts/{made['id']}/cancel", None)
    assert again.status_code == 409 and again.json()["error"]["code"] == "payout_not_cancellable"


def test_a_sent_payout_cannot_be_cancelled(api, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        made = api.post("payouts", payout_body()).json()

    response = api.post(f"payouts/{made['id']}/cancel", None)

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "payout_not_cancellable"
    assert Payout.objects.get().status == "settled"


def test_the_same_idempotency_key_makes_one_payout(api, funded):
    first = api.post("payouts", payout_body(), idempotency_key="pay-once")
    again = api.post("payouts", payout_body(), idempotency_key="pay-once")
    other = api.post("payouts", payout_body(amount=26_00), idempotency_key="pay-once")

    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and again["Idempotent-Replayed"] == "true"
    assert other.status_code == 422
    assert Payout.objects.count() == 1 and funding(funded) == 2_000_00 - 25_00


def test_a_retry_across_a_key_rotation_makes_one_payout(client, funded):
    issued = api_key_create(brand_id=funded.pk, name="backend", scopes=["payouts"])
    first = Api(client, issued.secret).post("payouts", payout_body(), idempotency_key="pay-mo")
    rotated = api_key_rotate(api_key=issued.api_key).secret

    again = Api(client, rotated).post("payouts", payout_body(), idempotency_key="pay-mo")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and again["Idempotent-Replayed"] == "true"
    other = Api(client, rotated).post("payouts", payout_body(amount=26_00), idempotency_key="pay-mo")
    assert other.status_code == 422 and other.json()["error"]["code"] == "idempotency_key_reused"
    assert Payout.objects.count() == 1 and funding(funded) == 2_000_00 - 25_00
    assert SandboxBankPayment.objects.count() <= 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_requests_racing_with_the_same_key_make_one_payout(funded):
    secret = api_key_create(brand_id=funded.pk, name="backend", scopes=["payouts"]).secret
    answers = race(8, lambda i: Api(Client(), secret).post("payouts", payout_body(), idempotency_key="herd"))
    codes = [answer.status_code for answer in answers]
    assert len(codes) == 8 and set(codes) <= {201, 409} and codes.count(201) >= 1
    made = {answer.json()["id"] for answer in answers if answer.status_code == 201}
    assert len(made) == 1
    assert Payout.objects.count() == 1 and funding(funded) == 2_000_00 - 25_00


@pytest.mark.parametrize(
    ("iban", "events", "final"),
    [
        (IBANS["settle"], ["payout.settled"], "settled"),
        (IBANS["AC01"], ["payout.rejected"], "rejected"),
        (IBANS["return_AC04"], ["payout.settled", "payout.returned"], "returned"),
    ],
)
def test_the_brand_follows_its_payout_by_webhook(
    api, funded, receiver, django_capture_on_commit_callbacks, iban, events, final
):
    webhook_endpoint_create(
        brand_id=funded.pk,
        url="https://shop.example/hooks",
        event_types=["payout.settled", "payout.rejected", "payout.returned"],
    )
    with django_capture_on_commit_callbacks(execute=True):
        made = api.post("payouts", payout_body(iban=iban)).json()
    with django_capture_on_commit_callbacks(execute=True):
        payouts_sweep()  # the PSP's feed: a return comes days after the settlement

    bodies = receiver.bodies()
    assert [body["type"] for body in bodies] == events
    assert {body["data"]["payout_id"] for body in bodies} == {made["id"]}
    assert bodies[-1]["data"]["status"] == final
    assert bodies[-1]["data"]["amount"] == 25_00 and bodies[-1]["data"]["currency"] == "EUR"
    assert "Mo Manual" not in json.dumps(bodies) and IBANS["settle"][4:] not in json.dumps(bodies)
    assert api.get(f"payouts/{made['id']}").json()["status"] == final


def test_the_reconciliation_report_sums_the_brands_money_per_currency(
    api, funded, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        api.post("payouts", payout_body(amount=30_00))

    rows = api.get("reconciliation/report").json()["data"]

    eur = next(row for row in rows if row["currency"] == "EUR")
    assert (eur["funded"], eur["paid"], eur["in_transit"], eur["returned"]) == (2_000_00, 30_00, 0, 0)
    assert eur["available"] == 2_000_00 - 30_00
    assert {"reserved", "unmatched", "unmatched_amount"} <= eur.keys()


def test_an_unverified_brand_cannot_pay_out_by_api(client, make_user):
    """Signed up, key made: no payout until staff verify (nor any account to fund before)."""
    from campaigns.services.brands import brand_create

    dodo = brand_create(name="Dodo Drinks", slug="dodo", owner=make_user("dora@dodo.example"))
    api = Api(client, api_key_create(brand_id=dodo.pk, name="backend", scopes=["payouts"]).secret)

    response = api.post("payouts", payout_body())

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "brand_not_verified"
    assert "verified the brand" in response.json()["error"]["message"]
    assert nothing_stored() and not SandboxBankPayment.objects.exists()
