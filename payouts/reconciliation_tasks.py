"""Task names the database holds: the bank channel's Schedule row (migration 0012) and statement
imports queued before the reconciliation tasks moved to payouts.reconciliation.tasks. Nothing
else may import this module."""

from payouts.reconciliation import tasks


def bank_statements_fetch_task() -> int:
    return tasks.bank_statements_fetch_task()


def statement_import_task(import_id: int) -> None:
    tasks.statement_import_task(import_id)
