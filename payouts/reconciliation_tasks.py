"""Reconciliation work the task queue runs: thin wrappers that call one service each."""

from payouts import reconciliation


def statement_import_task(import_id: int) -> None:
    reconciliation.statement_import_run(import_id=import_id)


def payouts_unreconciled_flag_task() -> int:
    return reconciliation.payouts_unreconciled_flag()


def bank_statements_fetch_task() -> int:
    return len(reconciliation.bank_statements_fetch())
