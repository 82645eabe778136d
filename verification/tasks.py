"""Work the task queue runs: thin wrappers that call one service each."""

from verification.cashback import purchase_confirm, purchases_due
from verification.content import spark_codes_expire as expire
from verification.posting import tiktok_post_poll, tiktok_post_upload, tiktok_posts_stalled
from verification.reach import reach_claims_due
from verification.services.review import compliance_cleared
from verification.services.shares import claims_due_recheck, engagement_recheck, remediation_recheck


def engagement_recheck_task(claim_id) -> str:
    return engagement_recheck(claim_id=int(claim_id)).status


def recheck_due() -> int:
    """Safety net: re-check every share whose window closed but whose schedule did not run, and
    take up posts through JoyBack that a lost task or a dead worker left waiting."""
    due = sorted(set(claims_due_recheck()) | set(reach_claims_due()))
    for claim_id in due:
        engagement_recheck(claim_id=claim_id)
    return len(due) + purchases_confirm_due() + tiktok_posts_stalled()


def spark_codes_expire() -> int:
    """Scheduled: Spark Ads codes past their validity are marked expired, so the brand stops
    seeing them as usable on time."""
    return expire()


def purchase_confirm_task(purchase_id) -> str:
    return purchase_confirm(purchase_id=int(purchase_id)).status


def purchases_confirm_due() -> int:
    """Safety net: confirm every purchase whose return window closed but whose schedule did not run."""
    due = purchases_due()
    for purchase_id in due:
        purchase_confirm(purchase_id=purchase_id)
    return len(due)


def remediation_recheck_task(claim_id) -> str:
    return remediation_recheck(claim_id=int(claim_id)).status


def compliance_cleared_task(claim_id) -> str:
    return compliance_cleared(claim_id=int(claim_id)).status


def tiktok_post_upload_task(post_id) -> str:
    return tiktok_post_upload(post_id=int(post_id)).status


def tiktok_post_poll_task(post_id) -> str:
    return tiktok_post_poll(post_id=int(post_id))
