"""Adyen's refusals, as the sandbox bank gives them on demand and the adapter reads them.

The sandbox answers a transfer of a magic amount (or to a payee named "Sandbox error <status>")
with the error Adyen documents for that status, in Adyen's shapes (validated against the published
schemas). The adapter raises a typed refusal carrying Adyen's errorCode and words; what the payout's
lifecycle does with it is tests/payouts/test_adyen_refusal_outcomes.py's business.
"""

import httpx
import pytest

from payouts import psp
from payouts.models import SandboxBankPayment
from payouts.providers import adyen, adyen_funding, adyen_onboarding
from payouts.sandbox.bank import MAGIC_ERROR_AMOUNTS, RETRY_AFTER_SECONDS
from tests.payouts.test_adyen_transfers import TRANSFERS, order, recording_client, spec_errors

pytestmark = pytest.mark.django_db

URL = "/sandbox/bank/btl/v4/transfers"
AMOUNT_FOR = {status: amount for amount, status in MAGIC_ERROR_AMOUNTS.items()}


def sandbox_post(client, body):
    return client.post(
        URL,
        data=body,
        content_type="application/json",
        headers={"X-API-Key": "sbx-adyen-api-key", "Idempotency-Key": "joyback-payout-magic"},
    )


@pytest.mark.parametrize(
    ("status", "schema"),
    [
        (401, "ServiceError"),
        (403, "TransferServiceRestServiceError"),
        (422, "TransferServiceRestServiceError"),
        (429, "TransferServiceRestServiceError"),
        (500, "TransferServiceRestServiceError"),
    ],
)
def test_the_sandbox_answers_each_magic_amount_with_adyens_documented_error(client, status, schema):
    response = sandbox_post(client, adyen.transfer_request(order("fps", amount=AMOUNT_FOR[status])))

    assert response.status_code == status
    assert spec_errors(TRANSFERS, schema, response.json()) == []
    assert not SandboxBankPayment.objects.exists()  # a refusal makes nothing


@pytest.mark.parametrize("scheme", ["sepa_instant", "fps", "ach", "swift"])
def test_an_invalid_field_is_a_typed_refusal_with_adyens_code_and_words(scheme):
    with pytest.raises(adyen.AdyenRefused) as refused:
        adyen.transfer_submit(order(scheme, amount=4_22))

    error = refused.value
    assert isinstance(error, psp.PspError)  # the payout's lifecycle sees what it always saw
    assert (error.status, error.error_code) == (422, "30_112")
    assert error.title == "Invalid transfer information provided"
    assert error.invalid_fields[0][0] == "counterparty.bankAccount.accountHolder.fullName"
    assert "30_112" in str(error) and "not supported" in str(error)
    assert not SandboxBankPayment.objects.exists()


def test_a_payee_named_for_an_error_gets_it():
    with pytest.raises(adyen.AdyenRefused) as refused:
        psp.payment_submit(order("sepa_instant", creditor_name="Sandbox error 403"))
    assert (refused.value.status, refused.value.error_code) == (403, "00_403")


def test_a_wrong_key_is_a_typed_refusal_in_adyens_service_error_words():
    with pytest.raises(adyen.AdyenRefused) as refused:
        psp.payment_submit(order("fps", amount=4_01))
    assert (refused.value.status, refused.value.error_code) == (401, "000")
    assert refused.value.title == "security" and "Unauthorized" in refused.value.detail


def test_too_many_requests_says_how_long_to_wait():
    with pytest.raises(adyen.AdyenRateLimited) as refused:
        adyen.transfer_submit(order("ach", amount=4_29))
    assert refused.value.status == 429 and refused.value.retry_after == RETRY_AFTER_SECONDS
    assert not SandboxBankPayment.objects.exists()


@pytest.mark.parametrize("amount", [5_03, 5_04], ids=["server-error", "timeout"])
def test_a_server_error_or_a_timeout_is_unknown_not_a_refusal(amount):
    with pytest.raises(psp.PspUnknown):
        psp.payment_submit(order("swift", amount=amount))
    assert not SandboxBankPayment.objects.exists()


def test_a_refusal_without_a_json_body_keeps_what_adyen_said(monkeypatch):
    recording_client(monkeypatch, lambda request: httpx.Response(403, text="<html>Forbidden</html>"))
    with pytest.raises(adyen.AdyenRefused) as refused:
        psp.payment_submit(order("fps"))
    assert refused.value.status == 403 and "Forbidden" in refused.value.detail


def test_funding_calls_refuse_with_the_same_typed_refusal(monkeypatch):
    problem = {
        "type": "https://docs.adyen.com/errors/validation",
        "title": "Invalid balance account information provided",
        "status": 422,
        "detail": "Invalid description",
        "errorCode": "30_011",
        "invalidFields": [{"name": "description", "value": "x", "message": "Too long"}],
    }
    recording_client(monkeypatch, lambda request: httpx.Response(422, json=problem))
    with pytest.raises(adyen.AdyenRefused) as refused:
        adyen_funding.account_open(
            key="k",
            account_holder_id="AH1",
            currency="EUR",
            reference="r",
            description="d",
            opened=adyen_funding.OpenedAccount(),
        )
    assert refused.value.error_code == "30_011"
    # The onboarding calls refuse the same way.
    with pytest.raises(adyen.AdyenRefused) as refused:
        adyen_onboarding.legal_entity_create(
            key="k", legal_name="Alpaca GmbH", registration_number="", country="DE", reference="r"
        )
    assert refused.value.error_code == "30_011"
    assert refused.value.invalid_fields == (("description", "x", "Too long"),)


def test_the_sandbox_refuses_what_adyens_descriptions_forbid_as_adyen_does(client):
    """The request the adapter used to send: a 32-character beneficiary reference to a UK account,
    an untransliterated name, a cross-border transfer with no address."""
    body = adyen.transfer_request(order("swift"))
    body["referenceForBeneficiary"] = "JB0123456789ABCDEF0123456789ABCD"
    body["counterparty"]["bankAccount"]["accountHolder"] = {"fullName": "Zoë Łukasiewicz"}

    response = sandbox_post(client, body)

    assert response.status_code == 422
    assert spec_errors(TRANSFERS, "TransferServiceRestServiceError", response.json()) == []
    assert {field["name"] for field in response.json()["invalidFields"]} == {
        "referenceForBeneficiary",
        "counterparty.bankAccount.accountHolder.fullName",
        "counterparty.bankAccount.accountHolder.address",
    }
    assert not SandboxBankPayment.objects.exists()
    assert sandbox_post(client, adyen.transfer_request(order("swift"))).status_code == 202
