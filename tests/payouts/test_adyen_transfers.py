"""Payouts through Adyen's balance platform Transfers API, as Adyen and its webhooks see them.

The requests are validated against the schemas of Adyen's published OpenAPI specification (the
parts kept in tests/payouts/adyen/, MIT licence), and the webhooks are Adyen's documented examples
carrying our payout's reference, signed as Adyen signs them.
"""

import base64
import copy
import hashlib
import hmac
import json
from pathlib import Path

import httpx
import pytest
from django.test import override_settings
from django.urls import reverse
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from joyback.ledger.models import Account, AccountKind
from joyback.ledger.selectors import ledger_drift
from payouts import psp
from payouts.bank_accounts import BankAccount, Rail
from payouts.models import Payout, SandboxBankPayment
from payouts.notifications import reason_text
from payouts.providers import adyen
from payouts.submission.create import payout_for_participant
from payouts.submission.submit import payout_status_check, payout_submit
from payouts.submission.sweeps import payouts_sweep
from payouts.submission.webhooks import transfer_events_process, transfer_webhook_receive
from tests.conftest import provider_events
from tests.payouts.conftest import IBANS, enqueue_replace

pytestmark = pytest.mark.django_db

SPEC_DIR = Path(__file__).parent / "adyen"
TRANSFERS = json.loads((SPEC_DIR / "TransferService-v4.subset.json").read_text())
NOTIFICATIONS = json.loads((SPEC_DIR / "BalancePlatformTransferNotification-v4.subset.json").read_text())
KEY = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"
NEXT_KEY = "0F1E2D3C4B5A69788796A5B4C3D2E1F00F1E2D3C4B5A69788796A5B4C3D2E1F0"
WEBHOOK = "/webhooks/adyen/balance-platform/"


def validator(spec: dict, schema: str) -> Draft202012Validator:
    resource = Resource.from_contents(spec, default_specification=DRAFT202012)
    registry = Registry().with_resource("urn:spec", resource)
    return Draft202012Validator({"$ref": f"urn:spec#/components/schemas/{schema}"}, registry=registry)


def spec_errors(spec: dict, schema: str, instance: dict) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator(spec, schema).iter_errors(instance)]


def example(spec: dict, name: str) -> dict:
    return copy.deepcopy(spec["components"]["examples"][name]["value"])


def sign(body: bytes, key: str = KEY) -> str:
    return base64.b64encode(hmac.new(bytes.fromhex(key), body, hashlib.sha256).digest()).decode()


ORDERS = {
    "sepa_instant": BankAccount(rail=Rail.SEPA, iban="DE89370400440532013000", bic="COBADEFFXXX"),
    "fps": BankAccount(rail=Rail.UK_FPS, sort_code="404784", account_number="70872490"),
    "ach": BankAccount(rail=Rail.US_ACH, routing_number="021000021", account_number="9876543210"),
    "swift": BankAccount(rail=Rail.SWIFT, bic="ANZBAU3MXXX", account_number="123456789"),
}


def order(scheme: str, **changes) -> psp.PaymentOrder:
    currency = {"sepa_instant": "EUR", "fps": "GBP", "ach": "USD", "swift": "AUD"}[scheme]
    fields = dict(
        end_to_end_id="JB0123456789ABCDEF0123456789ABCD",
        scheme=scheme,
        amount=2_00,
        currency=currency,
        creditor_name="Zoë Łukasiewicz",
        account=ORDERS[scheme],
        remittance="JoyBack reward JB0123456789ABCDEF0123456789ABCD",
        beneficiary_reference="JBK7M2P9Q4R8T3V",
        address=ADDRESSES.get(scheme),
        # Test mode's play money, from the sandbox's platform account: a live order leaves only a
        # brand's own balance account (tests/payouts/test_custody.py).
        livemode=False,
    )
    return psp.PaymentOrder(**(fields | changes))


# A payee abroad's address, as the payee form collects it for international transfers.
ADDRESSES = {
    "swift": {"line1": "12 George Street", "city": "Sydney", "postalCode": "2000", "country": "AU"},
}


# Contract: what the adapter sends is what Adyen's schema accepts.


def test_the_spec_refuses_a_request_it_does_not_document():
    """The validator is real: Adyen's own example passes, a request without its counterparty fails."""
    documented = example(TRANSFERS, "post-transfers-payout-local-transfer-sepa")
    assert spec_errors(TRANSFERS, "TransferInfo", documented) == []
    del documented["counterparty"]
    documented["priority"] = "whenever"
    errors = spec_errors(TRANSFERS, "TransferInfo", documented)
    assert any("counterparty" in e for e in errors) and any("whenever" in e for e in errors)


@pytest.mark.parametrize(
    ("scheme", "priority", "kind"),
    [
        ("sepa_instant", "instant", "iban"),
        ("fps", "fast", "ukLocal"),
        ("ach", "regular", "usLocal"),
        ("swift", "crossBorder", "numberAndBic"),
    ],
)
def test_each_rail_sends_a_request_adyen_documents(scheme, priority, kind):
    request = adyen.transfer_request(order(scheme))

    assert spec_errors(TRANSFERS, "TransferInfo", request) == []
    assert request["category"] == "bank" and request["priority"] == priority
    assert request["reference"] == "JB0123456789ABCDEF0123456789ABCD"
    assert request["amount"] == {"currency": order(scheme).currency, "value": 200}
    assert request["balanceAccountId"] == "BA00000000000000000JOYBACK"
    assert request["counterparty"]["bankAccount"]["accountIdentification"]["type"] == kind


def recording_client(monkeypatch, answer):
    """The adapter's HTTP client, answering with `answer(request)` and keeping what was sent."""
    sent = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return answer(request)

    client = httpx.Client(transport=httpx.MockTransport(handler))
    monkeypatch.setattr(psp, "psp_client", lambda: client)
    return sent


def test_the_post_carries_key_and_idempotency_key_and_reads_adyens_documented_answer(monkeypatch):
    answer = example(TRANSFERS, "post-transfers-payout-local-transfer-sepa-202")
    sent = recording_client(monkeypatch, lambda request: httpx.Response(202, json=answer))

    status = psp.payment_submit(order("sepa_instant"))
    psp.payment_submit(order("sepa_instant"))  # a retry after a timeout

    assert [r.method for r in sent] == ["POST", "POST"]
    assert str(sent[0].url) == "http://sandbox.localhost/sandbox/bank/btl/v4/transfers"
    assert sent[0].headers["X-API-Key"] == "sbx-adyen-api-key"
    keys = {r.headers["Idempotency-Key"] for r in sent}
    assert keys == {"joyback-payout-JB0123456789ABCDEF0123456789ABCD"}
    assert spec_errors(TRANSFERS, "TransferInfo", json.loads(sent[0].content)) == []
    # The documented answer is a received transfer: under way, neither paid nor refused.
    assert spec_errors(TRANSFERS, "Transfer", answer) == []
    assert (status.status, status.settled, status.rejected) == ("ACSP", False, False)
    assert status.bank_reference == answer["id"] and status.provider_status == "received"


def test_a_query_finds_the_transfer_by_reference_in_adyens_documented_list(monkeypatch):
    listing = example(TRANSFERS, "get-transfers-success-200")
    listing["data"][0]["reference"] = "JB0123456789ABCDEF0123456789ABCD"
    listing["data"][0]["status"] = "booked"
    sent = recording_client(monkeypatch, lambda request: httpx.Response(200, json=listing))

    status = psp.payment_status("JB0123456789ABCDEF0123456789ABCD")

    assert sent[0].method == "GET" and sent[0].url.params["reference"] == "JB0123456789ABCDEF0123456789ABCD"
    assert status.settled and status.bank_reference == listing["data"][0]["id"]


def test_a_refused_request_is_the_payments_answer_not_a_loop(monkeypatch):
    """Adyen made nothing and would refuse the same request again: the payment is rejected (it was
    an error that left the payout submitted and sent again every sweep)."""
    problem = {"type": "x", "title": "Invalid", "status": 422, "errorCode": "30_112"}
    recording_client(monkeypatch, lambda request: httpx.Response(422, json=problem))
    with pytest.raises(psp.PspError, match="422"):
        adyen.transfer_submit(order("fps"))

    answer = psp.payment_submit(order("fps"))

    assert answer.rejected and answer.reason_code == "AG01" and "30_112" in answer.provider_status


def test_a_lost_answer_is_unknown(monkeypatch):
    def lost(request):
        raise httpx.ReadTimeout("lost", request=request)

    recording_client(monkeypatch, lost)
    with pytest.raises(psp.PspUnknown):
        psp.payment_submit(order("ach"))


# Every status Adyen documents for an outgoing bank transfer, onto the payout's states.


@pytest.mark.parametrize(
    ("status", "reason", "external", "expected"),
    [
        ("received", "approved", None, ("ACSP", "", False)),
        ("authorised", "approved", None, ("ACSP", "", False)),
        ("pendingApproval", "pendingApproval", None, ("ACSP", "", False)),
        ("booked", "approved", None, ("ACSC", "", False)),
        ("credited", "approved", None, ("ACSC", "", False)),
        ("refused", "notEnoughBalance", None, ("RJCT", "AM04", False)),
        ("failed", "counterpartyAccountNotFound", None, ("RJCT", "AC01", False)),
        ("failed", "counterpartyAccountClosed", None, ("RJCT", "AC04", False)),
        ("failed", "counterpartyAccountBlocked", None, ("RJCT", "AC06", False)),
        ("failed", "counterpartyBankTimedOut", None, ("RJCT", "AB05", False)),
        ("failed", "refusedByCounterpartyBank", None, ("RJCT", "MS03", False)),
        (
            "failed",
            "refusedByCounterpartyBank",
            {"code": "AG01", "namespace": "ISO20022"},
            ("RJCT", "AG01", False),
        ),
        ("error", "unknown", None, ("RJCT", "MS03", False)),
        (
            "returned",
            "refusedByCounterpartyBank",
            {"code": "MD07", "namespace": "ISO20022"},
            ("ACSC", "MD07", True),
        ),
        ("returned", "counterpartyAccountClosed", None, ("ACSC", "AC04", True)),
    ],
)
def test_adyen_statuses_and_reasons_map_onto_iso_codes(status, reason, external, expected):
    data = {
        "id": "T1",
        "status": status,
        "reason": reason,
        **({"externalReason": external} if external else {}),
    }
    found = adyen.transfer_status(data)
    assert (found.status, found.reason_code, found.returned) == expected


def test_every_documented_status_is_named_in_the_spec():
    documented = set(TRANSFERS["components"]["schemas"]["Transfer"]["properties"]["status"]["enum"])
    assert documented >= adyen.SETTLED | adyen.FAILED | adyen.RETURNED


# Webhooks: Adyen's documented examples, about a payout of ours.


@pytest.fixture
def under_way(owed):
    """Pat's payout, accepted by the bank and waiting for its booking (the sandbox's pending account)."""
    owed(iban=IBANS["pending"])
    payout = Payout.objects.get()
    assert payout.status == "accepted" and payout.psp_reference
    return payout


def documented_webhook(payout: Payout, name: str, **data) -> dict:
    key = next(k for k in NOTIFICATIONS["components"]["examples"] if name in k)
    body = example(NOTIFICATIONS, key)
    body["data"].update(
        id=payout.psp_reference,
        reference=payout.end_to_end_id,
        amount={"currency": payout.currency, "value": payout.amount},
        **data,
    )
    assert spec_errors(NOTIFICATIONS, "TransferNotificationRequest", body) == []
    return body


def deliver(client, body: dict, *, key: str = KEY, signature: str | None = None, raw: bytes | None = None):
    raw = raw if raw is not None else json.dumps(body).encode()
    return client.post(
        WEBHOOK,
        data=raw,
        content_type="application/json",
        headers={"HmacSignature": sign(raw, key) if signature is None else signature},
    )


def bank_entries() -> int:
    """Entries on the brands' own balance accounts at the provider, which settled payouts leave."""
    return sum(account.entries.count() for account in Account.objects.filter(kind=AccountKind.BRAND_BALANCE))


def in_transit_total() -> int:
    return sum(Account.objects.filter(kind=AccountKind.PAYOUT_IN_TRANSIT).values_list("balance", flat=True))


def test_a_signed_booked_webhook_settles_the_payout(client, under_way, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = deliver(client, documented_webhook(under_way, "02.payout-booked"))

    assert response.status_code == 200 and response.content == b"[accepted]"
    under_way.refresh_from_db()
    assert under_way.status == "settled"
    assert provider_events().get().outcome == "accepted->settled"
    assert in_transit_total() == 0 and ledger_drift() == []


def test_a_tampered_webhook_is_refused_and_changes_nothing(client, under_way):
    body = documented_webhook(under_way, "02.payout-booked")
    raw = json.dumps(body).encode()
    tampered = raw.replace(b'"status": "booked"', b'"status": "returned"')
    assert tampered != raw

    assert deliver(client, body, raw=tampered, signature=sign(raw)).status_code == 401
    assert deliver(client, body, signature="").status_code == 401
    assert deliver(client, body, key=NEXT_KEY).status_code == 401  # a key we do not hold

    under_way.refresh_from_db()
    assert under_way.status == "accepted" and provider_events().count() == 0


def test_while_a_key_rotates_both_are_accepted(client, under_way, django_capture_on_commit_callbacks):
    with override_settings(ADYEN_HMAC_KEYS=[NEXT_KEY, KEY]), django_capture_on_commit_callbacks(execute=True):
        old = deliver(client, documented_webhook(under_way, "01.payout-authorized", sequenceNumber=2))
        new = deliver(
            client, documented_webhook(under_way, "02.payout-booked", sequenceNumber=3), key=NEXT_KEY
        )
    assert (old.status_code, new.status_code) == (200, 200)
    under_way.refresh_from_db()
    assert under_way.status == "settled"


def test_a_webhook_delivered_twice_is_stored_and_booked_once(
    client, under_way, django_capture_on_commit_callbacks
):
    body = documented_webhook(under_way, "02.payout-booked")
    before = bank_entries()
    with django_capture_on_commit_callbacks(execute=True):
        assert deliver(client, body).status_code == 200
        assert deliver(client, body).status_code == 200

    assert provider_events().count() == 1
    assert bank_entries() == before + 1 and ledger_drift() == []


def test_an_earlier_status_arriving_later_never_moves_the_payout_back(
    client, under_way, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        deliver(client, documented_webhook(under_way, "02.payout-booked", sequenceNumber=3))
        deliver(client, documented_webhook(under_way, "01.payout-authorized", sequenceNumber=2))
        deliver(client, documented_webhook(under_way, "outgoing-external", sequenceNumber=1))

    under_way.refresh_from_db()
    assert under_way.status == "settled"
    assert list(provider_events().order_by("pk").values_list("outcome", flat=True)) == [
        "accepted->settled",
        "kept settled",
        "kept settled",
    ]


def test_a_return_overtaking_the_booking_books_both_once(
    client, under_way, django_capture_on_commit_callbacks
):
    returned = {"status": "returned", "reason": "refusedByCounterpartyBank"}
    with django_capture_on_commit_callbacks(execute=True):
        deliver(
            client,
            documented_webhook(
                under_way,
                "02.payout-booked",
                sequenceNumber=4,
                externalReason={"code": "MD07", "namespace": "ISO20022", "description": "deceased"},
                **returned,
            ),
        )
        deliver(client, documented_webhook(under_way, "02.payout-booked", sequenceNumber=3))

    under_way.refresh_from_db()
    assert (under_way.status, under_way.reason_code) == ("returned", "MD07")
    payable = Account.objects.get(
        kind=AccountKind.PARTICIPANT_PAYABLE, subject=under_way.participant.ledger_subject
    )
    assert payable.balance == under_way.amount and ledger_drift() == []


def test_a_failed_transfer_is_rejected_with_the_iso_reason(
    client, under_way, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        deliver(
            client,
            documented_webhook(
                under_way,
                "01.payout-authorized",
                sequenceNumber=3,
                status="failed",
                reason="counterpartyAccountClosed",
            ),
        )

    under_way.refresh_from_db()
    assert (under_way.status, under_way.reason_code) == ("rejected", "AC04")
    assert reason_text("AC04") == "the account is closed"


def test_a_webhook_about_another_transfer_is_stored_and_left_alone(
    client, under_way, django_capture_on_commit_callbacks
):
    body = documented_webhook(under_way, "02.payout-booked")
    body["data"]["reference"] = "not one of ours"
    with django_capture_on_commit_callbacks(execute=True):
        assert deliver(client, body).status_code == 200
    assert provider_events().get().outcome == "not_a_payout"
    under_way.refresh_from_db()
    assert under_way.status == "accepted"


def test_a_signed_body_that_is_no_webhook_is_refused_clearly(client):
    response = deliver(client, {}, raw=b"not json")
    assert response.status_code == 400 and b"not a transfer webhook" in response.content
    assert provider_events().count() == 0


def test_the_webhook_url_is_the_named_one():
    assert reverse("payouts:adyen_webhook") == WEBHOOK


# The sandbox bank's own webhooks: delivered twice and newest first for its chaos account.


def test_the_sandbox_banks_webhooks_twice_and_out_of_order_settle_once(owed):
    owed(iban="DE62370400440532019500")
    payout = Payout.objects.get()
    assert payout.status == "accepted"  # the bank's answer: authorised
    before = bank_entries()

    payouts_sweep()

    payout.refresh_from_db()
    assert payout.status == "settled"
    # authorised + booked, each delivered twice, stored once each.
    assert provider_events().count() == 2
    assert bank_entries() == before + 1
    assert ledger_drift() == []


# A crash between the submission and Adyen's answer: ask, never send a second transfer.


def test_an_answer_lost_after_adyen_took_the_transfer_is_asked_about_not_resent(owed, monkeypatch):
    posts = []
    real = psp.http_request

    def counting(method, url, **kwargs):
        if method == "POST" and url.endswith("/transfers"):
            posts.append(kwargs["headers"]["Idempotency-Key"])
        return real(method, url, **kwargs)

    monkeypatch.setattr(psp, "http_request", counting)
    monkeypatch.setattr(adyen, "http_request", counting)
    owed(iban=IBANS["timeout"])
    payout = Payout.objects.get()
    assert payout.status == "unknown"

    payout_status_check(payout_id=payout.pk)

    payout.refresh_from_db()
    assert payout.status == "settled"
    assert len(posts) == 1
    assert SandboxBankPayment.objects.filter(end_to_end_id=payout.end_to_end_id).count() == 1


def test_a_transfer_adyen_never_got_goes_again_with_the_same_idempotency_key(owed, monkeypatch):
    posts = []
    real = adyen.http_request

    def first_lost(method, url, **kwargs):
        if method == "POST" and url.endswith("/transfers"):
            posts.append(kwargs["headers"]["Idempotency-Key"])
            if len(posts) == 1:
                raise psp.PspUnknown("POST /transfers: ConnectTimeout")
        return real(method, url, **kwargs)

    monkeypatch.setattr(adyen, "http_request", first_lost)
    owed()
    payout = Payout.objects.get()
    assert payout.status == "unknown" and SandboxBankPayment.objects.count() == 0

    payout_status_check(payout_id=payout.pk)

    payout.refresh_from_db()
    assert payout.status == "settled"
    assert posts == [adyen.idempotency_key(payout.end_to_end_id)] * 2
    assert SandboxBankPayment.objects.count() == 1


def test_the_sandbox_bank_answers_a_replayed_key_with_the_same_transfer(client):
    body = adyen.transfer_request(order("sepa_instant"))
    headers = {"X-API-Key": "sbx-adyen-api-key", "Idempotency-Key": "joyback-payout-X"}
    url = "/sandbox/bank/btl/v4/transfers"

    first = client.post(url, data=body, content_type="application/json", headers=headers)
    again = client.post(url, data=body, content_type="application/json", headers=headers)
    other = client.post(
        url, data={**body, "reference": "ANOTHER"}, content_type="application/json", headers=headers
    )

    assert (first.status_code, again.status_code) == (202, 202)
    assert first.json()["id"] == again.json()["id"] and SandboxBankPayment.objects.count() == 1
    assert other.status_code == 422 and other.json()["errorCode"] == "00_422"
    assert spec_errors(TRANSFERS, "Transfer", first.json()) == []


def test_the_sandbox_bank_books_a_transfer_its_events_and_its_camt054_in_two_statements(client):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from payouts.models import SandboxBankEvent, SandboxBankMessage

    body = adyen.transfer_request(order("sepa_instant"))
    headers = {"X-API-Key": "sbx-adyen-api-key", "Idempotency-Key": "joyback-payout-Y"}

    with CaptureQueriesContext(connection) as statements:
        answer = client.post(
            "/sandbox/bank/btl/v4/transfers", data=body, content_type="application/json", headers=headers
        )

    # Its reads at once, then the payment with its events and its notification in one insert: the
    # bank's share of every payout the sandbox makes (tests/bench/payout.py).
    assert answer.status_code == 202 and len(statements) == 2, [q["sql"][:80] for q in statements]
    payment = SandboxBankPayment.objects.get()
    assert answer.json()["id"] == payment.bank_reference and payment.status == "ACSC"
    assert list(SandboxBankEvent.objects.filter(payment=payment).values_list("kind", flat=True)) == ["booked"]
    notification = SandboxBankMessage.objects.get(kind="camt.054.001.08")
    assert payment.end_to_end_id.encode() in bytes(notification.xml)


def test_the_sandbox_bank_refuses_a_wrong_api_key_and_a_malformed_transfer(client):
    url = "/sandbox/bank/btl/v4/transfers"
    body = adyen.transfer_request(order("fps"))
    wrong = client.post(url, data=body, content_type="application/json", headers={"X-API-Key": "nope"})
    del body["counterparty"]
    malformed = client.post(
        url, data=body, content_type="application/json", headers={"X-API-Key": "sbx-adyen-api-key"}
    )
    assert wrong.status_code == 401 and malformed.status_code == 422
    assert "counterparty" in malformed.json()["detail"] and SandboxBankPayment.objects.count() == 0


LIFECYCLES = {
    "paid": (["received", "authorised", "booked"], "settled", 0),
    "failed": (["received", "authorised", "failed"], "rejected", 1),
    "returned": (["authorised", "booked", "returned"], "returned", 1),
}


@pytest.mark.parametrize("lifecycle", LIFECYCLES)
@pytest.mark.parametrize("order_seed", range(6))
def test_any_order_of_a_transfers_webhooks_each_twice_ends_where_its_last_status_says(
    client, under_way, django_capture_on_commit_callbacks, lifecycle, order_seed
):
    """Every order of the three webhooks of one transfer (each delivered twice) ends in the state of
    the transfer's last status, with the money where it belongs and the ledger whole."""
    import itertools

    statuses, final, owed_again = LIFECYCLES[lifecycle]
    order_ = list(itertools.permutations(range(3)))[order_seed]
    reasons = {"failed": "counterpartyAccountClosed", "returned": "counterpartyAccountClosed"}
    bodies = [
        documented_webhook(
            under_way,
            "01.payout-authorized",
            sequenceNumber=number + 1,
            status=status,
            reason=reasons.get(status, "approved"),
        )
        for number, status in enumerate(statuses)
    ]
    with django_capture_on_commit_callbacks(execute=True):
        for index in order_:
            assert deliver(client, bodies[index]).status_code == 200
            assert deliver(client, bodies[index]).status_code == 200

    under_way.refresh_from_db()
    assert under_way.status == final
    assert provider_events().count() == 3
    payable = Account.objects.get(
        kind=AccountKind.PARTICIPANT_PAYABLE, subject=under_way.participant.ledger_subject
    )
    assert payable.balance == owed_again * under_way.amount
    assert in_transit_total() == 0 and ledger_drift() == []


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_webhooks_racing_in_four_workers_settle_the_payout_once(client, summer, monkeypatch):
    """The same booked webhook delivered twice and a later credited one twice, all at once to four
    web workers that each apply what they stored: one settlement, one booking on the ledger."""
    import threading

    from django.db import connection

    from tests.conftest import provider_events, rewarded_in_browser
    from tests.payouts.conftest import payee_details

    enqueue_replace(monkeypatch, lambda *args: None)
    person = rewarded_in_browser(client, summer)
    payee_details(client, summer, iban=IBANS["pending"])
    payout = payout_for_participant(participant_id=person.pk, currency="EUR")
    payout_submit(payout_id=payout.pk)
    payout.refresh_from_db()
    assert payout.status == "accepted"
    before = bank_entries()
    booked = json.dumps(documented_webhook(payout, "02.payout-booked", sequenceNumber=3)).encode()
    credited = json.dumps(
        documented_webhook(payout, "02.payout-booked", sequenceNumber=4, status="credited")
    ).encode()
    barrier = threading.Barrier(4)
    errors = []

    def worker(raw):
        try:
            barrier.wait()
            transfer_webhook_receive(body=raw, headers={"HmacSignature": sign(raw)})
        except Exception as error:  # a race's failure is the test's finding
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(raw,)) for raw in (booked, booked, credited, credited)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    transfer_events_process()  # whatever a lease left, as the standing worker would

    assert errors == []
    payout.refresh_from_db()
    assert payout.status == "settled"
    assert provider_events().count() == 2
    assert bank_entries() == before + 1 and in_transit_total() == 0 and ledger_drift() == []
