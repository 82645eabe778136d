"""Work the task queue runs for funding: thin wrappers that call one service each."""

from payouts.funding import services
from payouts.notifications import brand_verified_notify


def virtual_account_request_task(brand_id: int, currency: str) -> None:
    # Run once the brand is verified (BRAND_VERIFIED_TASK): its owners are told, then its account opens.
    brand_verified_notify(brand_id=brand_id)
    services.virtual_account_request_task(brand_id, currency)


def legacy_brands_onboard_task() -> int:
    return services.legacy_brands_onboard()


def provider_reconcile_task() -> dict:
    return services.provider_transactions_reconcile()
