"""What every transfer webhook Adyen documents books, when it reaches the endpoint signed.

Each of Adyen's published examples (BalancePlatformTransferNotification-v4, kept whole in
tests/payouts/adyen/, MIT licence) goes through the webhook endpoint signed with the HMAC key, once
as Adyen wrote it and once about a brand's virtual account. "Incoming" is not "money in": Adyen's
own direct debit example is an incoming bankDirectDebit whose balance goes down. Only a bank
transfer that credits the account is a deposit; anything else that moves money on a brand's account
is one reconciliation exception for staff, and books nothing.
"""

import copy

import pytest

from joyback.ledger.models import AccountKind
from joyback.ledger.selectors import ledger_drift
from payouts.models import ProviderDeposit, ReconciliationException
from tests.conftest import provider_events
from tests.payouts import test_adyen_funding
from tests.payouts.test_adyen_funding import funding_balance, ledger_balance
from tests.payouts.test_adyen_transfers import NOTIFICATIONS, deliver, spec_errors

pytestmark = pytest.mark.django_db

opened = test_adyen_funding.opened  # the brand's virtual account, opened at the sandbox bank

EXAMPLES = NOTIFICATIONS["components"]["examples"]
PREFIX = "post-balancePlatform.transfer."

# What each documented example is, and what it does on a brand's virtual account: never a deposit.
DOCUMENTED = {
    "created-balancePlatform-transfer-created-incoming-internal": "internal transfer in",
    "created-balancePlatform-transfer-created-initiated-on-demand-top-up": "card top-up",
    "created-balancePlatform-transfer-created-initiated-scheduled-top-up": "scheduled top-up",
    "created-balancePlatform-transfer-created-outgoing-external": "payout received",
    "updated-01.payout-authorized": "payout authorised",
    "updated-02.payout-booked": "payout booked",
    "updated-03.internal-authorised": "internal transfer in, authorised",
    "updated-04.internal-booked": "internal transfer in, booked",
    "updated-05.directDebit-booked": "direct debit booked",
    "updated-06.directDebit-cancelled": "direct debit refused",
    "updated-07.directDebit-failed": "direct debit cancelled",
    "updated-08.internalDirectDebit-incoming-booked": "internal direct debit in",
    "updated-09.internalDirectDebit-outgoing-booked": "internal direct debit out",
    "updated-balancePlatform-transfer-updated-authorized-on-demand-top-up": "card top-up authorised",
    "updated-balancePlatform-transfer-updated-authorized-scheduled-top-up": "scheduled top-up authorised",
    "updated-balancePlatform-transfer-updated-captured-on-demand-top-up": "card top-up captured",
    "updated-balancePlatform-transfer-updated-captured-scheduled-top-up": "scheduled top-up captured",
}


def documented(name: str) -> dict:
    return copy.deepcopy(EXAMPLES[PREFIX + name]["value"])


def on_brand_account(body: dict, account) -> dict:
    body["data"]["balanceAccount"] = {"id": account.balance_account_id}
    assert spec_errors(NOTIFICATIONS, "TransferNotificationRequest", body) == []
    return body


def test_the_table_holds_every_example_adyen_ships():
    assert {PREFIX + name for name in DOCUMENTED} == set(EXAMPLES)


@pytest.mark.parametrize("name", DOCUMENTED)
def test_each_documented_webhook_on_a_brands_account_books_nothing_and_asks_staff(
    client, alpaca, opened, name, django_capture_on_commit_callbacks
):
    body = on_brand_account(documented(name), opened)
    with django_capture_on_commit_callbacks(execute=True):
        assert deliver(client, body).status_code == 200
        again = copy.deepcopy(body)
        again["data"]["sequenceNumber"] = int(body["data"].get("sequenceNumber") or 0) + 1
        assert deliver(client, again).status_code == 200  # a later webhook of the same transfer

    assert list(provider_events().order_by("pk").values_list("outcome", flat=True)) == [
        "movement_exception",
        "movement_known",
    ]
    exception = ReconciliationException.objects.get()
    assert (exception.brand_id, exception.reason) == (alpaca.pk, "provider_movement")
    assert exception.status == "open"
    assert exception.provider_transfer_id == body["data"]["id"]
    assert body["data"]["type"] in exception.detail and "not a deposit" in exception.detail
    assert not ProviderDeposit.objects.exists()
    assert funding_balance(alpaca) == 0 and ledger_balance(AccountKind.PROVIDER_BALANCE) == 0
    assert ledger_drift() == []


@pytest.mark.parametrize("name", DOCUMENTED)
def test_each_documented_webhook_about_no_account_of_ours_books_nothing(
    client, alpaca, opened, name, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        assert deliver(client, documented(name)).status_code == 200

    assert provider_events().get().outcome in ("not_a_payout", "not_a_virtual_account")
    assert not ReconciliationException.objects.exists() and not ProviderDeposit.objects.exists()
    assert funding_balance(alpaca) == 0 and ledger_drift() == []


def test_adyens_direct_debit_example_is_money_out_not_a_deposit(
    client, alpaca, opened, django_capture_on_commit_callbacks
):
    body = on_brand_account(documented("updated-05.directDebit-booked"), opened)
    assert body["data"]["direction"] == "incoming" and body["data"]["balances"][0]["balance"] == -1000

    with django_capture_on_commit_callbacks(execute=True):
        deliver(client, body)

    assert funding_balance(alpaca) == 0
    assert ReconciliationException.objects.get().amount == -1000


def genuine_credit(account, status: str = "booked", **changes) -> dict:
    """Adyen's direct debit example turned into what a deposit is: a bank transfer crediting the
    account (the spec ships no example of one)."""
    body = on_brand_account(documented("updated-05.directDebit-booked"), account)
    credit = [{"currency": "EUR", "balance": 1000, "received": 0, "reserved": 0}]
    body["data"].update({"type": "bankTransfer", "status": status, "balances": credit, **changes})
    assert spec_errors(NOTIFICATIONS, "TransferNotificationRequest", body) == []
    return body


def test_a_bank_transfer_crediting_the_account_is_a_deposit(
    client, alpaca, opened, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        deliver(client, genuine_credit(opened))

    assert provider_events().get().outcome == "deposit_booked"
    assert funding_balance(alpaca) == 1000 and not ReconciliationException.objects.exists()
    assert ledger_drift() == []


@pytest.mark.parametrize(
    "balances",
    [
        [{"currency": "EUR", "balance": -1000, "received": 0, "reserved": 0}],  # money went out
        [{"currency": "EUR", "balance": 1, "received": 0, "reserved": 0}],  # not what the amount says
        [{"currency": "USD", "balance": 1000}],  # another currency's register
        [],  # no balances: the sign cannot be told
    ],
    ids=["debited", "another-amount", "another-currency", "no-balances"],
)
def test_a_bank_transfer_that_does_not_credit_the_amount_is_not_a_deposit(
    client, alpaca, opened, balances, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        deliver(client, genuine_credit(opened, balances=balances))

    assert provider_events().get().outcome == "movement_exception"
    assert funding_balance(alpaca) == 0 and ReconciliationException.objects.count() == 1
    assert ledger_drift() == []


def test_a_transfer_out_of_a_brands_account_is_never_taken_for_a_payout(
    client, alpaca, opened, django_capture_on_commit_callbacks
):
    """Even when its reference is one of our payouts' EndToEndIds."""
    body = on_brand_account(documented("updated-02.payout-booked"), opened)
    body["data"]["reference"] = "JB0123456789ABCDEF0123456789ABCD"
    with django_capture_on_commit_callbacks(execute=True):
        deliver(client, body)
    assert provider_events().get().outcome == "movement_exception"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_direct_debits_webhooks_racing_in_four_workers_raise_one_exception_and_book_nothing(alpaca):
    """Adyen's direct debit example, booked and cancelled, each delivered twice at once to four
    workers that each apply what they stored: one exception for staff, no money in."""
    import json
    import threading

    from django.db import connection

    from payouts.funding import services as funding
    from payouts.models import VirtualAccount
    from payouts.submission.webhooks import transfer_events_process, transfer_webhook_receive
    from tests.payouts.test_adyen_transfers import sign

    funding.virtual_account_request(brand=alpaca, currency="EUR")
    account = VirtualAccount.objects.get()
    booked = on_brand_account(documented("updated-05.directDebit-booked"), account)
    cancelled = on_brand_account(documented("updated-07.directDebit-failed"), account)
    cancelled["data"]["id"] = booked["data"]["id"]
    cancelled["data"]["sequenceNumber"] = 9
    bodies = [json.dumps(body).encode() for body in (booked, booked, cancelled, cancelled)]
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
    assert provider_events().count() == 2
    assert sorted(provider_events().values_list("outcome", flat=True)) == [
        "movement_exception",
        "movement_known",
    ]
    assert ReconciliationException.objects.get().provider_transfer_id == booked["data"]["id"]
    assert funding_balance(alpaca) == 0 and not ProviderDeposit.objects.exists()
    assert ledger_drift() == []
