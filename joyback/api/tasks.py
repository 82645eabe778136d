"""Work the task queue runs for the API: thin wrappers around one service each."""

from joyback.api.idempotency import idempotency_keys_expire
from joyback.api.webhooks.delivery import webhook_deliver, webhook_deliveries_due
from joyback.queue import enqueue_on_commit


def webhook_deliver_task(delivery_id) -> str:
    return webhook_deliver(delivery_id=int(delivery_id)).status


def webhook_sweep() -> int:
    """Safety net: retries whose one-off schedule never ran, and expired idempotency keys."""
    due = webhook_deliveries_due()
    for delivery_id in due:  # each its own task: up to 500 POSTs do not run in this one
        enqueue_on_commit("joyback.api.tasks.webhook_deliver_task", delivery_id)
    idempotency_keys_expire()
    return len(due)
