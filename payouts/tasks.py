"""Work the task queue runs for payouts: thin wrappers that call one service each."""

from payouts.batches import payment_batch_transmit
from payouts.fees import fee_transfers_poll, fee_transfers_send
from payouts.models import PayeeAccount
from payouts.notifications import (
    brief_reviewed_notify,
    disclosure_fix_notify,
    invitation_notify,
    shop_taken_over_notify,
)
from payouts.payees.changes import payee_change_notice_send
from payouts.payees.services import payee_onboard, payee_submission_process, status_link_send
from payouts.privacy import privacy_retention_enforce
from payouts.submission.create import payout_for_participant
from payouts.submission.submit import payout_submit
from payouts.submission.sweeps import payouts_sweep
from payouts.vat_ids import vat_ids_check


def status_link_send_task(payee_id, status_url: str, campaign_name: str, language: str = "en") -> None:
    payee = PayeeAccount.objects.get(pk=payee_id)
    status_link_send(payee=payee, status_url=status_url, campaign_name=campaign_name, language=language)


def disclosure_fix_notify_task(participant_id: int, case_id: int) -> None:
    disclosure_fix_notify(participant_id=participant_id, case_id=case_id)


def shop_taken_over_notify_task(brand_id: int, shop_id: int, domain: str) -> None:
    shop_taken_over_notify(brand_id=brand_id, shop_id=shop_id, domain=domain)


def brief_reviewed_notify_task(decision_id: int) -> None:
    brief_reviewed_notify(decision_id=decision_id)


def invitation_notify_task(invitation_id: int, language: str = "") -> None:
    invitation_notify(invitation_id=invitation_id, language=language)


def payee_submission_task(submission_id: str) -> None:
    payee_submission_process(submission_id=submission_id)


def payee_verify_task(payee_id: int) -> None:
    payee_onboard(payee_id=payee_id)


def payout_for_participant_task(participant_id: int, currency: str) -> None:
    payout_for_participant(participant_id=participant_id, currency=currency, send_now=True)


def payout_submit_task(payout_id: int) -> None:
    payout_submit(payout_id=payout_id)


def payouts_sweep_task() -> dict:
    return payouts_sweep()


def payment_batch_transmit_task(batch_id: int) -> None:
    payment_batch_transmit(batch_id=batch_id)


def privacy_retention_task() -> int:
    return privacy_retention_enforce()


def payee_change_notice_task(change_id: int) -> None:
    payee_change_notice_send(change_id=change_id)


def fee_transfers_send_task() -> dict:
    return fee_transfers_send()


def fee_transfers_poll_task() -> dict:
    return fee_transfers_poll()


def vat_ids_check_task() -> dict:
    return vat_ids_check()
