"""Migrations run against a live database: a new migration may not lock a large table for the time
an index takes to build, nor rewrite data in one long transaction.

New migrations (every one not listed in BEFORE_THE_RULE) are read and refused when they
- add or remove an index other than concurrently (AddIndexConcurrently / RemoveIndexConcurrently
  in a migration with atomic = False), on a table that existed before the migration;
- add a field that brings its own index (a foreign key, db_index, unique) or a unique constraint
  to such a table (build the index concurrently first);
- run Python (a data migration) inside one transaction (atomic = False, and batches of short ones).
A migration that is safe for another reason says why in `live_safe_reviewed = "..."`.
"""

import pytest
from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations, models
from django.db.migrations.loader import MigrationLoader

OURS = {"joyback", "users", "ledger", "api", "campaigns", "compliance", "verification", "payouts"}
BEFORE_THE_RULE = {
    ("users", "0001_initial"),
    ("ledger", "0001_initial"),
    ("ledger", "0002_database_rules"),
    ("ledger", "0003_postgres_tuning"),
    ("ledger", "0004_receivable_kind"),
    ("api", "0001_initial"),
    ("api", "0002_webhook_sweep_schedule"),
    ("api", "0003_inbound_events"),
    ("api", "0004_delivery_waiting_index"),
    ("api", "0005_idempotency_key_one_index"),
    ("api", "0006_inbound_event_lease"),
    ("campaigns", "0001_initial"),
    ("campaigns", "0002_brand_person_allowance_campaign_actionrule_and_more"),
    ("campaigns", "0003_actionrule_instructions"),
    ("campaigns", "0004_actionrule_cashback"),
    ("compliance", "0001_initial"),
    ("compliance", "0002_load_policies"),
    ("compliance", "0003_append_only_decisions"),
    ("payouts", "0001_initial"),
    ("payouts", "0002_payee_fingerprints"),
    ("payouts", "0003_payouts_state_machine"),
    ("payouts", "0004_payout_sweep_and_history"),
    ("payouts", "0005_reconciliation"),
    ("payouts", "0006_payee_submission"),
    ("payouts", "0007_payee_submission_lease"),
    ("verification", "0001_initial"),
    ("verification", "0002_fraudsignal_reviewdecision_sandboxtiktokvideo_and_more"),
    ("verification", "0003_recheck_schedule"),
    ("verification", "0004_purchase_cashback"),
    ("verification", "0005_claim_clawed_back"),
    ("verification", "0006_provider_event_processing"),
    ("verification", "0007_standing_work_sweep"),
    # Written before the rule, on branches merged to main meanwhile (brand verification, idempotency
    # keys per brand, payout controls).
    ("campaigns", "0005_brand_verification"),
    ("api", "0007_idempotency_key_per_brand"),
    ("payouts", "0008_payout_controls"),
    # Written before the rule on the bank-channel branch, merged after it.
    ("payouts", "0012_bank_channel"),
    ("payouts", "0013_exception_deposit_to_brand"),
    # Written before the rule on branches merged after it (the shared cache table, Adyen transfers).
    ("users", "0002_cache_table"),
    ("payouts", "0014_adyen_transfers"),
}


def live_problems(migration) -> list[str]:
    """What in `migration` would lock a live table or hold one long transaction."""
    if getattr(migration, "live_safe_reviewed", ""):
        return []
    created = {op.name_lower for op in migration.operations if isinstance(op, migrations.CreateModel)}
    problems = []
    for op in migration.operations:
        model = getattr(op, "model_name", "") or getattr(op, "model_name_lower", "")
        existing = model.lower() not in created
        if isinstance(op, AddIndexConcurrently | RemoveIndexConcurrently):
            if migration.atomic:
                problems.append(f"{op.describe()}: concurrently needs atomic = False")
        elif isinstance(op, migrations.AddIndex | migrations.RemoveIndex) and existing:
            problems.append(f"{op.describe()}: use AddIndexConcurrently/RemoveIndexConcurrently")
        elif isinstance(op, migrations.AddField) and existing:
            field = op.field
            if field.db_index or field.unique:  # a foreign key has db_index by default
                problems.append(f"{op.describe()}: the field's index locks the table; add it concurrently")
        elif isinstance(op, migrations.AddConstraint) and existing:
            if isinstance(op.constraint, models.UniqueConstraint):
                problems.append(f"{op.describe()}: build a unique index concurrently first")
        elif isinstance(op, migrations.RunPython) and migration.atomic:
            problems.append(f"{op.describe()}: a data migration runs in batches with atomic = False")
    return problems


def new_migrations():
    loader = MigrationLoader(None, ignore_no_migrations=True)
    return sorted(
        (key, migration)
        for key, migration in loader.disk_migrations.items()
        if key[0] in OURS and key not in BEFORE_THE_RULE
    )


@pytest.mark.parametrize(
    ("key", "migration"), new_migrations(), ids=lambda v: ".".join(v) if isinstance(v, tuple) else ""
)
def test_new_migrations_can_run_on_a_live_database(key, migration):
    assert live_problems(migration) == []


def test_the_rule_refuses_a_plain_index_and_a_one_transaction_data_migration():
    class Plain(migrations.Migration):
        operations = [
            migrations.AddIndex("payout", models.Index(fields=["currency"], name="payout_currency")),
            migrations.AddField("payout", "note_id", models.IntegerField(db_index=True, default=0)),
            migrations.RunPython(migrations.RunPython.noop),
        ]

    problems = live_problems(Plain("0099_plain", "payouts"))

    assert len(problems) == 3
    assert "AddIndexConcurrently" in problems[0] and "atomic = False" in problems[2]


def test_the_rule_accepts_a_concurrent_index_and_a_table_made_in_the_same_migration():
    class Concurrent(migrations.Migration):
        atomic = False
        operations = [
            AddIndexConcurrently("payout", models.Index(fields=["currency"], name="payout_currency")),
            migrations.CreateModel("Fresh", [("id", models.BigAutoField(primary_key=True))]),
            migrations.AddIndex("fresh", models.Index(fields=["id"], name="fresh_id")),
        ]

    assert live_problems(Concurrent("0099_concurrent", "payouts")) == []
