"""The migration that gives transactions, entries and holds their brand, on a ledger in use: rows
that are append-only or resolved get their brand all the same, the platform's own postings none,
and it runs backwards."""

import pytest
from django.db import DatabaseError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [("ledger", "0006_account_livemode")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets or executor.loader.graph.leaf_nodes())
    return executor.loader.project_state(targets or executor.loader.graph.leaf_nodes()).apps


def posted(apps, *legs):
    Transaction, Entry = apps.get_model("ledger", "Transaction"), apps.get_model("ledger", "Entry")
    with transaction.atomic():
        tx = Transaction.objects.create(reason="by hand", fingerprint="-")
        for account, amount in legs:
            Entry.objects.create(transaction=tx, account=account, amount=amount, currency="EUR")
    return tx.pk


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_ledger_in_use_gets_its_brands_and_the_migration_runs_back():
    old = migrate(BEFORE)
    Account, Hold = old.get_model("ledger", "Account"), old.get_model("ledger", "Hold")
    bank = Account.objects.create(kind="platform_bank", currency="EUR", name="bank", no_overdraft=False)
    suspense = Account.objects.create(kind="suspense", currency="EUR", name="suspense", no_overdraft=False)
    funding = Account.objects.create(kind="brand_funding", currency="EUR", brand_id=7, name="funding")
    budget = Account.objects.create(
        kind="campaign_budget", currency="EUR", brand_id=7, subject="campaign:1", name="budget"
    )
    deposit = posted(old, (bank, 10_00), (funding, -10_00))
    funded = posted(old, (funding, 10_00), (budget, -10_00))
    unmatched = posted(old, (bank, 3_00), (suspense, -3_00))
    now = timezone.now()
    open_hold = Hold.objects.create(account=budget, amount=2_00)
    resolved = Hold.objects.create(account=budget, amount=1_00, status="voided", resolved_at=now)

    new = migrate(None)
    Transaction, Entry = new.get_model("ledger", "Transaction"), new.get_model("ledger", "Entry")
    Hold = new.get_model("ledger", "Hold")
    assert dict(Transaction.objects.values_list("pk", "brand_id")) == {deposit: 7, funded: 7, unmatched: None}
    assert sorted(Entry.objects.values_list("transaction_id", "brand_id")) == sorted(
        [(deposit, 7), (deposit, 7), (funded, 7), (funded, 7), (unmatched, None), (unmatched, None)]
    )
    assert dict(Hold.objects.values_list("pk", "brand_id")) == {open_hold.pk: 7, resolved.pk: 7}
    # Append-only stays append-only: only the backfill may name a missing brand.
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        Entry.objects.filter(transaction_id=unmatched).update(brand_id=7)
    # A hold written without its brand (a machine still on the previous release) takes its
    # account's; one on an account that names none has none to take.
    assert Hold.objects.get(pk=Hold.objects.create(account_id=budget.pk, amount=1_00).pk).brand_id == 7
    with pytest.raises(DatabaseError, match="null value"), transaction.atomic():
        Hold.objects.create(account_id=bank.pk, amount=1_00)

    migrate(BEFORE)
    migrate(None)
    assert Transaction.objects.get(pk=deposit).brand_id == 7
