"""Reconciliation work the task queue runs: thin wrappers that call one service each."""

from payouts.reconciliation.statement_import import bank_statements_fetch, statement_import_run


def statement_import_task(import_id: int) -> None:
    statement_import_run(import_id=import_id)


def bank_statements_fetch_task() -> int:
    return len(bank_statements_fetch())
