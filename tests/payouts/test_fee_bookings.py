"""The platform's fee is booked in the ledger on the provider's word only: Adyen's answer or its
signed transfer webhooks (balancePlatform.transfer.created/updated, TransferService v4 and
BalancePlatformTransferNotification v4, the documented examples kept in tests/payouts/adyen/, MIT
licence). Booked once whatever arrives twice, late or out of order; a refused or failed transfer is
asked for again after a backoff, named to staff after REFUSALS_ALERT refusals, never lost.

The sandbox's one handler of internal transfers (payouts.sandbox.internal) answers and refuses as
Adyen documents, for the fee (a brand's account -> the platform's) and a custody move (the other
way) alike: its answers and errors are checked against the published schemas.
"""

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import httpx
import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from django.utils import timezone
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from campaigns.invoice_documents import invoice_csv, invoice_pdf
from campaigns.models import Brand, Invoice
from campaigns.services.invoices import invoice_issue, invoice_vat_ledger_key, platform_vat_account
from joyback.ledger.models import AccountKind, Transaction
from joyback.ledger.services import LedgerError, brand_balance_account, platform_bank
from payouts import fees
from payouts.funding import services as funding_services
from payouts.models import FeeTransfer, ReconciliationException, SandboxFundingEvent, SandboxFundingTransfer
from payouts.providers import adyen
from payouts.sandbox import funding as sandbox
from payouts.submission.webhooks import transfer_events_process
from tests.campaigns.test_invoices import pdf_text
from tests.conftest import fund
from tests.payouts.test_adyen_transfers import (
    NOTIFICATIONS,
    TRANSFERS,
    deliver,
    example,
    recording_client,
    spec_errors,
)
from tests.payouts.test_custody import (
    crossing_transactions,
    custody_brand,
    deposit,
    live_campaign,
    pay,
    provider_balance_of,
    webhooks,
)
from tests.payouts.test_fee_transfers import own_account, plan_for, rewarded

pytestmark = pytest.mark.django_db

PATH = "/sandbox/bank/btl/v4/transfers"


@pytest.fixture
def staff_pair(make_user):
    return make_user("sam@joyback.example", is_staff=True), make_user("tara@joyback.example", is_staff=True)


def booked_moves(reference: str) -> int:
    return Transaction.objects.filter(idempotency_key=fees.fee_ledger_key(reference)).count()


def documented(name: str, fee_transfer: FeeTransfer, *, transfer_id: str, attempt: int = 0, **data) -> dict:
    """Adyen's documented internal-transfer webhook, about this fee transfer's attempt."""
    key = next(k for k in NOTIFICATIONS["components"]["examples"] if k.endswith(name))
    body = example(NOTIFICATIONS, key)
    body["data"].update(
        id=transfer_id,
        reference=fees.fee_attempt_reference(fee_transfer.reference, attempt),
        amount={"currency": fee_transfer.currency, "value": fee_transfer.amount},
        direction="outgoing",
        counterparty={"balanceAccountId": settings.ADYEN_BALANCE_ACCOUNT_ID},
        **data,
    )
    assert spec_errors(NOTIFICATIONS, "TransferNotificationRequest", body) == []
    return body


@pytest.fixture
def taken(summer, staff_pair, django_capture_on_commit_callbacks, monkeypatch):
    """A fee transfer Adyen took with its documented answer (status received): not booked yet."""
    plan_for(summer.brand, staff_pair)
    own_account(summer.brand, django_capture_on_commit_callbacks, holds=50_00)
    rewarded(summer, 1)
    answer = example(TRANSFERS, "post-transfers-payout-to-balance-account-202")
    recording_client(monkeypatch, lambda request: httpx.Response(202, json=answer))

    assert fees.fee_transfers_send() == {"sent": 1}
    return FeeTransfer.objects.get()


def test_taken_is_not_booked_the_booked_webhook_books_once(client, taken, django_capture_on_commit_callbacks):
    brand_side = brand_balance_account(brand_id=taken.brand_id, currency="EUR")
    before = brand_side.balance
    assert (taken.status, taken.provider_transfer_id, booked_moves(taken.reference)) == (
        "sent",
        "1W1UG35U8A9J5ZLG",
        0,
    )

    for _twice in range(2):
        for name in ("03.internal-authorised", "04.internal-booked"):
            body = documented(name, taken, transfer_id="1W1UG35U8A9J5ZLG")
            with django_capture_on_commit_callbacks(execute=True):
                assert deliver(client, body).status_code == 200

    taken.refresh_from_db()
    assert (taken.status, booked_moves(taken.reference)) == ("booked", 1)
    brand_side.refresh_from_db()
    assert before - brand_side.balance == taken.amount == 15  # out of the brand's own account
    posted = Transaction.objects.get(pk=taken.ledger_transaction_id)
    legs = {entry.account_id: entry.amount for entry in posted.entries.all()}
    assert legs == {platform_bank(currency="EUR").pk: 15, brand_side.pk: -15}


def test_a_failed_transfer_is_asked_for_again_later_and_a_late_word_changes_nothing(
    client, taken, django_capture_on_commit_callbacks
):
    failed = documented("04.internal-booked", taken, transfer_id="1W1UG35U8A9J5ZLG")
    failed["data"].update(status="failed", reason="notEnoughBalance")
    with django_capture_on_commit_callbacks(execute=True):
        deliver(client, failed)

    taken.refresh_from_db()
    assert (taken.status, taken.refusals, taken.reason) == ("refused", 1, "notEnoughBalance")
    assert taken.next_attempt_at > timezone.now() + timedelta(minutes=14)
    assert booked_moves(taken.reference) == 0
    # The same failure again, or a late "authorised" of that attempt: still one refusal.
    failed["data"]["sequenceNumber"] = 5
    late = documented("03.internal-authorised", taken, transfer_id="1W1UG35U8A9J5ZLG")
    with django_capture_on_commit_callbacks(execute=True):
        deliver(client, failed)
        deliver(client, late)
    taken.refresh_from_db()
    assert (taken.status, taken.refusals) == ("refused", 1)


def test_refusals_back_off_and_the_third_is_shown_to_staff(taken):
    for attempt in range(3):
        fees.fee_transfer_outcome(
            message="the provider's webhook",
            reference=taken.reference,
            attempt=attempt,
            status="refused",
            reason="notEnoughBalance",
        )
    taken.refresh_from_db()
    assert taken.refusals == 3 and taken.status == "refused"
    assert fees.fee_retry_after(refusals=1) == timedelta(minutes=15)
    assert fees.fee_retry_after(refusals=3) == timedelta(hours=1)
    assert fees.fee_retry_after(refusals=30) == fees.RETRY_MOST
    (alert,) = ReconciliationException.objects.all()
    assert (alert.brand_id, alert.reason, alert.amount) == (taken.brand_id, "fee_refused", -15)
    assert taken.reference in alert.detail and "notEnoughBalance" in alert.detail


def test_a_booking_of_two_attempts_books_once_and_tells_staff(taken):
    assert fees.fee_transfer_outcome(
        message="the provider's webhook",
        reference=taken.reference,
        attempt=0,
        status="booked",
        transfer_id="A",
    ) == ("booked")
    assert fees.fee_transfer_outcome(
        message="the provider's webhook",
        reference=taken.reference,
        attempt=1,
        status="booked",
        transfer_id="B",
    ) == ("booked_twice")
    assert booked_moves(taken.reference) == 1
    assert ReconciliationException.objects.get().reason == "duplicate"


@hypothesis_settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=3),
            st.sampled_from(["received", "authorised", "booked", "refused", "failed"]),
        ),
        max_size=12,
    )
)
def test_any_words_in_any_order_book_the_fee_at_most_once_and_only_when_booked(taken, words):
    platform, brand_side = (
        platform_bank(currency="EUR"),
        brand_balance_account(brand_id=taken.brand_id, currency="EUR"),
    )
    fee_transfer = FeeTransfer.objects.create(
        brand_id=taken.brand_id, currency="EUR", amount=7, reference=fees.fee_reference_new(), status="sent"
    )
    platform.refresh_from_db()
    brand_side.refresh_from_db()
    start = platform.balance + brand_side.balance, platform.balance

    for attempt, status in words:
        fees.fee_transfer_outcome(
            message="the provider's webhook",
            reference=fee_transfer.reference,
            attempt=attempt,
            status=status,
            transfer_id="T0",
        )

    fee_transfer.refresh_from_db()
    said_booked = any(status == "booked" for _attempt, status in words)
    assert booked_moves(fee_transfer.reference) == int(said_booked)
    assert (fee_transfer.status == "booked") == said_booked
    platform.refresh_from_db()
    brand_side.refresh_from_db()
    # The fee only changes hands between the two accounts at the provider, once.
    assert platform.balance + brand_side.balance == start[0]
    assert platform.balance - start[1] == (7 if said_booked else 0)
    assert fee_transfer.refusals <= len(words)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_workers_with_the_same_booked_word_book_once(taken):
    barrier = threading.Barrier(4)

    def work(_index):
        try:
            barrier.wait()
            return fees.fee_transfer_outcome(
                message="the provider's webhook",
                reference=taken.reference,
                attempt=0,
                status="booked",
                transfer_id="1W1UG35U8A9J5ZLG",
            )
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=4) as pool:
        outcomes = list(pool.map(work, range(4)))

    assert sorted(outcomes) == ["booked", "kept booked", "kept booked", "kept booked"]
    assert booked_moves(taken.reference) == 1


def test_the_sandboxs_webhooks_book_what_its_answer_booked_once(
    summer,
    staff_pair,
    django_capture_on_commit_callbacks,
):
    plan_for(summer.brand, staff_pair)
    own_account(summer.brand, django_capture_on_commit_callbacks, holds=50_00)
    rewarded(summer, 2)
    assert fees.fee_transfers_send() == {"booked": 1}
    fee_transfer = FeeTransfer.objects.get()

    sandbox.funding_webhooks_deliver()
    transfer_events_process()

    moved = SandboxFundingTransfer.objects.get(category="internal")
    statuses = list(SandboxFundingEvent.objects.filter(transfer=moved).values_list("status", flat=True))
    assert statuses == ["received", "authorised", "booked"]
    assert booked_moves(fee_transfer.reference) == 1


# ---- the sandbox's one internal-transfer handler, against Adyen's published schemas ---------------


def post(body, key="k-1") -> httpx.Response:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return Client().post(
        PATH,
        data=raw,
        content_type="application/json",
        headers={"X-API-Key": settings.ADYEN_API_KEY, "Idempotency-Key": key},
    )


@pytest.fixture
def brand_account(summer, django_capture_on_commit_callbacks):
    return own_account(summer.brand, django_capture_on_commit_callbacks, holds=10_00)


def fee_request(account, **changes) -> dict:
    request = adyen.internal_transfer_request(
        source=account.account_id,
        destination=settings.ADYEN_BALANCE_ACCOUNT_ID,
        amount=1_00,
        currency="EUR",
        reference="JBFEE00000000000001",
        description="JoyBack fees JBFEE00000000000001",
    )
    return {**request, **changes}


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"amount": {"currency": "EUR", "value": 0}}, "amount.value"),
        ({"amount": {"currency": "euro", "value": 1_00}}, "amount.currency"),
        ({"counterparty": {}}, "counterparty.balanceAccountId"),
        ({"counterparty": {"balanceAccountId": "X", "bankAccount": {}}}, "counterparty"),
        ({"description": "Fees & more"}, "description"),
        ({"reference": "R" * 81}, "reference"),
        ({"balanceAccountId": None}, "balanceAccountId"),
    ],
)
def test_a_request_adyen_refuses_is_refused_with_adyens_error_body(brand_account, changes, field):
    response = post(fee_request(brand_account, **changes))

    problem = response.json()
    assert response.status_code == 422
    assert spec_errors(TRANSFERS, "TransferServiceRestServiceError", problem) == []
    assert [invalid["name"] for invalid in problem["invalidFields"]] == [field]
    assert not SandboxFundingTransfer.objects.filter(category="internal").exists()


def test_the_answer_is_adyens_transfer_booked_and_a_replay_answers_the_same(brand_account):
    first = post(fee_request(brand_account))
    again = post(fee_request(brand_account))

    assert first.status_code == again.status_code == 202
    assert spec_errors(TRANSFERS, "Transfer", first.json()) == []
    assert first.json() == again.json()
    assert (first.json()["status"], first.json()["reason"]) == ("booked", "approved")
    assert sandbox.balance_of(brand_account) == 10_00 - 1_00
    other = post(fee_request(brand_account, amount={"currency": "EUR", "value": 2_00}))
    assert other.status_code == 422 and other.json()["errorCode"] == "00_422"


def test_more_than_the_account_holds_is_a_refused_transfer_with_its_reason(brand_account):
    response = post(fee_request(brand_account, amount={"currency": "EUR", "value": 10_01}))

    answer = response.json()
    assert response.status_code == 202 and spec_errors(TRANSFERS, "Transfer", answer) == []
    assert (answer["status"], answer["reason"]) == ("refused", "notEnoughBalance")
    assert sandbox.balance_of(brand_account) == 10_00  # nothing moved
    (body,) = sandbox.webhook_bodies(list(SandboxFundingEvent.objects.filter(status="refused")))
    assert spec_errors(NOTIFICATIONS, "TransferNotificationRequest", body) == []
    assert (body["data"]["status"], body["data"]["reason"]) == ("refused", "notEnoughBalance")


def test_a_custody_move_goes_through_the_same_handler_the_other_way(brand_account):
    response = post(
        fee_request(
            brand_account,
            balanceAccountId=settings.ADYEN_BALANCE_ACCOUNT_ID,
            counterparty={"balanceAccountId": brand_account.account_id},
        )
    )

    assert response.status_code == 202 and spec_errors(TRANSFERS, "Transfer", response.json()) == []
    assert response.json()["balanceAccount"]["id"] == settings.ADYEN_BALANCE_ACCOUNT_ID
    assert sandbox.balance_of(brand_account) == 10_00 + 1_00
    events = SandboxFundingEvent.objects.filter(transfer__category="internal").order_by("pk")
    for body in sandbox.webhook_bodies(list(events)):
        assert spec_errors(NOTIFICATIONS, "TransferNotificationRequest", body) == []
        assert body["data"]["direction"] == "incoming"


def test_one_brand_never_pays_another_through_the_sandbox(
    brand_account, bison, django_capture_on_commit_callbacks
):
    other = own_account(bison, django_capture_on_commit_callbacks, holds=0)

    response = post(fee_request(brand_account, counterparty={"balanceAccountId": other.account_id}))

    assert response.status_code == 422 and response.json()["errorCode"] == "30_011"
    assert sandbox.balance_of(brand_account) == 10_00 and sandbox.balance_of(other) == 0


# ---- a brand that holds its own money: its fee leaves its own account, and reconciles ------------


def test_the_fee_leaves_the_brands_own_account_and_each_balance_still_matches(
    client, alice, staff_pair, django_capture_on_commit_callbacks
):
    brand, account = custody_brand(alice, "alpaca", django_capture_on_commit_callbacks)
    plan_for(brand, staff_pair)
    deposit(account, 100_00)
    campaign = live_campaign(brand, 100_00, "summer-glow")
    payout = pay(client, campaign, django_capture_on_commit_callbacks, subject="pat")

    assert fees.fee_transfers_send() == {"booked": 1}
    webhooks()
    fee_transfer = FeeTransfer.objects.get()
    assert fee_transfer.amount == 10 + payout.amount * 500 // 10_000
    ledger = brand_balance_account(brand_id=brand.pk, currency="EUR")
    ledger.refresh_from_db()
    assert provider_balance_of(account) == 100_00 - payout.amount - fee_transfer.amount == ledger.balance
    funding_services.provider_transactions_reconcile()
    account.refresh_from_db()
    assert account.drift == 0 and not ReconciliationException.objects.exists()
    assert crossing_transactions() == []


def test_a_booking_the_ledger_cannot_make_is_told_to_staff_once_and_never_sent_again(taken, monkeypatch):
    def refused(**kwargs):
        raise LedgerError("currency mismatch")

    monkeypatch.setattr(fees, "transfer_post", refused)
    for _twice in range(2):
        said = fees.fee_transfer_outcome(
            message="the provider's webhook",
            reference=taken.reference,
            attempt=0,
            status="booked",
            transfer_id="A",
        )
        assert said == "unbookable"

    taken.refresh_from_db()
    assert (taken.status, taken.provider_status) == ("sent", "booked")
    assert ReconciliationException.objects.get().reason == "provider_amount"
    assert fees.fee_transfers_send(now=timezone.now() + timedelta(days=1)) == {}


# ---- the invoice's VAT: taken when the invoice is issued, moved with the fees on the provider's word


def vat_moves(invoice: Invoice) -> int:
    return Transaction.objects.filter(idempotency_key=invoice_vat_ledger_key(invoice)).count()


def issued(brand, *, funds: int = 10_00) -> Invoice:
    """This month's invoice of the brand, its funds (what no campaign holds) topped up first."""
    if funds:
        fund(brand, funds, "EUR", reference=f"VAT-{funds}")
    return invoice_issue(brand=brand, currency="EUR", period_start=timezone.localdate())


@pytest.fixture
def vat_taken(summer, staff_pair, monkeypatch, django_capture_on_commit_callbacks):
    """Alpaca (Germany, no VAT number): one reward's fee (15 cents) and its invoice, VAT 19% (3
    cents), both sent in one transfer Adyen took (status received): not moved yet."""
    plan_for(summer.brand, staff_pair)
    rewarded(summer, 1)
    invoice = issued(summer.brand)
    own_account(invoice.brand, django_capture_on_commit_callbacks, holds=50_00)
    answer = example(TRANSFERS, "post-transfers-payout-to-balance-account-202")
    recording_client(monkeypatch, lambda request: httpx.Response(202, json=answer))
    return invoice


def test_the_vat_is_taken_when_the_invoice_is_issued_and_moved_once_when_booked(
    client, vat_taken, django_capture_on_commit_callbacks
):
    invoice = vat_taken
    vat_owed = platform_vat_account(currency="EUR")
    assert (invoice.net, invoice.vat, invoice.vat_state, vat_moves(invoice)) == (15, 3, "due", 1)
    legs = {
        entry.account.kind: entry.amount
        for entry in Transaction.objects.get(pk=invoice.vat_ledger_transaction_id).entries.all()
    }
    # Debited from the brand's funds, credited to what the platform owes the tax office (not revenue).
    assert legs == {AccountKind.BRAND_FUNDING: 3, AccountKind.VAT_PAYABLE: -3}
    vat_owed.refresh_from_db()
    assert vat_owed.balance == 3
    assert "VAT due: €0.03" in pdf_text(invoice_pdf(invoice))

    assert fees.fee_transfers_send() == {"sent": 1}
    fee_transfer = FeeTransfer.objects.get()
    invoice.refresh_from_db()
    assert (fee_transfer.amount, invoice.vat_transfer_reference) == (15 + 3, fee_transfer.reference)
    assert invoice.vat_state == "due"  # taken by the provider is not booked
    for _twice in range(2):
        for name in ("03.internal-authorised", "04.internal-booked"):
            body = documented(name, fee_transfer, transfer_id="1W1UG35U8A9J5ZLG")
            with django_capture_on_commit_callbacks(execute=True):
                assert deliver(client, body).status_code == 200

    invoice.refresh_from_db()
    assert (invoice.vat_state, booked_moves(fee_transfer.reference), vat_moves(invoice)) == ("paid", 1, 1)
    text = pdf_text(invoice_pdf(invoice))
    assert "The fees were taken from your balance account with each reward." in text
    assert "The VAT (€0.03) was taken from your balance account on" in text
    assert "VAT due" not in text
    _header, rows = invoice_csv(invoice)
    assert rows[-1][-1] == f"{timezone.localdate():%Y-%m-%d}"
    assert fees.fee_transfers_send() == {}  # nothing more to move


def test_a_reverse_charged_invoice_moves_no_vat(summer, staff_pair, django_capture_on_commit_callbacks):
    plan_for(summer.brand, staff_pair)
    rewarded(summer, 1)
    Brand.objects.filter(pk=summer.brand_id).update(
        country="FR", vat_id="FR12345678901", vies_vat_id="FR12345678901", vies_status="valid"
    )
    invoice = issued(Brand.objects.get(pk=summer.brand_id))
    own_account(invoice.brand, django_capture_on_commit_callbacks, holds=50_00)

    assert (invoice.vat, invoice.vat_state, invoice.vat_ledger_transaction_id) == (0, "none", None)
    assert fees.fee_transfers_send() == {"booked": 1}
    invoice.refresh_from_db()
    assert (FeeTransfer.objects.get().amount, invoice.vat_transfer_reference) == (15, "")
    vat_owed = platform_vat_account(currency="EUR")
    vat_owed.refresh_from_db()
    assert vat_owed.balance == 0
    text = pdf_text(invoice_pdf(invoice))
    assert "Reverse charge" in text and "Nothing is left to pay." in text and "VAT due" not in text


def test_vat_the_funds_cannot_cover_is_shown_due_told_to_staff_once_and_taken_later(
    summer, staff_pair, django_capture_on_commit_callbacks
):
    plan_for(summer.brand, staff_pair)
    rewarded(summer, 1)
    invoice = issued(summer.brand, funds=0)  # every cent is in the campaign's budget
    own_account(invoice.brand, django_capture_on_commit_callbacks, holds=50_00)

    assert (invoice.number, invoice.vat, invoice.vat_state, vat_moves(invoice)) == (
        "JB-000001",
        3,
        "short",
        0,
    )
    assert "Your funds did not cover it" in pdf_text(invoice_pdf(invoice))
    for _twice in range(2):
        fees.fee_transfers_send()
    told = ReconciliationException.objects.get(reason="fee_refused")
    assert invoice.number in told.detail and told.brand_id == invoice.brand_id
    assert FeeTransfer.objects.get().amount == 15  # the fee went; the VAT waits for the funds

    fund(invoice.brand, 1_00, "EUR", reference="LATER")
    assert fees.fee_transfers_send() == {"booked": 1}
    invoice.refresh_from_db()
    assert (invoice.vat_state, vat_moves(invoice)) == ("paid", 1)
    assert list(FeeTransfer.objects.order_by("pk").values_list("amount", flat=True)) == [15, 3]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_an_invoice_issued_by_racing_workers_takes_its_vat_once(summer, staff_pair):
    plan_for(summer.brand, staff_pair)
    rewarded(summer, 2)
    fund(summer.brand, 10_00, "EUR", reference="RACE")
    barrier = threading.Barrier(8)

    def issue(_index):
        try:
            barrier.wait()
            return invoice_issue(brand=summer.brand, currency="EUR", period_start=timezone.localdate()).pk
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=8) as pool:
        issued_ids = set(pool.map(issue, range(8)))

    invoice = Invoice.objects.get()
    assert issued_ids == {invoice.pk} and (invoice.vat, vat_moves(invoice)) == (6, 1)  # 19% of 30
    vat_owed = platform_vat_account(currency="EUR")
    vat_owed.refresh_from_db()
    assert vat_owed.balance == 6


def test_the_vat_leaves_the_brands_own_account_and_each_balance_still_matches(
    client, alice, staff_pair, django_capture_on_commit_callbacks
):
    brand, account = custody_brand(alice, "alpaca", django_capture_on_commit_callbacks)
    plan_for(brand, staff_pair)
    deposit(account, 100_00)
    campaign = live_campaign(brand, 50_00, "summer-glow")
    payout = pay(client, campaign, django_capture_on_commit_callbacks, subject="pat")
    invoice = invoice_issue(brand=brand, currency="EUR", period_start=timezone.localdate())
    fee = 10 + payout.amount * 500 // 10_000
    assert (invoice.net, invoice.vat_state) == (fee, "due") and invoice.vat > 0

    assert fees.fee_transfers_send() == {"booked": 1}
    webhooks()
    invoice.refresh_from_db()
    assert FeeTransfer.objects.get().amount == fee + invoice.vat and invoice.vat_state == "paid"
    ledger = brand_balance_account(brand_id=brand.pk, currency="EUR")
    ledger.refresh_from_db()
    assert provider_balance_of(account) == 100_00 - payout.amount - fee - invoice.vat == ledger.balance
    funding_services.provider_transactions_reconcile()
    account.refresh_from_db()
    assert account.drift == 0 and not ReconciliationException.objects.exists()
    assert crossing_transactions() == []
