"""Every posting, entry and hold names the brand whose money it moves: the column the ledger is
distributed by past one primary (docs/deploy.md). The platform's own postings name none."""

import pytest

from joyback.ledger.models import AccountKind, Entry, Hold
from joyback.ledger.services import (
    account_get_or_create,
    hold_commit,
    hold_reserve,
    postings_post,
    transaction_reverse,
    transfer,
    transfer_post,
)

pytestmark = pytest.mark.django_db


def brands_of(tx):
    return tx.brand_id, sorted(set(Entry.objects.filter(transaction=tx).values_list("brand_id", flat=True)))


def test_a_deposit_and_a_reward_carry_the_brand_on_every_leg(bank, funding, budget, payable):
    deposit = transfer_post(source=bank, destination=funding, amount=100_00, reason="deposit")
    funded = transfer_post(source=funding, destination=budget, amount=100_00, reason="campaign_funding")
    reward = transfer_post(source=budget, destination=payable, amount=5_00, reason="reward")

    # The platform bank's leg of the deposit lives with the brand's posting.
    assert [brands_of(tx) for tx in (deposit, funded, reward)] == [(1, [1])] * 3
    assert brands_of(transaction_reverse(original=reward)) == (1, [1])


def test_a_posting_of_the_platforms_own_accounts_names_no_brand(bank):
    suspense = account_get_or_create(kind=AccountKind.SUSPENSE, currency="EUR", name="Suspense")

    unmatched = transfer_post(source=bank, destination=suspense, amount=3_00, reason="unmatched_credit")

    assert brands_of(unmatched) == (None, [None])


def test_a_batch_of_two_brands_postings_names_each_its_own(bank, funding):
    other = account_get_or_create(kind=AccountKind.BRAND_FUNDING, currency="EUR", brand_id=2)

    results = postings_post(
        postings=[
            transfer(source=bank, destination=funding, amount=1_00, reason="deposit"),
            transfer(source=bank, destination=other, amount=2_00, reason="deposit"),
        ]
    )

    assert [brands_of(result.transaction) for result in results] == [(1, [1]), (2, [2])]


def test_a_hold_and_its_commit_carry_the_budgets_brand(bank, funding, budget, payable):
    transfer_post(source=bank, destination=funding, amount=10_00, reason="deposit")
    transfer_post(source=funding, destination=budget, amount=10_00, reason="campaign_funding")

    hold = hold_reserve(account=budget, amount=4_00)
    committed = hold_commit(hold=hold, destination=payable, amount=3_00)

    assert Hold.objects.get(pk=hold.pk).brand_id == 1
    assert brands_of(committed) == (1, [1])
