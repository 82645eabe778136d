"""Funding through Adyen's balance platform: each verified brand's virtual IBAN, the money that
arrives on it (booked only from Adyen's signed webhooks), and the reconciliation of Adyen's
transaction list with the ledger.

Requests are validated against Adyen's published OpenAPI schemas (the parts kept in
tests/payouts/adyen/, MIT licence); webhooks start from Adyen's documented incoming-transfer example
and are signed as Adyen signs them.
"""

import itertools
import json
import os
import threading

import httpx
import pytest
from django.db import connection
from django.test import override_settings
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schwifty import IBAN

from campaigns.models import Membership, Role
from campaigns.services.brands import brand_create, brand_verify
from joyback.ledger.models import Account, AccountKind
from joyback.ledger.selectors import ledger_drift
from payouts import psp
from payouts.funding import selectors as funding_selectors
from payouts.funding import services as funding
from payouts.models import (
    ProviderDeposit,
    ProviderTransaction,
    ReconciliationException,
    SandboxBalanceAccount,
    SandboxFundingEvent,
    SandboxFundingTransfer,
    VirtualAccount,
)
from payouts.providers import adyen_funding
from payouts.sandbox import funding as sandbox
from payouts.submission.webhooks import transfer_events_process, transfer_webhook_receive
from tests.conftest import provider_events, verified
from tests.payouts.test_adyen_transfers import (
    KEY,
    NEXT_KEY,
    NOTIFICATIONS,
    SPEC_DIR,
    deliver,
    example,
    sign,
    spec_errors,
)

pytestmark = pytest.mark.django_db

PLATFORM = json.loads((SPEC_DIR / "BalancePlatformService-v2.subset.json").read_text())
TRANSACTIONS = json.loads((SPEC_DIR / "TransferService-v4-transactions.subset.json").read_text())
TRANSFER_IDS = (f"INC{n:013d}" for n in itertools.count(1))


def funding_balance(brand) -> int:
    account = Account.objects.filter(kind=AccountKind.BRAND_FUNDING, brand_id=brand.pk).first()
    return account.balance if account else 0


def ledger_balance(kind) -> int:
    return sum(Account.objects.filter(kind=kind, currency="EUR").values_list("balance", flat=True))


@pytest.fixture
def alpaca(alice):
    """Alpaca, verified by staff and allowed by the provider, its own account not opened yet: the
    tests here open it."""
    return verified(
        brand_create(name="Alpaca Coffee", slug="alpaca", owner=alice, currency="EUR"), own_account=False
    )


@pytest.fixture
def opened(alpaca, django_capture_on_commit_callbacks):
    """Alpaca's virtual account, opened at the sandbox bank as the standing worker would."""
    with django_capture_on_commit_callbacks(execute=True):
        funding.virtual_account_request(brand=alpaca, currency="EUR")
    account = VirtualAccount.objects.get(brand=alpaca)
    assert account.status == "open", account.error
    return account


def credit_balances(status: str, amount: int) -> dict:
    """Adyen's balances of a credit in each status, as its documented examples carry them."""
    if status == "booked":
        return {"currency": "EUR", "balance": amount, "received": 0, "reserved": 0}
    if status == "returned":
        return {"currency": "EUR", "balance": -amount, "received": 0, "reserved": 0}
    return {"currency": "EUR", "received": amount}


def incoming_webhook(account, transfer_id, status, sequence, amount=250_00, **data) -> dict:
    """Adyen's documented incoming-transfer webhook, as a bank transfer to the brand's virtual
    account; validated against the published schema before it is used."""
    body = {
        "data": {
            "id": transfer_id,
            "type": "bankTransfer",
            "accountHolder": {"id": "AH00000000000000000JOYBACK"},
            "amount": {"currency": "EUR", "value": amount},
            "balanceAccount": {"id": account.balance_account_id},
            "paymentInstrument": {"id": account.payment_instrument_id},
            "balancePlatform": "YOUR_BALANCE_PLATFORM",
            "category": "bank",
            "counterparty": {
                "bankAccount": {
                    "accountHolder": {"fullName": "Alpaca Coffee GmbH"},
                    "accountIdentification": {"type": "iban", "iban": "DE89370400440532013000"},
                }
            },
            "creationDate": "2026-12-02T05:00:00+01:00",
            "direction": "incoming",
            "reason": "approved" if status != "returned" else "refusedByCounterpartyBank",
            "reference": "Top-up",
            "sequenceNumber": sequence,
            "status": status,
            "balances": [credit_balances(status, amount)],
            **data,
        },
        "environment": "test",
        "timestamp": "2026-12-02T05:00:01+01:00",
        "type": "balancePlatform.transfer.created" if sequence == 1 else "balancePlatform.transfer.updated",
    }
    assert spec_errors(NOTIFICATIONS, "TransferNotificationRequest", body) == []
    return body


# Contract: what the adapter sends is what Adyen's Balance Platform API documents.


def test_the_spec_refuses_what_it_does_not_document():
    documented = example(PLATFORM, "post-paymentInstruments-createBusinessAccountNL-DELocalIBAN")
    assert spec_errors(PLATFORM, "PaymentInstrumentInfo", documented) == []
    documented["bankAccount"]["formFactor"] = "imaginary"
    documented["colour"] = "green"
    assert len(spec_errors(PLATFORM, "PaymentInstrumentInfo", documented)) == 2


def test_opening_a_virtual_account_sends_what_adyen_documents():
    assert (
        spec_errors(
            PLATFORM,
            "BalanceAccountInfo",
            adyen_funding.balance_account_request(
                account_holder_id="AH3227C223222H5J4DCLW9VBV",
                currency="EUR",
                reference="brand-1-EUR",
                description="A funding",
            ),
        )
        == []
    )
    instrument = adyen_funding.payment_instrument_request(
        balance_account_id="BA1", reference="brand-1-EUR", description="A funding"
    )
    assert spec_errors(PLATFORM, "PaymentInstrumentInfo", instrument) == []
    assert instrument["type"] == "bankAccount" and instrument["bankAccount"] == {"formFactor": "virtual"}


def test_the_adapter_reads_adyens_documented_answers_and_keys_each_step(monkeypatch):
    answers = {
        "/balanceAccounts": "post-balanceAccounts-createBalanceAccount-200",
        "/paymentInstruments": "post-paymentInstruments-createBusinessAccountNL-DELocalIBAN-200",
    }
    sent = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        path = request.url.path.removeprefix("/sandbox/bank/bcl/v2")
        name = answers.get(path, "post-balanceAccounts-balanceAccountId-sweeps-createSweep-push-200")
        return httpx.Response(200, json=example(PLATFORM, name))

    client = httpx.Client(transport=httpx.MockTransport(handler))
    monkeypatch.setattr(psp, "psp_client", lambda: client)

    opened = adyen_funding.account_open(
        key="joyback-virtual-account-7",
        account_holder_id="AH3227C223222H5J4DCLW9VBV",
        currency="EUR",
        reference="brand-1-EUR",
        description="Alpaca funding EUR",
        opened=adyen_funding.OpenedAccount(),
    )

    assert (
        opened.iban == "DE20100190002300001206"
        and opened.payment_instrument_id == "PI3227C223226C5JW49ZHBQMS"
    )
    # No sweep: the money stays on the brand's own balance account.
    assert [r.url.path.rsplit("/", 1)[-1] for r in sent] == ["balanceAccounts", "paymentInstruments"]
    assert [r.headers["Idempotency-Key"] for r in sent] == [
        "joyback-virtual-account-7-balance-account",
        "joyback-virtual-account-7-bank-account",
    ]
    assert json.loads(sent[0].content)["accountHolderId"] == "AH3227C223222H5J4DCLW9VBV"
    assert all(r.headers["X-API-Key"] == "sbx-adyen-api-key" for r in sent)
    # A retry after the first step got through asks only for what is missing, with the same keys.
    sent.clear()
    adyen_funding.account_open(
        key="joyback-virtual-account-7",
        account_holder_id="AH3227C223222H5J4DCLW9VBV",
        currency="EUR",
        reference="brand-1-EUR",
        description="Alpaca funding EUR",
        opened=adyen_funding.OpenedAccount(balance_account_id="BA3227C223222H5J4DCGQ9V9L"),
    )
    assert [r.headers["Idempotency-Key"] for r in sent] == ["joyback-virtual-account-7-bank-account"]


def test_the_sandbox_answers_in_adyens_documented_shapes(opened):
    sandbox_account = SandboxBalanceAccount.objects.get()
    assert spec_errors(PLATFORM, "BalanceAccount", sandbox._account_json(sandbox_account)) == []
    assert spec_errors(PLATFORM, "PaymentInstrument", sandbox._instrument_json(sandbox_account)) == []
    sandbox.deposit_simulate(iban=opened.iban, amount=10_00, returned=True)
    sandbox.funding_webhooks_deliver()
    events = list(SandboxFundingEvent.objects.select_related("transfer__account"))
    listed = {"data": [sandbox.transaction_json(e) for e in events if e.status in ("booked", "returned")]}
    assert spec_errors(TRANSACTIONS, "TransactionSearchResponse", listed) == []
    for body in sandbox.webhook_bodies(events):
        assert spec_errors(NOTIFICATIONS, "TransferNotificationRequest", body) == []


# The virtual account.


def test_staff_verifying_a_brand_opens_its_virtual_iban_once(
    alice, make_user, django_capture_on_commit_callbacks
):
    from allauth.account.models import EmailAddress

    staff = make_user("sue@joyback.example", is_staff=True)
    EmailAddress.objects.create(user=alice, email=alice.email, verified=True, primary=True)
    brand = verified(brand_create(name="Llama Tea", slug="llama", owner=alice, currency="EUR"))
    type(brand).objects.filter(pk=brand.pk).update(verified_at=None)
    brand.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        brand_verify(brand=brand, actor=staff)

    account = VirtualAccount.objects.get(brand=brand)
    assert account.status == "open" and account.currency == "EUR"
    iban = IBAN(account.iban)  # a valid IBAN of the sandbox bank
    assert iban.country_code == "DE" and iban.bank_code == sandbox.SANDBOX_BANK_CODE
    with django_capture_on_commit_callbacks(execute=True):
        again = funding.virtual_account_request(brand=brand, currency="EUR")
    assert again.pk == account.pk and again.iban == account.iban
    assert SandboxBalanceAccount.objects.count() == 1 and VirtualAccount.objects.count() == 1


def test_a_lost_answer_is_asked_again_with_the_same_keys_and_opens_one_account(
    alpaca, monkeypatch, django_capture_on_commit_callbacks
):
    real = psp.http_request
    calls = []

    def flaky(method, url, **kwargs):
        calls.append(url)
        response = real(method, url, **kwargs)
        if url.endswith("/paymentInstruments") and len(calls) == 2:
            raise psp.PspUnknown("answer lost")  # the sandbox bank made it; we never heard
        return response

    monkeypatch.setattr(adyen_funding, "http_request", flaky)
    with django_capture_on_commit_callbacks(execute=True):
        funding.virtual_account_request(brand=alpaca, currency="EUR")
    assert VirtualAccount.objects.get().status == "requested"

    VirtualAccount.objects.update(claimed_until=None)  # the lease ended
    funding.virtual_accounts_open()

    account = VirtualAccount.objects.get()
    assert account.status == "open" and account.attempts == 2
    assert SandboxBalanceAccount.objects.count() == 1
    assert SandboxBalanceAccount.objects.get().iban == account.iban


def test_a_brand_not_verified_gets_no_virtual_account(alice):
    brand = brand_create(name="Llama Tea", slug="llama", owner=alice, currency="EUR")
    with pytest.raises(funding.FundingRefused):
        funding.virtual_account_request(brand=brand, currency="EUR")
    assert not VirtualAccount.objects.exists()


def test_the_owner_sees_the_virtual_iban_and_the_marketer_who_funds(client, alice, alpaca, opened, make_user):
    client.force_login(alice)
    page = client.get(reverse("payouts:funding", args=[alpaca.slug])).content.decode()
    assert opened.iban_grouped in page and "Send to my virtual IBAN" in page

    mark = make_user("mark@alpaca.example", first_name="Mark")
    Membership.objects.create(brand=alpaca, user=mark, role=Role.MARKETER)
    client.force_login(mark)
    page = client.get(reverse("payouts:funding", args=[alpaca.slug])).content.decode()
    assert opened.iban not in page and opened.iban_grouped not in page
    assert "Who funds this brand:" in page and "Alice" in page


def test_another_brand_sees_no_virtual_iban_and_sends_no_money(client, bob, bison, alpaca, opened):
    client.force_login(bob)
    assert client.get(reverse("payouts:funding", args=[alpaca.slug])).status_code == 404
    response = client.post(
        reverse("payouts:funding_sandbox_deposit", args=[alpaca.slug]), {"amount": "50.00"}
    )
    assert response.status_code == 404
    assert not SandboxFundingTransfer.objects.exists() and funding_balance(alpaca) == 0
    own = client.get(reverse("payouts:funding", args=[bison.slug])).content.decode()
    assert opened.iban_grouped not in own


def test_a_brand_cannot_book_its_own_deposit(client, alice, alpaca, opened):
    """Only the provider's signed webhook books: the brand's session, its own signature or no
    signature book nothing, and outside the sandbox there is no test money to send."""
    client.force_login(alice)
    body = incoming_webhook(opened, "FAKE000000000001", "booked", 2)
    assert deliver(client, body, signature="").status_code == 401
    assert deliver(client, body, key=NEXT_KEY).status_code == 401
    with override_settings(SANDBOX=False):
        client.post(reverse("payouts:funding_sandbox_deposit", args=[alpaca.slug]), {"amount": "50.00"})
    assert not ProviderDeposit.objects.exists() and funding_balance(alpaca) == 0


# Incoming money, from the provider's webhooks.


def test_a_signed_booked_webhook_books_the_brands_deposit(
    client, alpaca, opened, django_capture_on_commit_callbacks
):
    transfer = next(TRANSFER_IDS)
    with django_capture_on_commit_callbacks(execute=True):
        assert deliver(client, incoming_webhook(opened, transfer, "received", 1)).status_code == 200
        assert funding_balance(alpaca) == 0
        assert deliver(client, incoming_webhook(opened, transfer, "booked", 2)).status_code == 200

    deposit = ProviderDeposit.objects.get()
    assert (deposit.brand, deposit.status, deposit.amount, deposit.payer_name) == (
        alpaca,
        "booked",
        250_00,
        "Alpaca Coffee GmbH",
    )
    assert funding_balance(alpaca) == 250_00
    # It stays on the brand's own balance account, mirrored as the brand's asset.
    assert ledger_balance(AccountKind.BRAND_BALANCE) == 250_00 and ledger_drift() == []
    assert ledger_balance(AccountKind.PROVIDER_BALANCE) == 0
    assert list(provider_events().order_by("pk").values_list("outcome", flat=True)) == [
        "kept received",
        "deposit_booked",
    ]


def test_a_tampered_incoming_webhook_is_refused(client, alpaca, opened):
    body = incoming_webhook(opened, next(TRANSFER_IDS), "booked", 2, amount=1_00)
    raw = json.dumps(body).encode()
    tampered = raw.replace(b'"value": 100', b'"value": 100000')
    assert tampered != raw
    assert deliver(client, body, raw=tampered, signature=sign(raw)).status_code == 401
    assert not provider_events().exists() and funding_balance(alpaca) == 0


def test_while_a_key_rotates_both_book(client, alpaca, opened, django_capture_on_commit_callbacks):
    with override_settings(ADYEN_HMAC_KEYS=[NEXT_KEY, KEY]), django_capture_on_commit_callbacks(execute=True):
        deliver(client, incoming_webhook(opened, next(TRANSFER_IDS), "booked", 2, amount=1_00))
        deliver(client, incoming_webhook(opened, next(TRANSFER_IDS), "booked", 2, amount=2_00), key=NEXT_KEY)
    assert funding_balance(alpaca) == 3_00


def test_replayed_and_out_of_order_webhooks_book_once(
    client, alpaca, opened, django_capture_on_commit_callbacks
):
    transfer = next(TRANSFER_IDS)
    booked = incoming_webhook(opened, transfer, "booked", 2)
    with django_capture_on_commit_callbacks(execute=True):
        deliver(client, booked)
        deliver(client, booked)  # replayed: stored once
        deliver(client, incoming_webhook(opened, transfer, "received", 1))  # late
    assert provider_events().count() == 2
    assert funding_balance(alpaca) == 250_00 and ProviderDeposit.objects.get().status == "booked"


def test_a_deposit_returned_later_comes_off_the_funding_once(
    client, alpaca, opened, django_capture_on_commit_callbacks
):
    transfer = next(TRANSFER_IDS)
    with django_capture_on_commit_callbacks(execute=True):
        deliver(client, incoming_webhook(opened, transfer, "booked", 2))
        deliver(client, incoming_webhook(opened, transfer, "returned", 3))
        deliver(client, incoming_webhook(opened, transfer, "booked", 2, reference="again"))
    deposit = ProviderDeposit.objects.get()
    assert deposit.status == "returned" and deposit.return_transaction_id
    assert funding_balance(alpaca) == 0 and ledger_drift() == []


def test_a_return_overtaking_the_booking_books_nothing(
    client, alpaca, opened, django_capture_on_commit_callbacks
):
    transfer = next(TRANSFER_IDS)
    with django_capture_on_commit_callbacks(execute=True):
        deliver(client, incoming_webhook(opened, transfer, "returned", 3))
        deliver(client, incoming_webhook(opened, transfer, "booked", 2))
    assert ProviderDeposit.objects.get().status == "returned"
    assert funding_balance(alpaca) == 0 and ledger_balance(AccountKind.BRAND_BALANCE) == 0


def test_a_webhook_for_an_account_that_is_not_a_brands_books_nothing(
    client, alpaca, opened, django_capture_on_commit_callbacks
):
    body = incoming_webhook(
        opened, next(TRANSFER_IDS), "booked", 2, balanceAccount={"id": "BA0000000000000000STRANGER"}
    )
    with django_capture_on_commit_callbacks(execute=True):
        deliver(client, body)
    assert provider_events().get().outcome == "not_a_virtual_account"
    assert not ProviderDeposit.objects.exists()


def test_the_sandbox_deposit_with_duplicates_out_of_order_and_a_return_books_what_stayed(alpaca, opened):
    stays = sandbox.deposit_simulate(iban=opened.iban, amount=400_00, chaos=True)
    goes = sandbox.deposit_simulate(iban=opened.iban, amount=70_00, chaos=True, returned=True)
    sandbox.funding_webhooks_deliver()  # each twice, newest first
    transfer_events_process()
    later = sandbox.deposit_simulate(iban=opened.iban, amount=30_00)
    sandbox.funding_webhooks_deliver()
    sandbox.deposit_return(transfer=later)
    sandbox.funding_webhooks_deliver()
    transfer_events_process()

    statuses = dict(ProviderDeposit.objects.values_list("transfer_id", "status"))
    assert statuses == {
        stays.transfer_id: "booked",
        goes.transfer_id: "returned",
        later.transfer_id: "returned",
    }
    assert funding_balance(alpaca) == 400_00
    # Nothing was swept: what stayed is on the brand's own balance account, and the ledger's
    # mirror of it says the same.
    assert ledger_balance(AccountKind.PLATFORM_BANK) == 0
    assert ledger_balance(AccountKind.BRAND_BALANCE) == 400_00
    assert sandbox.balance_of(SandboxBalanceAccount.objects.get()) == 400_00
    assert ledger_drift() == []


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_deliveries_of_one_incoming_transfer_racing_book_once(alpaca, django_capture_on_commit_callbacks):
    funding.virtual_account_request(brand=alpaca, currency="EUR")
    opened = VirtualAccount.objects.get()
    assert opened.status == "open"
    transfer = next(TRANSFER_IDS)
    bodies = [
        json.dumps(incoming_webhook(opened, transfer, "booked", 2)).encode(),
        json.dumps(incoming_webhook(opened, transfer, "booked", 2)).encode(),
        json.dumps(incoming_webhook(opened, transfer, "booked", 3, reference="booked again")).encode(),
        json.dumps(incoming_webhook(opened, transfer, "received", 1)).encode(),
    ]
    barrier = threading.Barrier(len(bodies))
    errors = []

    def worker(raw):
        try:
            barrier.wait()
            transfer_webhook_receive(body=raw, headers={"HmacSignature": sign(raw)})
        except Exception as error:  # a race's failure is the test's finding
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(raw,)) for raw in bodies]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    transfer_events_process()

    assert errors == []
    assert provider_events().count() == 3
    assert ProviderDeposit.objects.get().status == "booked"
    assert funding_balance(alpaca) == 250_00
    assert Account.objects.get(kind=AccountKind.BRAND_FUNDING).entries.count() == 1
    assert ledger_drift() == []


LIFECYCLES = [("received", "booked"), ("received", "booked", "returned"), ("received", "returned")]


def test_whatever_order_the_webhooks_come_in_the_funding_is_booked_minus_returned(alpaca, opened):
    examples = itertools.count()

    @given(
        st.lists(
            st.tuples(st.sampled_from(LIFECYCLES), st.integers(min_value=1, max_value=500_00)),
            min_size=1,
            max_size=4,
        ),
        st.randoms(use_true_random=False),
        st.integers(min_value=0, max_value=3),
    )
    @settings(
        max_examples=int(os.environ.get("FUNDING_EXAMPLES", "12")),
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    def run(transfers, shuffler, repeats):
        before = funding_balance(alpaca)
        bodies, stayed = [], 0
        for number, (lifecycle, amount) in enumerate(transfers):
            transfer = f"P{next(examples):06d}N{number:02d}"
            for sequence, status in enumerate(lifecycle, start=1):
                bodies.append(incoming_webhook(opened, transfer, status, sequence, amount=amount))
            stayed += amount if lifecycle[-1] == "booked" else 0
        bodies += [shuffler.choice(bodies) for _ in range(repeats)]  # redeliveries
        shuffler.shuffle(bodies)
        for body in bodies:
            raw = json.dumps(body).encode()
            transfer_webhook_receive(body=raw, headers={"HmacSignature": sign(raw)})
        transfer_events_process()
        assert funding_balance(alpaca) - before == stayed
        booked = ProviderDeposit.objects.filter(status="booked").values_list("amount", flat=True)
        assert funding_balance(alpaca) == sum(booked)

    run()
    assert ledger_drift() == []


# Reconciliation with the provider's transaction list, and its balance.


def test_every_provider_transaction_matches_its_ledger_booking(alpaca, opened):
    sandbox.deposit_simulate(iban=opened.iban, amount=120_00)
    sandbox.funding_webhooks_deliver()
    transfer_events_process()

    done = funding.provider_transactions_reconcile()

    assert done == {"matched": 1, "exceptions": 0, "waiting": 0}
    assert sorted(ProviderTransaction.objects.values_list("kind", "amount", "matched")) == [
        ("deposit", 120_00, True),
    ]
    assert funding_selectors.provider_drift_problems() == []
    opened.refresh_from_db()
    assert (opened.provider_balance, opened.ledger_balance, opened.drift) == (120_00, 120_00, 0)
    assert not ReconciliationException.objects.exists()


def test_what_the_ledger_lacks_or_books_differently_is_an_exception_for_finance(
    client, alice, alpaca, opened, sam
):
    lost = sandbox.deposit_simulate(iban=opened.iban, amount=80_00)  # its webhooks never came
    differs = sandbox.deposit_simulate(iban=opened.iban, amount=20_00, returned=True)
    SandboxFundingEvent.objects.filter(transfer__in=[lost]).delete()
    sandbox.funding_webhooks_deliver()
    transfer_events_process()
    SandboxFundingEvent.objects.create(transfer=lost, status="booked")  # booked, never reported
    SandboxFundingTransfer.objects.filter(pk=differs.pk).update(amount=25_00)  # provider says 25.00

    funding.provider_transactions_reconcile(grace=funding.RECONCILE_GRACE * 0)
    funding.provider_transactions_reconcile(grace=funding.RECONCILE_GRACE * 0)  # again: no copies

    reasons = sorted(ReconciliationException.objects.values_list("reason", "amount"))
    assert reasons == [("provider_amount", -25_00), ("provider_amount", 25_00), ("provider_unmatched", 80_00)]
    assert set(ReconciliationException.objects.values_list("brand", flat=True)) == {alpaca.pk}
    client.force_login(alice)
    page = client.get(reverse("payouts:reconciliation", args=[alpaca.slug])).content.decode()
    assert "Booked by the payment provider, not in the ledger" in page
    assert "The provider booked another amount than the ledger" in page
    # The provider's balance is 80.00 more than the brand's ledger account: drift, for /healthz/,
    # and the brand's money paused.
    assert funding_selectors.provider_drift_problems()[0].startswith("BRAND BALANCE DRIFT brand")
    assert funding_selectors.brands_custody_blocked(brand_ids=[alpaca.pk]) == {alpaca.pk}
    client.force_login(sam)
    health = client.get("/healthz/")
    assert health.status_code == 503 and b"BRAND BALANCE DRIFT" in health.content
    metrics = "".join(str(m) for m in funding_selectors.provider_metrics())
    assert "joyback_provider_drift_minor" in metrics


def test_a_brand_only_sees_its_own_provider_exceptions(client, bob, bison, alpaca, opened):
    sandbox.deposit_simulate(iban=opened.iban, amount=80_00)
    SandboxFundingEvent.objects.filter(status="received").delete()
    funding.provider_transactions_reconcile(grace=funding.RECONCILE_GRACE * 0)
    client.force_login(bob)
    page = client.get(reverse("payouts:reconciliation", args=[bison.slug])).content.decode()
    assert "Booked by the payment provider" not in page


def test_the_sandbox_balance_platform_refuses_a_wrong_key_and_a_malformed_request(client):
    url = reverse("payouts:sandbox_adyen_balance_accounts")
    body = json.dumps({"accountHolderId": "AH00000000000000000JOYBACK"})
    wrong = client.post(url, body, content_type="application/json", headers={"X-API-Key": "guess"})
    assert wrong.status_code == 401 and wrong.json()["errorCode"] == "00_401"
    stranger = client.post(
        url,
        json.dumps({"accountHolderId": "AH0000000000000000STRANGER"}),
        content_type="application/json",
        headers={"X-API-Key": "sbx-adyen-api-key"},
    )
    assert stranger.status_code == 422 and "account holder" in stranger.json()["detail"]
    instrument = client.post(
        reverse("payouts:sandbox_adyen_payment_instruments"),
        json.dumps({"type": "card", "balanceAccountId": "BA1"}),
        content_type="application/json",
        headers={"X-API-Key": "sbx-adyen-api-key"},
    )
    assert instrument.status_code == 422
    assert not SandboxBalanceAccount.objects.exists()


def test_the_deposits_fragment_refreshes_for_htmx(
    client, alice, alpaca, opened, django_capture_on_commit_callbacks
):
    sandbox.deposit_simulate(iban=opened.iban, amount=12_34)
    with django_capture_on_commit_callbacks(execute=True):
        sandbox.funding_webhooks_deliver()
    client.force_login(alice)
    fragment = client.get(
        reverse("payouts:funding", args=[alpaca.slug]) + "?part=deposits", headers={"HX-Request": "true"}
    ).content.decode()
    assert fragment.lstrip().startswith('<section class="card" id="deposits"')
    assert "12.34" in fragment and "Booked to your funding" in fragment
