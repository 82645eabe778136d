"""Custody on the brand's own balance account: what arrives on a brand's virtual IBAN stays on its
own balance account at the provider (no sweep), its payouts leave from there (TransferService's
balanceAccountId), the ledger mirrors each brand's balance account as its own asset, the database
refuses any posting that moves money between two brands' accounts, each brand's provider balance
is reconciled with its ledger account (a drift pauses that brand only), and what the platform held
for a brand before is moved out by `manage.py custody_move`.

Where money could still cross from one brand to another, and the test that refuses it:
- a posting with legs on two brands' accounts: the ledger's check and the database trigger
  (test_the_database_refuses_a_posting_between_two_brands, the property test below);
- a payout sent from another brand's balance account: the order takes the payout's own brand's
  (test_a_payout_leaves_from_the_brands_own_balance_account);
- a transfer out of a brand's account with another brand's payout reference: not a payout of this
  brand, an exception for staff (test_a_transfer_out_with_another_brands_reference_is_not_booked);
- the platform's own accounts (its fee, a custody move) stand between a brand and the platform only,
  never two brands (the trigger allows a leg without a brand, no other).
"""

import contextlib
import itertools
import threading
import time
from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth.models import Permission
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schwifty import IBAN

from campaigns.fees import fee_plans_forget
from campaigns.models import Brand, FeePlan, Invoice
from campaigns.services.brands import brand_create
from campaigns.services.campaigns import campaign_create, campaign_transition
from campaigns.services.funding import (
    BrandNotVerified,
    brand_deposit_record,
    brand_funding_account,
    brand_money_allowed_check,
    campaign_fund,
)
from campaigns.services.invoices import invoice_issue
from joyback.ledger import sql as ledger_sql
from joyback.ledger.models import Account, AccountKind, Entry
from joyback.ledger.selectors import ledger_drift
from joyback.ledger.services import InvalidPosting, platform_bank, transfer_post
from joyback.users.four_eyes import SecondPersonRefused
from joyback.users.models import AccessChange, StaffGrant
from payouts.fees import fee_transfers_send
from payouts.funding import selectors as funding_selectors
from payouts.funding import services as funding
from payouts.funding.custody import (
    CustodyMoveRefused,
    custody_move,
    custody_move_confirm,
    custody_move_request,
)
from payouts.models import (
    Payout,
    ProviderOnboarding,
    ReconciliationException,
    SandboxBalanceAccount,
    SandboxBankPayment,
    SandboxFundingEvent,
    SandboxFundingTransfer,
    VirtualAccount,
)
from payouts.reconciliation.bank_health import platform_moves_paused
from payouts.reconciliation.exceptions import exception_resolve
from payouts.reconciliation.statement_import import statement_import_create
from payouts.sandbox import bank as sandbox_bank
from payouts.sandbox.funding import deposit_simulate, funding_webhooks_deliver
from payouts.submission.crash import SimulatedCrash, _crash_at
from payouts.submission.create import payout_for_participant
from payouts.submission.submit import payout_payment_order, payout_submit
from payouts.submission.sweeps import payouts_sweep
from payouts.submission.webhooks import transfer_events_process
from tests.conftest import rewarded_in_browser, totp_code, verified
from tests.payouts.camt_fixtures import camt053
from tests.payouts.conftest import payee_details

pytestmark = pytest.mark.django_db
IBAN_NUMBERS = itertools.count(1)


def webhooks():
    funding_webhooks_deliver()
    transfer_events_process()


def custody_brand(owner, slug: str, capture) -> tuple[Brand, VirtualAccount]:
    """A live brand staff verified and the sandbox provider verified at once (nothing in its legal
    name asks otherwise), with its own balance account and virtual IBAN."""
    brand = verified(
        brand_create(name=slug.title(), slug=slug, owner=owner, currency="EUR"), provider_allowed=False
    )
    Brand.objects.filter(pk=brand.pk).update(legal_name=f"{slug.title()} GmbH")
    brand.refresh_from_db()
    with capture(execute=True):
        funding.virtual_account_request(brand=brand, currency="EUR")
    webhooks()
    account = VirtualAccount.objects.get(brand=brand)
    assert account.status == "open" and account.account_holder_id, account.error
    assert funding_selectors.brand_balance_account_id(brand=brand) == account.balance_account_id
    return brand, account


def deposit(account: VirtualAccount, amount: int, *, returned: bool = False):
    deposit_simulate(iban=account.iban, amount=amount, returned=returned)
    webhooks()


def live_campaign(brand, budget: int, slug: str):
    campaign = campaign_create(
        brand=brand,
        name=slug.title(),
        slug=slug,
        package="all_in_one",
        currency="EUR",
        countries=["DE"],
        languages=["en"],
    )
    campaign_fund(campaign=campaign, amount=budget)
    return campaign_transition(campaign=campaign, to="live")


def provider_balance_of(account: VirtualAccount) -> int:
    return sandbox_bank.sandbox_balance(
        SandboxBalanceAccount.objects.get(account_id=account.balance_account_id)
    )


def ledger_balance_of(brand) -> int:
    found = Account.objects.filter(kind=AccountKind.BRAND_BALANCE, brand_id=brand.pk, currency="EUR").first()
    return found.balance if found else 0


def crossing_transactions() -> list[int]:
    """Transactions whose entries touch two different brands' accounts."""
    seen: dict[int, set] = {}
    for transaction_id, brand_id in Entry.objects.values_list("transaction_id", "account__brand_id"):
        if brand_id is not None:
            seen.setdefault(transaction_id, set()).add(brand_id)
    return [pk for pk, brands in seen.items() if len(brands) > 1]


def own_iban(number: int) -> str:
    """A valid IBAN of a person's own (people sharing one are held for review), settling at the
    sandbox bank (no magic suffix)."""
    return str(IBAN.generate("DE", bank_code="37040044", account_code=f"{5_000_000 + number * 10:010d}"))


def pay(client, campaign, capture, *, subject: str, iban=None) -> Payout:
    iban = iban or own_iban(next(IBAN_NUMBERS))
    person = rewarded_in_browser(client, campaign, subject=subject)
    with capture(execute=True):
        payee_details(client, campaign, iban=iban, email=f"{subject}@example.com")
    # The pipeline made and sent it after the commit, or it is made here as a worker would.
    payout = Payout.objects.filter(participant=person).order_by("-pk").first()
    if payout is None:
        payout = payout_for_participant(participant_id=person.pk, currency="EUR")
    if payout.status in ("created", "payee_verified"):
        payout_submit(payout_id=payout.pk)
    payout.refresh_from_db()
    return payout


# The database: no posting between two brands.


def test_the_database_refuses_a_posting_between_two_brands(alpaca, bison):
    """The ledger's Python check says it in words; the trigger holds it even for a writer that
    goes around the write path."""
    a = brand_funding_account(brand=alpaca, currency="EUR")
    b = brand_funding_account(brand=bison, currency="EUR")
    with pytest.raises(InvalidPosting, match="two brands"):
        transfer_post(source=a, destination=b, amount=1, reason="crossing")
    with pytest.raises(DatabaseError, match="between two brands"), transaction.atomic():
        [(tx, *_rest)] = ledger_sql.transactions_insert(
            now=timezone.now(),
            columns=[["crossing"], [""], [""], [None], ["x"], [None], [alpaca.pk]],
        )
        ledger_sql.entries_insert(
            entries=[(tx, a.pk, 1, "EUR", alpaca.pk), (tx, b.pk, -1, "EUR", alpaca.pk)],
            changes=[],  # the one-brand rule is the entries' own, whatever the balances do
        )
    # A brand and the platform's own account (its fee, a custody move) is allowed.
    brand_deposit_record(brand=alpaca, amount=5_00, currency="EUR", bank_reference="OK-1")
    assert crossing_transactions() == []


# Deposits stay; payouts leave from the brand's own account; the ledger mirrors it.


def test_a_deposit_stays_on_the_brands_own_balance_account(alice, django_capture_on_commit_callbacks):
    brand, account = custody_brand(alice, "alpaca", django_capture_on_commit_callbacks)
    deposit(account, 250_00)
    assert provider_balance_of(account) == 250_00 == ledger_balance_of(brand)
    assert brand_funding_account(brand=brand, currency="EUR").balance == 250_00
    # Nothing swept, nothing on the platform's accounts.
    assert not SandboxFundingTransfer.objects.filter(category="internal").exists()
    assert not Entry.objects.filter(account__brand_id__isnull=True).exists()
    assert account.holder_name == "Alpaca GmbH"


def test_a_payout_leaves_from_the_brands_own_balance_account(
    client, alice, bob, django_capture_on_commit_callbacks
):
    brand, account = custody_brand(alice, "alpaca", django_capture_on_commit_callbacks)
    other, other_account = custody_brand(bob, "bison", django_capture_on_commit_callbacks)
    deposit(account, 100_00)
    deposit(other_account, 100_00)
    campaign = live_campaign(brand, 100_00, "summer-glow")
    payout = pay(client, campaign, django_capture_on_commit_callbacks, subject="pat")
    assert payout_payment_order(payout).balance_account_id == account.balance_account_id
    assert payout.status == "settled"
    sent = SandboxBankPayment.objects.get(end_to_end_id=payout.end_to_end_id)
    assert sent.balance_account_id == account.balance_account_id
    # Its webhooks name the brand's balance account: read as its payout, never a movement.
    sandbox_bank.webhooks_deliver()
    transfer_events_process()
    webhooks()
    assert not ReconciliationException.objects.exists()
    assert provider_balance_of(account) == 100_00 - payout.amount == ledger_balance_of(brand)
    assert provider_balance_of(other_account) == 100_00 == ledger_balance_of(other)
    # Reconciled per balance account: each brand's provider balance equals its ledger account.
    funding.provider_transactions_reconcile()
    for found in VirtualAccount.objects.all():
        assert found.balance_checked_at is not None and found.drift == 0
    assert not ReconciliationException.objects.exists() and ledger_drift() == []
    assert crossing_transactions() == []


def test_a_returned_payout_comes_back_to_the_brands_own_account(
    client, alice, django_capture_on_commit_callbacks
):
    brand, account = custody_brand(alice, "alpaca", django_capture_on_commit_callbacks)
    deposit(account, 50_00)
    campaign = live_campaign(brand, 50_00, "summer-glow")
    payout = pay(client, campaign, django_capture_on_commit_callbacks, subject="pat")
    sandbox_bank.payment_return(
        payment=SandboxBankPayment.objects.get(end_to_end_id=payout.end_to_end_id), reason_code="AC04"
    )
    sandbox_bank.webhooks_deliver()
    transfer_events_process()
    payout.refresh_from_db()
    assert payout.status == "returned"
    assert provider_balance_of(account) == 50_00 == ledger_balance_of(brand)


def test_a_transfer_out_with_another_brands_reference_is_not_booked(
    client, alice, bob, django_capture_on_commit_callbacks
):
    brand, account = custody_brand(alice, "alpaca", django_capture_on_commit_callbacks)
    other, other_account = custody_brand(bob, "bison", django_capture_on_commit_callbacks)
    deposit(other_account, 20_00)
    campaign = live_campaign(other, 20_00, "bison-ride")
    theirs = pay(client, campaign, django_capture_on_commit_callbacks, subject="pat")
    # Alpaca's account reports a transfer out carrying Bison's payout reference: not Alpaca's.
    outcome = funding.provider_transfer_apply(
        {
            "type": "balancePlatform.transfer.updated",
            "data": {
                "id": "FORGED0000000001",
                "category": "bank",
                "direction": "outgoing",
                "type": "bankTransfer",
                "status": "booked",
                "reference": theirs.end_to_end_id,
                "amount": {"currency": "EUR", "value": 2_00},
                "balanceAccount": {"id": account.balance_account_id},
                "balances": [{"currency": "EUR", "balance": -2_00}],
            },
        }
    )
    assert outcome == "movement_exception"
    assert ReconciliationException.objects.get().brand_id == brand.pk


def test_the_provider_refuses_what_the_brands_account_cannot_cover(
    client, alice, django_capture_on_commit_callbacks
):
    brand, account = custody_brand(alice, "alpaca", django_capture_on_commit_callbacks)
    deposit(account, 10_00)
    campaign = live_campaign(brand, 10_00, "summer-glow")
    _take_from_sandbox(account, 9_50)  # the provider's balance is lower than the ledger thinks
    payout = pay(client, campaign, django_capture_on_commit_callbacks, subject="pat")
    assert (payout.status, payout.reason_code) == ("rejected", "AM04")
    assert SandboxBankPayment.objects.get(end_to_end_id=payout.end_to_end_id).status == "RJCT"


def _take_from_sandbox(account: VirtualAccount, amount: int) -> None:
    """Money leaves the brand's account at the sandbox provider without the ledger knowing (what a
    drift looks like)."""
    holder = SandboxBalanceAccount.objects.get(account_id=account.balance_account_id)
    moved = SandboxFundingTransfer.objects.create(
        transfer_id=f"SBXOUT{amount:010d}",
        account=holder,
        category="internal",
        direction="outgoing",
        amount=amount,
        currency="EUR",
        counterparty_balance_account="BAELSEWHERE",
    )
    SandboxFundingEvent.objects.create(transfer=moved, status="booked")


def test_a_drift_pauses_that_brand_only(client, alice, bob, django_capture_on_commit_callbacks):
    brand, account = custody_brand(alice, "alpaca", django_capture_on_commit_callbacks)
    other, other_account = custody_brand(bob, "bison", django_capture_on_commit_callbacks)
    deposit(account, 10_00)
    deposit(other_account, 10_00)
    _take_from_sandbox(account, 3_00)
    funding.provider_balances_check()
    account.refresh_from_db()
    assert account.drift == 3_00
    assert funding_selectors.brands_custody_blocked(brand_ids=[brand.pk, other.pk]) == {brand.pk}
    with pytest.raises(BrandNotVerified, match="paused"):
        brand_money_allowed_check(brand=brand)
    brand_money_allowed_check(brand=other)
    assert any("BRAND BALANCE DRIFT" in line for line in funding_selectors.provider_drift_problems())
    # Its payout waits; the other brand's leaves.
    campaign = live_campaign(other, 10_00, "bison-ride")
    assert pay(client, campaign, django_capture_on_commit_callbacks, subject="pat").status == "settled"


def funded_campaign(owner, capture, *, amount: int = 10_00):
    """Alpaca with its own account at the provider, `amount` deposited on it and all of it in a live
    campaign's budget."""
    brand, account = custody_brand(owner, "alpaca", capture)
    deposit(account, amount)
    return brand, account, live_campaign(brand, amount, "summer-glow")


def paid_before_the_ledger_heard(client, campaign, capture, *, subject: str) -> Payout:
    """A payout the provider paid whose worker was killed before it booked the answer: submitted in
    the ledger, gone from the provider's balance."""
    _crash_at.add("batch_sent")
    with contextlib.suppress(SimulatedCrash):
        pay(client, campaign, capture, subject=subject)
    payout = Payout.objects.get(participant__identities__subject=subject)
    assert payout.status == "submitted"
    assert SandboxBankPayment.objects.get(end_to_end_id=payout.end_to_end_id).status == "ACSC"
    return payout


def test_a_payout_paid_before_the_ledger_heard_is_no_drift(client, alice, django_capture_on_commit_callbacks):
    brand, account, campaign = funded_campaign(alice, django_capture_on_commit_callbacks)
    payout = paid_before_the_ledger_heard(client, campaign, django_capture_on_commit_callbacks, subject="pat")
    assert provider_balance_of(account) == ledger_balance_of(brand) - payout.amount
    funding.provider_balances_check()
    account.refresh_from_db()
    assert (account.drift, account.payouts_open_amount, account.drift_unexplained) == (payout.amount,) * 2 + (
        0,
    )
    assert funding_selectors.brands_custody_blocked(brand_ids=[brand.pk]) == set()
    assert funding_selectors.provider_drift_problems() == []
    # The sweep asks the provider, books its answer, and the next check finds them equal.
    payouts_sweep(now=timezone.now() + timedelta(minutes=10))
    payout.refresh_from_db()
    assert payout.status == "settled"
    funding.provider_balances_check()
    account.refresh_from_db()
    assert (account.drift, account.payouts_open_amount) == (0, 0)


def test_a_debit_beyond_the_open_payouts_pauses_the_brand(client, alice, django_capture_on_commit_callbacks):
    brand, account, campaign = funded_campaign(alice, django_capture_on_commit_callbacks)
    payout = paid_before_the_ledger_heard(client, campaign, django_capture_on_commit_callbacks, subject="pat")
    _take_from_sandbox(account, 1)
    funding.provider_balances_check()
    account.refresh_from_db()
    assert account.drift == payout.amount + 1 and account.drift_unexplained == 1
    assert funding_selectors.brands_custody_blocked(brand_ids=[brand.pk]) == {brand.pk}
    [problem] = funding_selectors.provider_drift_problems()
    assert f"payouts sent and not settled {payout.amount}, unexplained drift 1" in problem


def test_a_debit_hidden_by_an_open_payout_is_found_once_it_settles(
    client, alice, django_capture_on_commit_callbacks
):
    brand, account, campaign = funded_campaign(alice, django_capture_on_commit_callbacks)
    payout = paid_before_the_ledger_heard(client, campaign, django_capture_on_commit_callbacks, subject="pat")
    Payout.objects.filter(pk=payout.pk).update(status="unknown")  # as if the provider never answered
    SandboxBankPayment.objects.filter(end_to_end_id=payout.end_to_end_id).update(
        status="RJCT", reason_code="AC04"
    )
    _take_from_sandbox(account, payout.amount)  # the same sum, gone another way
    funding.provider_balances_check()
    assert funding_selectors.brands_custody_blocked(brand_ids=[brand.pk]) == set()
    payouts_sweep(now=timezone.now() + timedelta(minutes=10))
    payout.refresh_from_db()
    assert payout.status == "rejected"
    funding.provider_balances_check()
    account.refresh_from_db()
    assert (account.drift_unexplained, account.payouts_open_amount) == (payout.amount, 0)
    assert funding_selectors.brands_custody_blocked(brand_ids=[brand.pk]) == {brand.pk}


def test_a_payout_not_sent_explains_nothing(client, alice, django_capture_on_commit_callbacks, monkeypatch):
    """A payout held back (its brand paused, say) never left the provider: it hides no money gone
    from the brand's account, however many pile up."""
    brand, account, campaign = funded_campaign(alice, django_capture_on_commit_callbacks)
    monkeypatch.setattr("payouts.submission.create.enqueue_on_commit", lambda *args, **kwargs: None)
    ProviderOnboarding.objects.filter(brand=brand).update(allowed=False)
    person = rewarded_in_browser(client, campaign, subject="pat")
    payee_details(client, campaign, iban=own_iban(next(IBAN_NUMBERS)), email="pat@example.com")
    ProviderOnboarding.objects.filter(brand=brand).update(allowed=True)
    held = payout_for_participant(participant_id=person.pk, currency="EUR")
    assert held.status in ("created", "payee_verified")
    _take_from_sandbox(account, held.amount)  # the same sum, gone another way

    funding.provider_balances_check()

    account.refresh_from_db()
    assert (account.payouts_open_amount, account.drift_unexplained) == (0, held.amount)


def test_a_payout_sent_days_ago_explains_nothing(client, alice, django_capture_on_commit_callbacks):
    """The sweep asks the provider about a payout within minutes: one still open days after it was
    sent explains no difference any more, and the brand pauses until someone looks."""
    brand, account, campaign = funded_campaign(alice, django_capture_on_commit_callbacks)
    payout = paid_before_the_ledger_heard(client, campaign, django_capture_on_commit_callbacks, subject="pat")
    Payout.objects.filter(pk=payout.pk).update(submitted_at=timezone.now() - timedelta(days=3))

    funding.provider_balances_check()

    account.refresh_from_db()
    assert account.drift_unexplained == payout.amount
    assert funding_selectors.brands_custody_blocked(brand_ids=[brand.pk]) == {brand.pk}


def test_a_settlement_between_the_two_reads_is_no_drift(client, alice, django_capture_on_commit_callbacks):
    """The ledger read before the provider's balance and again under the lock: a payout the
    provider paid and the ledger settled after the provider was read moved only the ledger."""
    brand, account, campaign = funded_campaign(alice, django_capture_on_commit_callbacks)
    ledger_before, provider_read = ledger_balance_of(brand), provider_balance_of(account)
    payout = pay(client, campaign, django_capture_on_commit_callbacks, subject="pat")
    assert payout.status == "settled"
    checked = funding.brand_balance_check(
        account=account, provider_amount=provider_read, ledger_before=ledger_before
    )
    assert checked.drift_unexplained == 0
    # Read once, after the settlement, the same balances would be a drift.
    checked = funding.brand_balance_check(account=account, provider_amount=provider_read)
    assert checked.drift_unexplained == -payout.amount
    assert funding_selectors.brands_custody_blocked(brand_ids=[brand.pk]) == {brand.pk}


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_checks_racing_payouts_never_pause_the_brand(
    client, alice, django_capture_on_commit_callbacks, monkeypatch
):
    """One worker sends and settles payouts while another reconciles the brand's balance over and
    over: every balance it reads is explained, so the brand's payouts never pause."""
    brand, account, campaign = funded_campaign(alice, django_capture_on_commit_callbacks, amount=50_00)
    ProviderOnboarding.objects.filter(brand=brand).update(allowed=False)
    people = []
    for number in range(6):
        subject = f"racer{number}"
        people.append(rewarded_in_browser(client, campaign, subject=subject))
        payee_details(client, campaign, iban=own_iban(next(IBAN_NUMBERS)), email=f"{subject}@example.com")
    ProviderOnboarding.objects.filter(brand=brand).update(allowed=True)
    monkeypatch.setattr("payouts.submission.create.enqueue_on_commit", lambda *args, **kwargs: None)
    payouts = [payout_for_participant(participant_id=person.pk, currency="EUR") for person in people]
    done = threading.Event()
    paused, errors = [], []

    def sender():
        try:
            for payout in payouts:
                payout_submit(payout_id=payout.pk)
        except Exception as error:  # the race's failure is the finding
            errors.append(error)
        finally:
            done.set()
            connection.close()

    def checker():
        try:
            while not done.is_set():
                funding.provider_balances_check()
                if funding_selectors.brands_custody_blocked(brand_ids=[brand.pk]):
                    paused.append(
                        VirtualAccount.objects.values_list("ledger_balance", "provider_balance").get()
                    )
        except Exception as error:  # the race's failure is the finding
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=sender), threading.Thread(target=checker)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and paused == []
    assert set(Payout.objects.filter(brand=brand).values_list("status", flat=True)) == {"settled"}
    assert provider_balance_of(account) == ledger_balance_of(brand) == 50_00 - sum(p.amount for p in payouts)


def test_a_drift_on_the_platforms_bank_holds_custody_moves_not_the_brands_payouts(
    client, alice, bob, treasury, django_capture_on_commit_callbacks
):
    sam, tara = treasury
    brand, account = custody_brand(alice, "alpaca", django_capture_on_commit_callbacks)
    other, other_account = custody_brand(bob, "bison", django_capture_on_commit_callbacks)
    deposit(other_account, 10_00)
    # What the platform held for Alpaca from before, which the platform bank's statement lacks.
    brand_deposit_record(brand=brand, amount=300_00, currency="EUR", bank_reference="REF-OLD-1")
    statement_import_create(
        data=camt053([], msg_id="S1", seq=1, opening=0), filename="bank.xml", channel="feed"
    )
    drift = ReconciliationException.objects.get(reason="bank_drift")
    assert drift.amount == 300_00 and platform_moves_paused()
    # A brand paying from its own balance account pays on.
    assert funding_selectors.brands_custody_blocked(brand_ids=[other.pk]) == set()
    campaign = live_campaign(other, 10_00, "bison-ride")
    assert pay(client, campaign, django_capture_on_commit_callbacks, subject="pat").status == "settled"
    # Money leaving the platform's own account waits, though two people asked for it.
    grant = custody_move_request(actor=sam, brand=brand)
    with pytest.raises(CustodyMoveRefused, match="paused"):
        custody_move_confirm(grant_id=grant.pk, actor=tara)
    assert provider_balance_of(account) == 0 and ledger_balance_of(brand) == 0
    sam.user_permissions.add(Permission.objects.get(codename="exception_resolve"))
    sam = type(sam).objects.get(pk=sam.pk)
    exception_resolve(exception=drift, action="clear", actor=sam, note="held before statements began")
    assert not platform_moves_paused()
    moved = custody_move(grant_id=grant.pk)
    assert moved.outcome == "custody_move_booked"
    assert provider_balance_of(account) == 300_00 == ledger_balance_of(brand)


# What the platform held for a brand, moved to its own account.


def later_code() -> str:
    """The code the app shows in the next period (within the allowed drift): a code is used once."""
    return totp_code(at=time.time() + 30)


def test_custody_move_moves_what_the_platform_held_once_a_second_person_confirms(
    alice, treasury, django_capture_on_commit_callbacks
):
    sam, tara = treasury
    brand, account = custody_brand(alice, "alpaca", django_capture_on_commit_callbacks)
    # Funded the retired way: by reference to the platform's bank account.
    brand_deposit_record(brand=brand, amount=300_00, currency="EUR", bank_reference="REF-OLD-1")
    out = StringIO()
    call_command("custody_move", stdout=out)
    assert "would move €300.00" in out.getvalue() and provider_balance_of(account) == 0
    asking = ("--brand", "alpaca", "--request", "--staff", sam.email)
    # The email names a person; their authenticator's code shows they are the one running it.
    with pytest.raises(CommandError, match="authenticator app shows now"):
        call_command("custody_move", *asking, stdout=out)
    call_command("custody_move", *asking, "--code", totp_code(), stdout=out)
    grant = StaffGrant.objects.get(kind="custody_move")
    assert grant.value == f"{brand.pk}:EUR:30000" and provider_balance_of(account) == 0
    # Nothing moves on one person's word: not the one who asked confirming, nor running it alone,
    # nor the one who asked naming a colleague without the colleague's code.
    with pytest.raises(CommandError, match=r"second person|themselves"):
        call_command(
            "custody_move",
            "--confirm",
            str(grant.pk),
            "--staff",
            sam.email,
            "--code",
            later_code(),
            stdout=out,
        )
    with pytest.raises(CommandError, match="authenticator app shows now"):
        call_command("custody_move", "--confirm", str(grant.pk), "--staff", tara.email, "--code", "000000")
    with pytest.raises(CommandError, match="not confirmed by a second staff member"):
        call_command("custody_move", "--execute", str(grant.pk), stdout=out)
    assert provider_balance_of(account) == 0 and ledger_balance_of(brand) == 0
    call_command(
        "custody_move", "--confirm", str(grant.pk), "--staff", tara.email, "--code", totp_code(), stdout=out
    )
    assert provider_balance_of(account) == 300_00 == ledger_balance_of(brand)
    assert platform_bank(currency="EUR").balance == 0
    assert brand_funding_account(brand=brand, currency="EUR").balance == 300_00  # its money, unchanged
    # Both people are in the audit row written with the booking.
    audit = AccessChange.objects.get(kind="custody_move", detail__contains="booked")
    assert (audit.subject, audit.actor, audit.brand_id) == (sam, tara, brand.pk)
    assert Entry.objects.filter(transaction__reason="custody_move").exists()
    # Its webhook books nothing twice; the grant sent again moves nothing.
    webhooks()
    assert provider_balance_of(account) == 300_00 == ledger_balance_of(brand)
    call_command("custody_move", "--execute", str(grant.pk), stdout=out)
    assert "booked already" in out.getvalue() and provider_balance_of(account) == 300_00
    assert AccessChange.objects.filter(kind="custody_move", detail__contains="booked").count() == 1
    call_command("custody_move", stdout=out)
    assert "alpaca: nothing held for it" in out.getvalue()
    # One grant stands behind one transfer: another naming it (its reference reused by someone
    # with the platform's API key) is an exception for staff, not booked.
    again = funding.custody_move_apply(
        account=account,
        transfer_id="SBXITREUSED",
        amount=300_00,
        currency="EUR",
        status="booked",
        reference=funding.custody_move_reference(grant_id=grant.pk),
    )
    assert again == "movement_exception" and ledger_balance_of(brand) == 300_00
    assert crossing_transactions() == [] and ledger_drift() == []


def test_a_custody_move_confirmed_for_another_amount_than_held_is_refused(
    alice, treasury, django_capture_on_commit_callbacks
):
    sam, tara = treasury
    brand, account = custody_brand(alice, "alpaca", django_capture_on_commit_callbacks)
    brand_deposit_record(brand=brand, amount=300_00, currency="EUR", bank_reference="REF-OLD-1")
    grant = custody_move_request(actor=sam, brand=brand)
    brand_deposit_record(brand=brand, amount=5_00, currency="EUR", bank_reference="REF-OLD-2")
    with pytest.raises(SecondPersonRefused, match="ask again"):
        custody_move_confirm(grant_id=grant.pk, actor=tara)
    grant.refresh_from_db()
    assert grant.confirmed_at is None and provider_balance_of(account) == 0


def test_a_custody_transfer_without_a_confirmed_grant_is_not_booked(
    alice, treasury, django_capture_on_commit_callbacks
):
    """One staff member with the platform's API key moving money to a brand's account (or a
    transfer naming a grant nobody confirmed) is no custody move: staff explain it, nothing booked."""
    sam, _tara = treasury
    brand, account = custody_brand(alice, "alpaca", django_capture_on_commit_callbacks)
    brand_deposit_record(brand=brand, amount=300_00, currency="EUR", bank_reference="REF-OLD-1")
    grant = custody_move_request(actor=sam, brand=brand)
    outcome = funding.custody_move_apply(
        account=account,
        transfer_id="SBXITUNCONFIRMED",
        amount=300_00,
        currency="EUR",
        status="booked",
        reference=funding.custody_move_reference(grant_id=grant.pk),
    )
    assert outcome == "movement_exception" and ledger_balance_of(brand) == 0
    assert ReconciliationException.objects.filter(brand=brand).count() == 1


def test_custody_move_skips_a_brand_not_onboarded(alice):
    verified(brand_create(name="Alpaca", slug="alpaca", owner=alice, currency="EUR"), provider_allowed=False)
    out = StringIO()
    call_command("custody_move", stdout=out)
    assert "alpaca: skipped" in out.getvalue()


# The invariants, after any sequence of deposits, payouts and returns on two brands.

SUBJECTS = itertools.count(1)

STEPS = st.lists(
    st.tuples(
        st.sampled_from(["deposit", "deposit_returned", "payout", "return"]),
        st.integers(0, 1),
        st.integers(1, 40_00),
    ),
    min_size=1,
    max_size=6,
)
STEPS_WITH_FEES = st.lists(
    st.tuples(
        st.sampled_from(["deposit", "deposit_returned", "payout", "return", "fee", "invoice"]),
        st.integers(0, 1),
        st.integers(1, 40_00),
    ),
    min_size=1,
    max_size=6,
)


def _steps_run(client, owners, capture, steps, *, fees_by=None):
    brands = []
    for owner, slug in owners:
        found = VirtualAccount.objects.filter(brand__slug=slug).first()
        if found is None:
            brand, account = custody_brand(owner, slug, capture)
            if fees_by is not None:
                fee_plans_forget()
                FeePlan.objects.create(
                    brand=brand,
                    currency="EUR",
                    per_action=10,
                    payout_bps=500,
                    changed_by=fees_by[0],
                    approved_by=fees_by[1],
                    changed_at=timezone.now(),
                )
            deposit(account, 500_00)
            live_campaign(brand, 200_00, f"{slug}-camp")
            found = account
        brands.append((found.brand, found))
    for step, which, amount in steps:
        brand, account = brands[which]
        if step == "deposit":
            deposit(account, amount)
        elif step == "deposit_returned":
            deposit(account, amount, returned=True)
        elif step == "payout":
            campaign = brand.campaigns.get()
            pay(client, campaign, capture, subject=f"person-{next(SUBJECTS)}")
        elif step == "fee":
            fee_transfers_send()
            webhooks()
        elif step == "invoice":
            # This month's invoice so far: its VAT taken from the brand's funds, moved with the fees.
            invoice_issue(brand=brand, currency="EUR", period_start=timezone.localdate())
        else:
            settled = SandboxBankPayment.objects.filter(
                balance_account_id=account.balance_account_id, status="ACSC", returned_at__isnull=True
            ).first()
            if settled is not None:
                sandbox_bank.payment_return(payment=settled, reason_code="AC04")
                sandbox_bank.webhooks_deliver()
                transfer_events_process()
    if fees_by is not None:
        fee_transfers_send()  # what the fees accrued moves at the provider, as the schedule would
        webhooks()
    assert crossing_transactions() == []
    for brand, account in brands:
        assert provider_balance_of(account) == ledger_balance_of(brand), brand.slug
    assert ledger_drift() == []
    for invoice in Invoice.objects.filter(vat__gt=0):
        assert invoice.vat_state == "paid", invoice.number


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=STEPS)
def test_no_posting_crosses_brands_and_each_balance_matches(
    client, alice, bob, django_capture_on_commit_callbacks, steps
):
    """After any sequence of deposits (kept or returned) and payouts (settled or returned) on two
    brands: no transaction touches two brands' accounts, and each brand's balance at the provider
    equals its ledger account."""
    _steps_run(client, ((alice, "alpaca"), (bob, "bison")), django_capture_on_commit_callbacks, steps)


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=STEPS_WITH_FEES)
def test_with_the_platforms_fees_no_posting_crosses_brands_and_each_balance_matches(
    client, alice, bob, treasury, django_capture_on_commit_callbacks, steps
):
    """The same, with the platform's fees, and the VAT of the brands' invoices, moved from each
    brand's own account to the platform's."""
    _steps_run(
        client,
        ((alice, "alpaca"), (bob, "bison")),
        django_capture_on_commit_callbacks,
        steps,
        fees_by=treasury,
    )


# Two payouts racing on one brand's balance.


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_payouts_racing_on_one_brands_balance(
    client, alice, django_capture_on_commit_callbacks, monkeypatch
):
    """The provider's balance covers one of two payouts sent at once from two workers: exactly one
    leaves, the other is refused (notEnoughBalance) and its person is owed again; the ledger
    mirrors only what left."""
    brand, account = custody_brand(alice, "alpaca", django_capture_on_commit_callbacks)
    deposit(account, 10_00)
    campaign = live_campaign(brand, 10_00, "summer-glow")
    # While the people give their details nothing leaves (the brand held), so the two payouts
    # can be sent at once below.
    ProviderOnboarding.objects.filter(brand=brand).update(allowed=False)
    people = []
    for subject in ("pat", "sam"):
        people.append(rewarded_in_browser(client, campaign, subject=subject))
        payee_details(client, campaign, iban=own_iban(next(IBAN_NUMBERS)), email=f"{subject}@example.com")
    # Allowed again; the payouts are made, their sending left to the two workers below (the
    # queued tasks that would send them one after the other are not run).
    ProviderOnboarding.objects.filter(brand=brand).update(allowed=True)
    monkeypatch.setattr("payouts.submission.create.enqueue_on_commit", lambda *args, **kwargs: None)
    payouts = [payout_for_participant(participant_id=person.pk, currency="EUR") for person in people]
    assert all(payout is not None and payout.status in ("created", "payee_verified") for payout in payouts)
    _take_from_sandbox(account, 10_00 - payouts[0].amount)  # room for one payout only
    barrier = threading.Barrier(2)
    errors = []

    def worker(payout_id):
        try:
            barrier.wait()
            payout_submit(payout_id=payout_id)
        except Exception as error:  # the race's failure is the finding
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(p.pk,)) for p in payouts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    statuses = sorted(Payout.objects.filter(pk__in=[p.pk for p in payouts]).values_list("status", flat=True))
    assert statuses == ["rejected", "settled"]
    assert provider_balance_of(account) == 0
    assert ledger_balance_of(brand) == 10_00 - payouts[0].amount  # the ledger's mirror of what left
    assert crossing_transactions() == [] and ledger_drift() == []
