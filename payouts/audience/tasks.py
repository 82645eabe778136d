"""The task queue's entry points for the audience (their dotted names are stored in schedules)."""

from payouts.audience.broadcasts import broadcasts_send_due
from payouts.audience.crm import crm_syncs_due


def broadcasts_send_task() -> int:
    return broadcasts_send_due()


def crm_sync_task() -> int:
    return crm_syncs_due()
