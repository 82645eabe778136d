"""Nothing pools brands' money: a live brand without its own balance account at the provider moves
no money (funding, reward payouts, manual payouts and re-payments are refused with the reason), no
payout leaves the platform's balance account or a file of the platform's bank, a credit with a
brand's payment reference on the platform's account is an exception for staff and never the
brand's funding, and money on a brand's old swept account is never booked. A brand from before is
onboarded by itself (at verification and by the periodic task) and moves money again by the
documented path: onboard, the provider verifies, custody_move (two staff members) moves what the
platform held, then the brand pays from its own account."""

import pytest
from django.core import mail
from django.urls import reverse
from django.utils import translation
from schwifty import IBAN

from campaigns.models import Brand
from campaigns.services.brands import brand_create
from campaigns.services.funding import BrandNotVerified, brand_deposit_record, brand_money_allowed_check
from joyback.background import SCHEDULES
from joyback.ledger.models import AccountKind, Entry
from joyback.ledger.selectors import ledger_drift
from joyback.ledger.services import platform_bank
from joyback.users.models import StaffGrant
from payouts import psp
from payouts.funding import services as funding
from payouts.funding.custody import CustodyMoveRefused, custody_move_confirm, custody_move_request
from payouts.funding.selectors import brands_custody_blocked
from payouts.models import (
    Notification,
    PaymentBatch,
    Payout,
    ProviderOnboarding,
    ReconciliationException,
    SandboxBankPayment,
    TransferEvent,
    VirtualAccount,
)
from payouts.notifications import MESSAGES, brand_verified_notify, notifications_send
from payouts.providers import adyen, adyen_funding
from payouts.psp import PspError
from payouts.reconciliation.references import brand_deposit_reference
from payouts.reconciliation.statement_import import bank_statements_fetch
from payouts.sandbox.files import incoming_transfer_issue
from payouts.submission.create import payout_for_participant
from payouts.submission.webhooks import transfer_events_process
from tests.conftest import rewarded_in_browser, verified
from tests.payouts.conftest import payee_details
from tests.payouts.test_custody import (
    crossing_transactions,
    custody_brand,
    deposit,
    ledger_balance_of,
    live_campaign,
    own_iban,
    pay,
    provider_balance_of,
    webhooks,
)

pytestmark = pytest.mark.django_db


def legacy_brand(owner, slug="acme"):
    """A live brand staff verified before brands held their own money: no onboarding at the
    provider, a virtual account under the platform's account holder (swept into its pool), and
    money the platform holds for it (funded by reference to the platform's bank account)."""
    brand = verified(
        brand_create(name=slug.title(), slug=slug, owner=owner, currency="EUR"), provider_allowed=False
    )
    Brand.objects.filter(pk=brand.pk).update(legal_name=f"{slug.title()} GmbH")
    brand.refresh_from_db()
    account = VirtualAccount.objects.create(
        brand=brand,
        currency="EUR",
        provider="adyen",
        status="open",
        balance_account_id="BALEGACY00000000000000001",
        iban="NL91ADYB2017400157",
        sweep_id="SWLEGACY1",
    )
    brand_deposit_record(brand=brand, amount=300_00, currency="EUR", bank_reference="REF-OLD-1")
    return brand, account


def test_a_live_brand_without_its_own_balance_account_moves_no_money(alice):
    """Alpaca: verified by staff, allowed by the provider, and no balance account of its own: the
    pool's last state. Every way money would move says why and does nothing."""
    alpaca = verified(
        brand_create(name="Alpaca", slug="alpaca", owner=alice, currency="EUR"), provider_allowed=False
    )
    ProviderOnboarding.objects.create(brand=alpaca, provider="adyen", status="verified", allowed=True)
    with pytest.raises(BrandNotVerified) as refused:
        brand_money_allowed_check(brand=alpaca)
    assert "own account at our payment provider" in str(refused.value)
    for language, words in (("de", "eigene Konto"), ("es", "propia cuenta"), ("zh-hans", "自己的账户")):
        with translation.override(language), pytest.raises(BrandNotVerified) as said:
            brand_money_allowed_check(brand=alpaca)
        assert words in str(said.value), (language, str(said.value))
    assert brands_custody_blocked(brand_ids=[alpaca.pk]) == {alpaca.pk}


def test_a_person_of_a_brand_without_its_own_account_stays_owed_and_nothing_leaves(
    client, alice, django_capture_on_commit_callbacks, settings
):
    """Money the platform held for the brand before (its campaign funded then) is owed to people,
    but no payout leaves the platform's pool for it: none is made, by the batch or one by one."""
    brand, _account = legacy_brand(alice)
    # The campaign was funded and went live, and Pat rewarded, before brands held their own money
    # (before the provider's checks stood in the way).
    checks, settings.BRAND_MONEY_CHECKS = settings.BRAND_MONEY_CHECKS, []
    campaign = live_campaign(brand, 100_00, "summer-glow")
    person = rewarded_in_browser(client, campaign, subject="pat")
    settings.BRAND_MONEY_CHECKS = checks
    with django_capture_on_commit_callbacks(execute=True):
        payee_details(client, campaign, iban=own_iban(901), email="pat@example.com")
    assert payout_for_participant(participant_id=person.pk, currency="EUR", send_now=True) is None
    assert not Payout.objects.exists() and not SandboxBankPayment.objects.exists()


def test_the_provider_adapter_never_sends_a_live_payout_from_the_platforms_balance_account(settings):
    order = psp.PaymentOrder(
        end_to_end_id="JBTESTPOOL1",
        scheme="sepa_instant",
        amount=10_00,
        currency="EUR",
        creditor_name="Pat Doe",
        account=None,
        remittance="JoyBack reward",
        livemode=True,
    )
    with pytest.raises(adyen.PooledSourceRefused):
        adyen.transfer_source(order)
    unknown = psp.PaymentOrder(**{**order.__dict__, "livemode": None})
    with pytest.raises(adyen.PooledSourceRefused):
        adyen.transfer_source(unknown)  # a mode nobody said is live
    # Test mode's play money leaves the sandbox's platform account: the sandbox bank only.
    play = psp.PaymentOrder(**{**order.__dict__, "livemode": False})
    assert adyen.transfer_source(play) == settings.ADYEN_BALANCE_ACCOUNT_ID
    own = psp.PaymentOrder(**{**order.__dict__, "balance_account_id": "BAOWN1"})
    assert adyen.transfer_source(own) == "BAOWN1"


def test_a_credit_with_a_brands_payment_reference_is_an_exception_not_its_funding(alice):
    """The bank says the platform's account received it; the reference only hints whose it is."""
    brand, _account = legacy_brand(alice)

    funding_before = Entry.objects.filter(account__kind=AccountKind.BRAND_FUNDING).count()
    incoming_transfer_issue(amount=75_00, remittance=f"Acme {brand_deposit_reference(brand)}")
    bank_statements_fetch()
    assert Entry.objects.filter(account__kind=AccountKind.BRAND_FUNDING).count() == funding_before
    raised = ReconciliationException.objects.get()
    assert raised.amount == 75_00 and "send it back" in raised.detail


def test_the_funding_page_no_longer_offers_a_payment_reference(client, alice, alpaca):
    client.force_login(alice)
    page = client.get(reverse("payouts:reconciliation", args=[alpaca.slug])).content.decode()
    assert "payment reference" not in page and "its own virtual IBAN" in page


def test_a_brand_verified_is_told_funding_opens_once_the_provider_verified_it_too(
    alice, django_capture_on_commit_callbacks
):
    brand = verified(
        brand_create(name="Acme", slug="acme", owner=alice, currency="EUR"), provider_allowed=False
    )
    with django_capture_on_commit_callbacks(execute=True):
        ids = brand_verified_notify(brand_id=brand.pk)
    notifications_send(ids=ids)
    # Alice reads German: the message says the provider comes too, in her language.
    sent = next(m for m in mail.outbox if m.subject == "Acme ist verifiziert")
    assert "sobald auch unser Zahlungsdienstleister Adyen dein Unternehmen verifiziert hat" in sent.body
    assert "Du kannst jetzt" not in sent.body
    with translation.override("en"):
        assert "once our payment provider, Adyen, has verified your company too" in str(
            MESSAGES["brand_verified"](Notification.objects.get(pk=ids[0])).body
        )


def test_a_legacy_brand_is_onboarded_and_moves_money_again_by_the_documented_path(
    client,
    alice,
    treasury,
    django_capture_on_commit_callbacks,
):
    sam, tara = treasury
    brand, legacy = legacy_brand(alice)
    with pytest.raises(BrandNotVerified):
        brand_money_allowed_check(brand=brand)
    # 1. Onboarded by the periodic task (staff verifying a brand does the same at once).
    assert any(s.func == "payouts.funding.tasks.legacy_brands_onboard_task" for s in SCHEDULES)
    with django_capture_on_commit_callbacks(execute=True):
        assert funding.legacy_brands_onboard() == 1
    webhooks()
    # 2. The provider verified it (the sandbox verifies a company that gives no reason not to).
    account = VirtualAccount.objects.get(pk=legacy.pk)
    assert account.status == "open" and account.account_holder_id, account.error
    assert account.legacy_balance_account_id == "BALEGACY00000000000000001"
    assert (
        account.iban != "NL91ADYB2017400157"
        and account.balance_account_id != account.legacy_balance_account_id
    )
    brand_money_allowed_check(brand=brand)  # money may move: its own account, allowed
    with django_capture_on_commit_callbacks(execute=True):
        assert funding.legacy_brands_onboard() == 0  # nothing left to onboard
    # Money still sent to its old IBAN (the old, swept account) is never its funding.
    TransferEvent.objects.create(
        provider="adyen",
        event_id="TROLDIBAN1:2",
        payload={
            "type": "balancePlatform.transfer.updated",
            "data": {
                "id": "TROLDIBAN1",
                "category": "bank",
                "direction": "incoming",
                "type": "bankTransfer",
                "status": "booked",
                "amount": {"currency": "EUR", "value": 40_00},
                "balanceAccount": {"id": "BALEGACY00000000000000001"},
                "balances": [{"currency": "EUR", "balance": 40_00, "received": 0, "reserved": 0}],
                "sequenceNumber": 2,
            },
        },
    )
    transfer_events_process()
    assert ReconciliationException.objects.filter(brand=brand, amount=40_00).count() == 1
    assert ledger_balance_of(brand) == 0
    # 3. What the platform held moves to its own account: one staff member asks, another confirms.
    grant = custody_move_request(actor=sam, brand=brand)
    moved = custody_move_confirm(grant_id=grant.pk, actor=tara)
    assert moved.amount == 300_00 and moved.outcome == "custody_move_booked"
    assert provider_balance_of(account) == 300_00 == ledger_balance_of(brand)
    assert platform_bank(currency="EUR").balance == 0
    # 4. Its money moves again, from its own account.
    deposit(account, 20_00)
    campaign = live_campaign(brand, 100_00, "summer-glow")
    payout = pay(client, campaign, django_capture_on_commit_callbacks, subject="pat")
    assert payout.status == "settled"
    assert SandboxBankPayment.objects.get(end_to_end_id=payout.end_to_end_id).balance_account_id == (
        account.balance_account_id
    )
    assert provider_balance_of(account) == 320_00 - payout.amount == ledger_balance_of(brand)
    assert crossing_transactions() == [] and ledger_drift() == []


def test_a_batch_sepa_payout_leaves_the_brands_own_account_not_a_bank_file(
    client, alice, django_capture_on_commit_callbacks, settings
):
    settings.PAYOUT_SEPA_MODE = "batch"
    brand, account = custody_brand(alice, "alpaca", django_capture_on_commit_callbacks)
    deposit(account, 50_00)
    campaign = live_campaign(brand, 50_00, "summer-glow")
    payout = pay(client, campaign, django_capture_on_commit_callbacks, subject="pat")
    assert payout.scheme == "sepa" and payout.status in ("accepted", "settled"), payout.status
    sent = SandboxBankPayment.objects.get(end_to_end_id=payout.end_to_end_id)
    assert sent.balance_account_id == account.balance_account_id and sent.msg_id == ""
    assert not PaymentBatch.objects.exists()  # no file of the platform's bank account


def test_no_internal_transfer_is_ever_asked_between_two_brands_accounts(settings):
    """The platform's API key could move money between any two balance accounts at Adyen: the
    adapter asks only for transfers with the platform's own account on one side."""
    between = {"amount": 10_00, "currency": "EUR", "reference": "x", "description": "x"}
    with pytest.raises(PspError, match="platform's balance account"):
        adyen_funding.internal_transfer_request(source="BABRANDA", destination="BABRANDB", **between)
    platform = settings.ADYEN_BALANCE_ACCOUNT_ID
    with pytest.raises(PspError):
        adyen_funding.internal_transfer_request(source=platform, destination=platform, **between)
    assert adyen_funding.internal_transfer_request(source="BABRANDA", destination=platform, **between)[
        "counterparty"
    ] == {"balanceAccountId": platform}


def test_no_custody_move_while_a_payout_is_on_its_way(
    client, alice, treasury, django_capture_on_commit_callbacks
):
    """A payout on its way may have left the platform's pool: what it takes is in transit in the
    ledger and must not be moved to the brand's account as if still held."""
    brand, account = custody_brand(alice, "alpaca", django_capture_on_commit_callbacks)
    deposit(account, 50_00)
    campaign = live_campaign(brand, 50_00, "summer-glow")
    # The sandbox bank keeps a transfer to an account ending 9300 pending: on its way.
    pending = str(IBAN.generate("DE", bank_code="37040044", account_code="0005019300"))
    payout = pay(client, campaign, django_capture_on_commit_callbacks, subject="pat", iban=pending)
    assert payout.status in ("submitted", "accepted"), payout.status
    brand_deposit_record(brand=brand, amount=10_00, currency="EUR", bank_reference="REF-OLD-1")
    with pytest.raises(CustodyMoveRefused, match="payouts on their way"):
        custody_move_request(actor=treasury[0], brand=brand)
    assert not StaffGrant.objects.exists()
