"""The platform's fees at the payment provider: gathered per brand into internal transfers (Adyen's
TransferService v4, category internal) from the brand's balance account to the platform's, sent
after the rewards' commits, each with a unique reference and an Idempotency-Key that makes a lost
answer a replay and only a refusal a new request.

Requests are validated against Adyen's published schema (tests/payouts/adyen/, MIT licence) and
compared with its own example of a transfer between balance accounts; its documented answer is read
as the adapter reads the sandbox's. The sandbox refuses what Adyen refuses: more than the account
holds (notEnoughBalance).
"""

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from campaigns.fees import fee_plans_forget
from campaigns.models import FeeCharge, FeePlan
from payouts import fees
from payouts.funding import services as funding
from payouts.models import (
    FeeTransfer,
    SandboxBalanceAccount,
    SandboxFundingEvent,
    SandboxFundingTransfer,
    VirtualAccount,
)
from payouts.providers import adyen
from payouts.psp import PspUnknown
from payouts.sandbox import funding as sandbox
from tests.payouts.test_adyen_transfers import TRANSFERS, example, recording_client, spec_errors
from verification.services.participants import identity_attach, participant_create
from verification.services.rewards import action_reward

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_pair(make_user):
    return make_user("sam@joyback.example", is_staff=True), make_user("tara@joyback.example", is_staff=True)


def plan_for(brand, staff_pair, per_action=10, payout_bps=500):
    sam, tara = staff_pair
    fee_plans_forget()  # as a confirmed plan change does
    FeePlan.objects.create(
        brand=brand,
        currency="EUR",
        per_action=per_action,
        payout_bps=payout_bps,
        changed_by=sam,
        approved_by=tara,
        changed_at=timezone.now(),
    )


def rewarded(campaign, count, prefix="p"):
    for number in range(count):
        person = participant_create(brand=campaign.brand)
        identity = identity_attach(
            participant=person, provider="tiktok", subject=f"{prefix}{number}", display_name="P"
        )
        action_reward(rule=campaign.rules.get(trigger="tiktok_login"), identity=identity)


def own_account(brand, django_capture_on_commit_callbacks, *, holds: int) -> SandboxBalanceAccount:
    """The brand's balance account at the sandbox bank, holding `holds` of its own money (no sweep
    on): what its funding brought beyond that left the account at the provider (spent there, its
    webhook not delivered yet), so a test reads what the provider holds as it says."""
    with django_capture_on_commit_callbacks(execute=True):
        funding.virtual_account_request(brand=brand, currency="EUR")
    account = VirtualAccount.objects.get(brand=brand)
    assert account.status == "open", account.error
    sandboxed = SandboxBalanceAccount.objects.get(account_id=account.balance_account_id)
    SandboxBalanceAccount.objects.filter(pk=sandboxed.pk).update(sweep_to="", sweep_id="")
    held = sandbox.balance_of(sandboxed)
    if holds > held:
        sandbox.deposit_simulate(iban=sandboxed.iban, amount=holds - held)
    elif held > holds:
        spent = SandboxFundingTransfer.objects.create(
            transfer_id=f"SBXOUT{sandboxed.pk:010d}",
            account=sandboxed,
            category="bank",
            direction="outgoing",
            amount=held - holds,
            currency=sandboxed.currency,
        )
        SandboxFundingEvent.objects.create(transfer=spent, status="booked")
    return sandboxed


# ---- the request, against Adyen's published schema and example -----------------------------------


def test_the_request_is_adyens_transfer_between_balance_accounts():
    request = adyen.internal_transfer_request(
        source="BAB8B2C3D4E5F6G7H8D9J6GD4",
        destination="BA32272223222B5LPRFDW7J9G",
        amount=1_15,
        currency="EUR",
        reference="JBFEE0123456789ABCDEF",
        description="JoyBack fees JBFEE0123456789ABCDEF; Alpaca & co",
    )

    assert spec_errors(TRANSFERS, "TransferInfo", request) == []
    documented = example(TRANSFERS, "post-transfers-payout-to-balance-account")
    assert set(request) <= set(documented) and request["category"] == documented["category"] == "internal"
    assert request["counterparty"].keys() == documented["counterparty"].keys() == {"balanceAccountId"}
    # Adyen's description takes [a-z] [A-Z] [0-9] / - ? : ( ) . , ' + and space only.
    assert request["description"] == "JoyBack fees JBFEE0123456789ABCDEF Alpaca  co"


def test_adyens_documented_answer_is_read_as_taken(monkeypatch):
    answer = example(TRANSFERS, "post-transfers-payout-to-balance-account-202")
    sent = recording_client(monkeypatch, lambda request: httpx.Response(202, json=answer))

    found = adyen.internal_transfer_submit(request={"reference": "R"}, key="joyback-internal-R-0")

    assert (found.transfer_id, found.status, found.refused) == ("1W1UG35U8A9J5ZLG", "received", False)
    assert sent[0].headers["Idempotency-Key"] == "joyback-internal-R-0"
    assert sent[0].url.path.endswith("/transfers")


def test_a_refused_answer_is_a_refusal(monkeypatch):
    answer = {**example(TRANSFERS, "post-transfers-payout-to-balance-account-202"), "status": "refused"}
    answer["reason"] = "notEnoughBalance"
    recording_client(monkeypatch, lambda request: httpx.Response(202, json=answer))

    found = adyen.internal_transfer_submit(request={"reference": "R"}, key="k")

    assert found.refused and found.reason == "notEnoughBalance"


# ---- gathered, sent, refused, waiting -------------------------------------------------------------


def test_a_brands_fees_move_as_one_transfer_from_its_account_to_the_platforms(
    summer, staff_pair, django_capture_on_commit_callbacks
):
    plan_for(summer.brand, staff_pair)
    account = own_account(summer.brand, django_capture_on_commit_callbacks, holds=50_00)
    rewarded(summer, 3)

    done = fees.fee_transfers_send()

    assert done == {"booked": 1}  # the sandbox books an internal transfer at once, and says so
    (fee_transfer,) = FeeTransfer.objects.all()
    assert fee_transfer.amount == 3 * (10 + 5) and fee_transfer.status == "booked"
    assert set(FeeCharge.objects.values_list("transfer_reference", flat=True)) == {fee_transfer.reference}
    moved = SandboxFundingTransfer.objects.get(reference=fee_transfer.reference)
    assert (moved.account, moved.category, moved.direction, moved.amount) == (
        account,
        "internal",
        "outgoing",
        45,
    )
    assert moved.counterparty_balance_account == settings.ADYEN_BALANCE_ACCOUNT_ID
    assert sandbox.balance_of(account) == 50_00 - 45
    assert fees.fee_transfers_send() == {}  # nothing left to send, nothing sent twice


def test_a_lost_answer_is_asked_again_with_the_same_key_and_moves_once(
    summer, staff_pair, django_capture_on_commit_callbacks, monkeypatch
):
    plan_for(summer.brand, staff_pair)
    account = own_account(summer.brand, django_capture_on_commit_callbacks, holds=50_00)
    rewarded(summer, 1)
    real = adyen.internal_transfer_submit
    keys = []

    def lost(*, request, key):
        keys.append(key)
        real(request=request, key=key)  # the provider made it; the answer never came back
        raise PspUnknown("timed out")

    monkeypatch.setattr(adyen, "internal_transfer_submit", lost)
    assert fees.fee_transfers_send() == {"unknown": 1}
    monkeypatch.setattr(
        adyen, "internal_transfer_submit", lambda **kw: (keys.append(kw["key"]), real(**kw))[1]
    )
    FeeTransfer.objects.update(next_attempt_at=timezone.now())

    assert fees.fee_transfers_send() == {"booked": 1}
    assert keys[0] == keys[1]
    assert SandboxFundingTransfer.objects.filter(category="internal").count() == 1
    assert sandbox.balance_of(account) == 50_00 - 15


def test_a_brand_short_at_the_provider_is_refused_and_asked_again_later_with_a_new_key(
    summer, staff_pair, django_capture_on_commit_callbacks
):
    plan_for(summer.brand, staff_pair)
    account = own_account(summer.brand, django_capture_on_commit_callbacks, holds=0)
    rewarded(summer, 1)

    assert fees.fee_transfers_send() == {"refused": 1}
    fee_transfer = FeeTransfer.objects.get()
    assert (fee_transfer.refusals, fee_transfer.provider_status) == (1, "refused")
    assert "notEnoughBalance" in fee_transfer.reason
    assert fees.fee_transfers_send() == {}  # not before its next attempt

    sandbox.deposit_simulate(iban=account.iban, amount=1_00)
    FeeTransfer.objects.update(next_attempt_at=timezone.now())
    assert fees.fee_transfers_send() == {"booked": 1}
    retried = SandboxFundingTransfer.objects.filter(category="internal").order_by("pk").last()
    assert retried.reference == f"{fee_transfer.reference}-R1"  # the attempt its webhooks name
    keys = list(
        SandboxFundingTransfer.objects.filter(category="internal").values_list("idempotency_key", flat=True)
    )
    assert len(set(keys)) == 2 and all(
        key.startswith(f"joyback-internal-{fee_transfer.reference}-") for key in keys
    )


def test_a_brand_without_an_account_at_the_provider_waits(summer, staff_pair):
    plan_for(summer.brand, staff_pair)
    rewarded(summer, 1)
    # Its account closed at the provider since (no open balance account of its own).
    VirtualAccount.objects.filter(brand=summer.brand).update(status="failed")
    internal = SandboxFundingTransfer.objects.filter(category="internal")

    assert fees.fee_transfers_send() == {"waiting": 1}
    assert FeeTransfer.objects.get().status == "waiting"
    assert not internal.exists()


def test_refunds_that_outweigh_fees_wait_for_the_brands_next_fees(summer, staff_pair):
    from verification.models import ActionClaim  # deferred: only this test takes a reward back
    from verification.services.rewards import claim_clawback

    plan_for(summer.brand, staff_pair)
    rewarded(summer, 1)
    fees.fee_transfers_gather()
    claim_clawback(claim=ActionClaim.objects.get(), reason="deleted")

    assert fees.fee_transfers_gather() == []
    assert FeeCharge.objects.filter(transfer_reference="").count() == 1


def test_each_brand_is_charged_from_its_own_account_only(
    summer, bison, make_live_campaign, staff_pair, django_capture_on_commit_callbacks
):
    plan_for(summer.brand, staff_pair)
    plan_for(bison, staff_pair)
    alpaca_account = own_account(summer.brand, django_capture_on_commit_callbacks, holds=10_00)
    bison_account = own_account(bison, django_capture_on_commit_callbacks, holds=10_00)
    winter = make_live_campaign(slug="bison-winter", brand=bison)
    rewarded(summer, 2, prefix="a")
    rewarded(winter, 1, prefix="b")

    assert fees.fee_transfers_send() == {"booked": 2}

    moved = {t.account_id: t.amount for t in SandboxFundingTransfer.objects.filter(category="internal")}
    assert moved == {alpaca_account.pk: 30, bison_account.pk: 15}


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_workers_at_once_move_each_fee_once(summer, staff_pair, django_capture_on_commit_callbacks):
    plan_for(summer.brand, staff_pair)
    account = own_account(summer.brand, django_capture_on_commit_callbacks, holds=100_00)
    rewarded(summer, 6)
    barrier = threading.Barrier(4)

    def work(_index):
        try:
            barrier.wait()
            return fees.fee_transfers_send()
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(work, range(4)))
    fees.fee_transfers_send()  # whatever a skipped lock left

    moved = SandboxFundingTransfer.objects.filter(category="internal")
    assert sum(moved.values_list("amount", flat=True)) == 6 * 15
    assert moved.count() == FeeTransfer.objects.count() == FeeTransfer.objects.filter(status="booked").count()
    assert not FeeCharge.objects.filter(transfer_reference="").exists()
    assert sandbox.balance_of(account) == 100_00 - 90
