"""Work the task queue runs: thin wrappers that call one service each."""

from verification.services import (
    claims_due_recheck,
    engagement_recheck,
    tiktok_event_process,
    whatsapp_event_process,
)


def engagement_recheck_task(claim_id) -> str:
    return engagement_recheck(claim_id=int(claim_id)).status


def recheck_due() -> int:
    """Safety net: re-check every share whose window closed but whose schedule did not run."""
    due = claims_due_recheck()
    for claim_id in due:
        engagement_recheck(claim_id=claim_id)
    return len(due)


def whatsapp_event_task(event_id) -> str:
    return whatsapp_event_process(event_id=int(event_id))


def tiktok_event_task(event_id) -> str:
    return tiktok_event_process(event_id=int(event_id))
