"""Work the task queue runs for funding: thin wrappers that call one service each."""

from payouts.funding import services


def virtual_account_request_task(brand_id: int, currency: str) -> None:
    services.virtual_account_request_task(brand_id, currency)


def provider_reconcile_task() -> dict:
    return services.provider_transactions_reconcile()
