"""The controls a payment partner's risk review asks for on payouts made by hand (dashboard, API):
never more than the bank confirmed the brand sent; a daily limit per brand and per bank account,
enforced under concurrency; a second person approves the first payout to an account and every
payout once the window's total passes a threshold; many payouts in a short time raise an alert.

Fiona (finance) makes the payouts at Alpaca; Alice (owner) is the second person who approves.
"""

import itertools
from datetime import timedelta

import pytest
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from joyback.ledger.models import Account, AccountKind
from joyback.ledger.selectors import ledger_drift
from joyback.ledger.services import account_get_or_create, transfer_post
from payouts.manual.services import payout_approve, payout_manual_enter
from payouts.models import PayeeAccount, Payout, PayoutAlert, SandboxBankPayment
from payouts.rails import iban_check
from payouts.submission.states import PayoutRefused
from tests.conftest import fund, totp_enable, verified
from tests.verification.test_claim_races import race
from verification.models import Participant

pytestmark = pytest.mark.django_db

_numbers = itertools.count(1)


def new_iban() -> str:
    """A valid German IBAN nobody was paid to yet (the sandbox bank settles it)."""
    bban = f"37040044{532020000 + next(_numbers):010d}"
    return f"DE{98 - int(bban + '131400') % 97:02d}{bban}"


def pay(brand, amount, *, iban, by=None):
    return payout_manual_enter(
        brand=brand,
        name="Mo Manual",
        email="mo@example.com",
        phone="",
        bank_account=iban_check(iban),
        currency="EUR",
        amount=amount,
        created_by=by,
    )


def funding(brand) -> int:
    return Account.objects.get(kind=AccountKind.BRAND_FUNDING, brand_id=brand.pk, currency="EUR").balance


@pytest.fixture
def limits(settings):
    settings.PAYOUT_BRAND_DAILY_LIMIT = 100_00
    settings.PAYOUT_ACCOUNT_DAILY_LIMIT = 50_00
    settings.PAYOUT_WINDOW_APPROVAL_THRESHOLD = 1_000_00
    settings.PAYOUT_NEW_ACCOUNT_APPROVAL = False
    return settings


@pytest.fixture
def funded(alpaca):
    fund(alpaca, 2_000_00, "EUR", reference="DEP-CONTROLS")
    return alpaca


def nothing_paid(brand, *, funding_before: int) -> bool:
    return (
        funding(brand) == funding_before
        and not SandboxBankPayment.objects.exists()
        and not Payout.objects.filter(status__in=["created", "submitted", "settled"]).exists()
    )


# The bank's word: funds the bank confirmed, not whatever the funding account says.


def test_a_brand_cannot_pay_out_more_than_the_bank_confirmed(alpaca, fiona, settings):
    """100 EUR really arrived; 900 EUR more reached the funding account by a booking that is not a
    deposit (here straight from suspense, as a made-up statement line resolved by hand would)."""
    settings.PAYOUT_NEW_ACCOUNT_APPROVAL = False
    fund(alpaca, 100_00, "EUR", reference="DEP-REAL")
    with transaction.atomic():
        transfer_post(
            source=account_get_or_create(kind=AccountKind.SUSPENSE, currency="EUR", name="Suspense EUR"),
            destination=Account.objects.get(kind=AccountKind.BRAND_FUNDING, brand_id=alpaca.pk),
            amount=900_00,
            reason="suspense_resolution",
        )
    people_before = Participant.objects.count()

    with pytest.raises(PayoutRefused) as refused:
        pay(alpaca, 500_00, iban=new_iban(), by=fiona)

    assert "would pay out more than the brand sent" in refused.value.message
    assert "100.00" in refused.value.message
    assert nothing_paid(alpaca, funding_before=1_000_00)
    assert Participant.objects.count() == people_before and not PayeeAccount.objects.exists()
    # What the bank did confirm may still be paid out.
    assert pay(alpaca, 100_00, iban=new_iban(), by=fiona).status == "created"


# Daily limits, per brand and per bank account.


def test_the_payout_that_would_pass_the_brands_daily_limit_is_refused(funded, fiona, limits):
    pay(funded, 40_00, iban=new_iban(), by=fiona)
    pay(funded, 40_00, iban=new_iban(), by=fiona)
    before = funding(funded)

    with pytest.raises(PayoutRefused) as refused:
        pay(funded, 30_00, iban=new_iban(), by=fiona)

    assert "above its limit of" in refused.value.message and "110.00" in refused.value.message
    assert funding(funded) == before and Payout.objects.count() == 2
    assert pay(funded, 20_00, iban=new_iban(), by=fiona).amount == 20_00  # up to the limit exactly


def test_the_account_limit_counts_what_every_brand_pays_that_account(funded, bison, fiona, bob, limits):
    fund(bison, 500_00, "EUR", reference="DEP-BISON")
    mule = new_iban()
    pay(funded, 30_00, iban=mule, by=fiona)

    with pytest.raises(PayoutRefused) as refused:
        pay(bison, 30_00, iban=mule, by=bob)

    assert "would receive" in refused.value.message and "limit of" in refused.value.message
    assert Payout.objects.filter(brand=bison).count() == 0
    assert pay(bison, 30_00, iban=new_iban(), by=bob).amount == 30_00  # another account is fine


def test_payouts_older_than_the_window_no_longer_count(funded, fiona, limits):
    limits.PAYOUT_ACCOUNT_DAILY_LIMIT = 100_00
    earlier = pay(funded, 90_00, iban=new_iban(), by=fiona)
    with pytest.raises(PayoutRefused):
        pay(funded, 20_00, iban=new_iban(), by=fiona)
    Payout.objects.filter(pk=earlier.pk).update(created_at=timezone.now() - timedelta(hours=25))
    assert pay(funded, 20_00, iban=new_iban(), by=fiona).amount == 20_00


def test_a_cancelled_payout_gives_its_place_back(funded, fiona, alice, limits):
    limits.PAYOUT_ACCOUNT_DAILY_LIMIT = 100_00
    earlier = pay(funded, 90_00, iban=new_iban(), by=fiona)
    from payouts.manual.services import payout_cancel

    payout_cancel(payout=earlier, actor=alice)
    assert pay(funded, 90_00, iban=new_iban(), by=fiona).amount == 90_00


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_parallel_payouts_never_pass_the_brands_daily_limit(funded, fiona, limits):
    """Eight finance tabs pay 30 EUR each at the same moment against a 100 EUR limit: three go."""
    ibans = [new_iban() for _ in range(8)]
    results = race(8, lambda i: pay(funded, 30_00, iban=ibans[i], by=fiona))

    made = [r for r in results if isinstance(r, Payout)]
    refused = [r for r in results if isinstance(r, PayoutRefused)]
    assert len(made) == 3 and len(refused) == 5, results
    assert sum(p.amount for p in Payout.objects.filter(brand=funded)) == 90_00
    assert funding(funded) == 2_000_00 - 90_00 and ledger_drift() == []


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_parallel_payouts_to_one_account_never_pass_its_limit(funded, bison, fiona, bob, limits):
    """Two brands pay one account at the same moment, four times each: the account's limit holds."""
    fund(bison, 500_00, "EUR", reference="DEP-BISON")
    mule = new_iban()
    payers = [(funded, fiona), (bison, bob)] * 4
    results = race(8, lambda i: pay(payers[i][0], 20_00, iban=mule, by=payers[i][1]))

    assert len([r for r in results if isinstance(r, Payout)]) == 2, results
    assert all(isinstance(r, (Payout, PayoutRefused)) for r in results), results
    assert sum(Payout.objects.values_list("amount", flat=True)) == 40_00 and ledger_drift() == []


# A second person: first payout to an account, and once the window's total passes a threshold.


def test_the_first_payout_to_a_new_account_waits_for_a_second_person(
    client, funded, fiona, alice, django_capture_on_commit_callbacks
):
    iban = new_iban()
    with django_capture_on_commit_callbacks(execute=True):
        payout = pay(funded, 25_00, iban=iban, by=fiona)
    assert payout.status == "awaiting_approval" and payout.hold_reasons == "new_account"
    assert not SandboxBankPayment.objects.exists()

    client.force_login(fiona)
    page = client.get(reverse("payouts:payout_list", args=[funded.slug])).content.decode()
    assert "It is the first payout to this bank account." in page
    detail = client.get(reverse("payouts:payout_detail", args=[funded.slug, payout.pk])).content.decode()
    assert "Waiting for a second person" in detail and 'value="approve"' not in detail
    with pytest.raises(PayoutRefused, match="second person"):
        payout_approve(payout=payout, actor=fiona)

    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("payouts:payout_action", args=[funded.slug, payout.pk]), {"action": "approve"})
    payout.refresh_from_db()
    assert (payout.status, payout.approved_by) == ("settled", alice)
    assert SandboxBankPayment.objects.count() == 1

    # Paid once: the next payout to that account goes at once.
    with django_capture_on_commit_callbacks(execute=True):
        again = pay(funded, 10_00, iban=iban, by=fiona)
    again.refresh_from_db()
    assert again.status == "settled" and again.hold_reasons == ""


def test_once_the_windows_total_passes_the_threshold_every_further_payout_waits(funded, fiona, limits):
    limits.PAYOUT_BRAND_DAILY_LIMIT = 1_000_00
    limits.PAYOUT_WINDOW_APPROVAL_THRESHOLD = 100_00
    limits.PAYOUT_ACCOUNT_DAILY_LIMIT = 100_00
    under = pay(funded, 60_00, iban=new_iban(), by=fiona)
    crossing = pay(funded, 50_00, iban=new_iban(), by=fiona)
    after = pay(funded, 5_00, iban=new_iban(), by=fiona)

    assert under.status == "created"
    assert (crossing.status, crossing.hold_reasons) == ("awaiting_approval", "window_total")
    assert (after.status, after.hold_reasons) == ("awaiting_approval", "window_total")
    assert "passed the approval threshold" in after.hold_texts[0]


def test_the_admin_lists_held_payouts_with_the_reason(admin_client, admin_user, funded, fiona):
    totp_enable(admin_user)  # staff open the admin only with a second factor
    pay(funded, 25_00, iban=new_iban(), by=fiona)
    page = admin_client.get("/admin/payouts/payout/?status__exact=awaiting_approval").content.decode()
    assert "It is the first payout to this bank account." in page


# Velocity.


def test_many_payouts_in_a_short_time_raise_one_alert(funded, fiona, limits, caplog):
    limits.PAYOUT_VELOCITY_ALERT_COUNT = 2
    for _ in range(2):
        pay(funded, 1_00, iban=new_iban(), by=fiona)
    assert not PayoutAlert.objects.exists()

    pay(funded, 1_00, iban=new_iban(), by=fiona)
    pay(funded, 1_00, iban=new_iban(), by=fiona)

    alert = PayoutAlert.objects.get()
    assert (alert.brand, alert.kind) == (funded, "velocity") and "3 manual payouts" in alert.detail
    assert "payout velocity alert" in caplog.text


# The limits against a model of them, under random sequences of payouts.


@hypothesis_settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    steps=st.lists(
        st.tuples(st.integers(min_value=1, max_value=60_00), st.integers(min_value=0, max_value=2)),
        min_size=1,
        max_size=8,
    )
)
def test_accepted_payouts_always_fit_every_limit(make_user, limits, steps):
    """Each example: a fresh brand with 150 EUR confirmed, three bank accounts, random payouts. A
    payout goes through exactly when the model says it fits; it waits exactly when the model says a
    second person must approve it; the ledger never drifts."""
    from campaigns.services.brands import brand_create

    limits.PAYOUT_NEW_ACCOUNT_APPROVAL = True
    limits.PAYOUT_WINDOW_APPROVAL_THRESHOLD = 70_00
    n = next(_numbers)
    brand = verified(brand_create(name=f"Prop {n}", slug=f"prop-{n}", owner=make_user(f"p{n}@example.com")))
    fund(brand, 150_00, "EUR", reference=f"DEP-PROP-{n}")
    accounts = [new_iban() for _ in range(3)]
    brand_total, per_account, paid_accounts = 0, [0, 0, 0], set()
    for amount, account in steps:
        fits = (
            brand_total + amount <= 100_00
            and per_account[account] + amount <= 50_00
            and brand_total + amount <= 150_00
        )
        try:
            payout = pay(brand, amount, iban=accounts[account])
        except PayoutRefused:
            assert not fits
            continue
        assert fits
        held = account not in paid_accounts or brand_total + amount > 70_00
        assert (payout.status == "awaiting_approval") == held
        brand_total += amount
        per_account[account] += amount
        if not held:
            paid_accounts.add(account)
    assert sum(Payout.objects.filter(brand=brand).values_list("amount", flat=True)) == brand_total
    assert funding(brand) == 150_00 - brand_total
    assert ledger_drift() == []


def test_a_manual_payout_to_details_replaced_before_it_left_is_cancelled_not_sent(funded, fiona, limits):
    """The brand's finance member paid Mo's old account; Mo's details were replaced before it left.
    It never goes to the old account, the money is the brand's again, and no new payout appears on
    its own: the approval was for the account it named."""
    from payouts.payees.services import payee_account_save
    from payouts.submission.submit import payout_submit

    before = funding(funded)
    made = pay(funded, 40_00, iban=new_iban(), by=fiona)
    payee = made.payee
    payee_account_save(
        participant=payee.participant,
        name="Mo Manual",
        email="mo@example.com",
        phone="",
        bank_account=iban_check(new_iban()),
        currency="EUR",
        consent_version="manual",
        onboard=False,
    )

    made = payout_submit(payout_id=made.pk)
    assert made.status == "cancelled" and made.reason_code == "REPLACED"
    assert funding(funded) == before
    assert not SandboxBankPayment.objects.exists()
    assert Payout.objects.filter(brand=funded).count() == 1
