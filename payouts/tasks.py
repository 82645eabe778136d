"""Work the task queue runs for payouts: thin wrappers that call one service each."""

from payouts.models import PayeeAccount
from payouts.services import status_link_send


def status_link_send_task(payee_id, status_url: str, campaign_name: str, language: str = "en") -> None:
    payee = PayeeAccount.objects.get(pk=payee_id)
    status_link_send(payee=payee, status_url=status_url, campaign_name=campaign_name, language=language)
