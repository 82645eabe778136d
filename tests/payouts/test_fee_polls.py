"""A fee transfer the provider took and never said more of is asked about: after fees.POLL_AFTER
the poll asks Adyen (GET /transfers/{id}, TransferService v4, the path, its TransferData answer and
its documented example kept in tests/payouts/adyen/TransferService-v4-transfer.subset.json, MIT
licence) and applies the answer through the one function every word of the provider goes through,
so a booking by the poll and by the webhook is one booking; one still open after fees.STUCK_AFTER
is named to staff once. The sandbox answers the GET in Adyen's format, 404 for an id it never made.
"""

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import httpx
import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from joyback.background import SCHEDULES
from joyback.ledger.models import Transaction
from payouts import fees, psp
from payouts.models import FeeTransfer, ReconciliationException, SandboxBalanceAccount, SandboxFundingTransfer
from payouts.providers import adyen
from payouts.sandbox import funding as sandbox
from payouts.sandbox.internal import internal_transfer_finish
from payouts.submission.webhooks import transfer_events_process
from tests.payouts.test_adyen_transfers import (
    SPEC_DIR,
    TRANSFERS,
    deliver,
    example,
    recording_client,
    spec_errors,
)
from tests.payouts.test_fee_bookings import documented
from tests.payouts.test_fee_transfers import own_account, plan_for, rewarded

pytestmark = pytest.mark.django_db

GET = json.loads((SPEC_DIR / "TransferService-v4-transfer.subset.json").read_text())
LATER = timedelta(hours=2)


@pytest.fixture
def staff_pair(make_user):
    return make_user("sam@joyback.example", is_staff=True), make_user("tara@joyback.example", is_staff=True)


def booked_moves(reference: str) -> int:
    return Transaction.objects.filter(idempotency_key=fees.fee_ledger_key(reference)).count()


def answered(fee_transfer: FeeTransfer, *, status: str, attempt: int = 0, reason: str = "approved") -> dict:
    """Adyen's documented GET /transfers/{id} answer, about this fee transfer's attempt."""
    body = example(GET, "get-transfers-id-success-200")
    body.update(
        id=fee_transfer.provider_transfer_id,
        reference=fees.fee_attempt_reference(fee_transfer.reference, attempt),
        amount={"currency": fee_transfer.currency, "value": fee_transfer.amount},
        counterparty={"balanceAccountId": settings.ADYEN_BALANCE_ACCOUNT_ID},
        status=status,
        reason=reason,
    )
    assert spec_errors(GET, "TransferData", body) == []
    return body


def provider_says(monkeypatch, fee_transfer: FeeTransfer, **answer):
    """Adyen, answering every GET /transfers/{id} about this transfer with `answer`."""

    def reply(request):
        if request.method == "GET" and request.url.path.endswith(
            f"/transfers/{fee_transfer.provider_transfer_id}"
        ):
            return httpx.Response(200, json=answered(fee_transfer, **answer))
        return httpx.Response(404, json={"status": 404, "errorCode": "00_404", "title": "Not found"})

    return recording_client(monkeypatch, reply)


@pytest.fixture
def taken(summer, staff_pair, django_capture_on_commit_callbacks, monkeypatch):
    """A fee transfer Adyen took with its documented answer (status received), nothing since."""
    plan_for(summer.brand, staff_pair)
    own_account(summer.brand, django_capture_on_commit_callbacks, holds=50_00)
    rewarded(summer, 1)
    answer = example(TRANSFERS, "post-transfers-payout-to-balance-account-202")
    recording_client(monkeypatch, lambda request: httpx.Response(202, json=answer))
    assert fees.fee_transfers_send() == {"sent": 1}
    return FeeTransfer.objects.get()


def exceptions_but_the_setups_spend() -> list[str]:
    """Exceptions raised, but the one own_account's spend at the provider raises once its webhook
    is delivered (money that left the account before the test, which the ledger never knew)."""
    return [
        exception.detail
        for exception in ReconciliationException.objects.all()
        if not (exception.reason == "provider_movement" and "SBXOUT" in exception.detail)
    ]


# ---- the request and its answer, against Adyen's published path and schema ------------------------


def test_the_get_is_adyens_documented_path_and_its_example_is_read(monkeypatch):
    example_answer = example(GET, "get-transfers-id-success-200")
    sent = recording_client(monkeypatch, lambda request: httpx.Response(200, json=example_answer))

    found = adyen.transfer_get(transfer_id="1W1UG35QQEBJLHZ8")

    (request,) = sent
    operation = GET["paths"]["/transfers/{id}"]
    assert list(operation) == ["get"] and request.method == "GET"
    assert request.url.path.endswith("/transfers/1W1UG35QQEBJLHZ8") and request.content == b""
    assert request.headers["X-API-Key"] == settings.ADYEN_API_KEY
    assert spec_errors(GET, "TransferData", example_answer) == []
    assert found == adyen.InternalTransfer(
        transfer_id="1W1UG35QQEBJLHZ8", status="booked", reason="approved", reference="312M2060T6S4UOIF"
    )


def test_an_unknown_id_is_none_and_a_refusal_is_adyens_error(monkeypatch):
    recording_client(monkeypatch, lambda request: httpx.Response(404, json={"status": 404}))
    assert adyen.transfer_get(transfer_id="NOPE") is None
    refused = {"type": "x", "title": "Forbidden", "status": 403, "errorCode": "00_403", "detail": "no"}
    assert spec_errors(GET, "TransferServiceRestServiceError", refused) == []
    recording_client(monkeypatch, lambda request: httpx.Response(403, json=refused))
    with pytest.raises(adyen.AdyenRefused) as error:
        adyen.transfer_get(transfer_id="1W1UG35QQEBJLHZ8")
    assert (error.value.status, error.value.error_code) == (403, "00_403")


def test_the_sandbox_answers_the_get_in_adyens_format_and_404_for_an_id_it_never_made(
    summer, staff_pair, django_capture_on_commit_callbacks
):
    plan_for(summer.brand, staff_pair)
    own_account(summer.brand, django_capture_on_commit_callbacks, holds=50_00)
    rewarded(summer, 2)
    assert fees.fee_transfers_send() == {"booked": 1}
    moved = SandboxFundingTransfer.objects.get(category="internal")
    headers = {"X-API-Key": settings.ADYEN_API_KEY}

    answer = psp.http_request("GET", f"{psp.adyen_api_base()}/transfers/{moved.transfer_id}", headers=headers)
    assert answer.status_code == 200
    assert spec_errors(GET, "TransferData", answer.json()) == []
    assert (answer.json()["status"], answer.json()["reference"]) == (
        "booked",
        FeeTransfer.objects.get().reference,
    )

    unknown = psp.http_request("GET", f"{psp.adyen_api_base()}/transfers/SBXNOTMADE", headers=headers)
    assert unknown.status_code == 404
    assert spec_errors(GET, "TransferServiceRestServiceError", unknown.json()) == []
    anonymous = psp.http_request("GET", f"{psp.adyen_api_base()}/transfers/{moved.transfer_id}")
    assert anonymous.status_code == 401


# ---- the poll, as the brand's account and the platform's see it ----------------------------------


def test_a_transfer_the_sandbox_leaves_received_is_polled_then_booked_once_with_its_webhooks(
    summer, staff_pair, django_capture_on_commit_callbacks
):
    plan_for(summer.brand, staff_pair)
    account = own_account(summer.brand, django_capture_on_commit_callbacks, holds=50_00)
    SandboxBalanceAccount.objects.filter(pk=account.pk).update(internal_stays_received=True)
    rewarded(summer, 2)
    assert fees.fee_transfers_send() == {"sent": 1}
    fee_transfer = FeeTransfer.objects.get()

    assert fees.fee_transfers_poll() == {}  # too soon: its webhooks may still come
    assert fees.fee_transfers_poll(now=timezone.now() + LATER) == {"sent": 1}  # still received
    assert fees.fee_transfers_poll(now=timezone.now() + LATER) == {}  # asked lately
    assert booked_moves(fee_transfer.reference) == 0

    internal_transfer_finish(transfer_id=fee_transfer.provider_transfer_id)
    assert fees.fee_transfers_poll(now=timezone.now() + 2 * LATER) == {"booked": 1}
    fee_transfer.refresh_from_db()
    assert fee_transfer.status == "booked"
    assert f"GET /transfers/{fee_transfer.provider_transfer_id}" in fee_transfer.booked_on
    posted = Transaction.objects.get(pk=fee_transfer.ledger_transaction_id)
    assert f"GET /transfers/{fee_transfer.provider_transfer_id}" in posted.description

    sandbox.funding_webhooks_deliver()  # the webhooks arrive late: nothing books twice
    transfer_events_process()
    assert booked_moves(fee_transfer.reference) == 1
    assert fees.fee_transfers_poll(now=timezone.now() + 30 * LATER) == {}
    assert not exceptions_but_the_setups_spend()


def test_a_failure_the_poll_hears_counts_as_the_webhook_would(taken, monkeypatch):
    provider_says(monkeypatch, taken, status="failed", reason="notEnoughBalance")

    assert fees.fee_transfers_poll(now=timezone.now() + LATER) == {"refused": 1}
    taken.refresh_from_db()
    assert (taken.status, taken.refusals, taken.reason) == ("refused", 1, "notEnoughBalance")
    assert booked_moves(taken.reference) == 0
    # Asked for again later with the next key, as after a refused webhook.
    assert taken.next_attempt_at > timezone.now() + timedelta(minutes=14)


def test_a_webhook_that_already_booked_it_leaves_the_poll_nothing(
    client, taken, monkeypatch, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        deliver(client, documented("04.internal-booked", taken, transfer_id=taken.provider_transfer_id))
    sent = provider_says(monkeypatch, taken, status="booked")

    assert fees.fee_transfers_poll(now=timezone.now() + LATER) == {}
    assert sent == [] and booked_moves(taken.reference) == 1
    taken.refresh_from_db()
    assert "webhook" in taken.booked_on


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_poll_and_the_webhook_racing_book_the_fee_once(taken, monkeypatch):
    provider_says(monkeypatch, taken, status="booked")
    body = documented("04.internal-booked", taken, transfer_id=taken.provider_transfer_id)
    now = timezone.now() + LATER
    barrier = threading.Barrier(2)

    def work(which):
        try:
            barrier.wait()
            if which == "poll":
                return fees.fee_transfer_poll(transfer_id=taken.pk, now=now)
            return fees.fee_transfer_webhook_apply(body)
        finally:
            connection.close()

    for _round in range(2):
        with ThreadPoolExecutor(max_workers=2) as pool:
            outcomes = list(pool.map(work, ["poll", "webhook"]))
        assert booked_moves(taken.reference) == 1, outcomes
    taken.refresh_from_db()
    assert taken.status == "booked" and taken.booked_on
    assert not exceptions_but_the_setups_spend()


def test_a_transfer_still_taken_after_a_day_is_named_to_staff_once(taken, monkeypatch):
    provider_says(monkeypatch, taken, status="received")

    assert fees.fee_transfers_poll(now=timezone.now() + LATER) == {"sent": 1}
    assert not exceptions_but_the_setups_spend()
    a_day_on = timezone.now() + fees.STUCK_AFTER + timedelta(minutes=1)
    assert fees.fee_transfers_poll(now=a_day_on) == {"sent": 1}
    assert fees.fee_transfers_poll(now=a_day_on + fees.POLL_EVERY) == {"sent": 1}

    (alert,) = ReconciliationException.objects.all()
    assert (alert.brand_id, alert.reason, alert.amount, alert.status) == (
        taken.brand_id,
        "fee_stuck",
        -15,
        "open",
    )
    assert taken.reference in alert.detail and taken.provider_transfer_id in alert.detail
    assert booked_moves(taken.reference) == 0


def test_a_transfer_the_provider_does_not_know_is_named_to_staff_after_a_day(taken, monkeypatch):
    FeeTransfer.objects.filter(pk=taken.pk).update(provider_transfer_id="GONE")
    recording_client(monkeypatch, lambda request: httpx.Response(404, json={"status": 404}))

    assert fees.fee_transfers_poll(now=timezone.now() + LATER) == {"not_found": 1}
    assert fees.fee_transfers_poll(now=timezone.now() + fees.STUCK_AFTER + LATER) == {"not_found": 1}
    (alert,) = ReconciliationException.objects.all()
    assert alert.reason == "fee_stuck" and "knows no transfer" in alert.detail


def test_the_poll_runs_on_its_schedule():
    (schedule,) = [item for item in SCHEDULES if item.func == "payouts.tasks.fee_transfers_poll_task"]
    assert schedule.minutes and schedule.minutes * 60 < fees.POLL_EVERY.total_seconds()
