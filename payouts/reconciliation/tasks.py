"""Reconciliation work the task queue runs: thin wrappers that call one service each. Their dotted
names are stored in the queue and the schedule (migration 0024 moved the fetch's), so a rename needs a
migration too."""

from payouts.reconciliation.statement_import import bank_statements_fetch, statement_import_run


def statement_import_task(import_id: int) -> None:
    statement_import_run(import_id=import_id)


def bank_statements_fetch_task() -> int:
    return len(bank_statements_fetch())
