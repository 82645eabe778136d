"""The sandbox bank's file channel: pain.001 in, pain.002 back; camt.054 for each booking."""

import secrets

from django.conf import settings
from django.utils import timezone

from payouts.iso20022.camt054 import camt054_xml
from payouts.iso20022.types import Entry, EntryDetail, Iso20022Error
from payouts.models import SandboxBankMessage, SandboxBankPayment


def message_id(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(10).upper()}"


def msg_id_of(xml: bytes) -> str:
    start = xml.index(b"<MsgId>") + len(b"<MsgId>")
    return xml[start : xml.index(b"</MsgId>", start)].decode()


def notification_issue(*, payment: SandboxBankPayment, returned: bool = False, reason_code: str = "") -> None:
    """A camt.054 for one booking on the platform's account: the payout leaving, or coming back. A
    payout from a brand's own balance account never touches the platform's account: none."""
    message = notification_message(payment=payment, returned=returned, reason_code=reason_code)
    if message is not None:
        message.save()


def notification_message(
    *, payment: SandboxBankPayment, returned: bool = False, reason_code: str = ""
) -> SandboxBankMessage | None:
    """notification_issue's camt.054, unsaved (a transfer's booking stores it in its own statement),
    or None where the bank issues none."""
    if payment.balance_account_id:
        return None
    if payment.currency != "EUR":
        return None  # the sandbox bank keeps its euro account only; other rails report by the event feed
    today = timezone.localdate()
    detail = EntryDetail(
        end_to_end_id=payment.end_to_end_id,
        amount_minor=payment.amount,
        msg_id=payment.msg_id,
        creditor_name=payment.creditor_name[:70],
        creditor_iban=payment.account if payment.account[:2].isalpha() and ":" not in payment.account else "",
        return_reason=reason_code if returned else "",
        instant=payment.scheme == "sepa_instant",
    )
    entry = Entry(
        amount_minor=payment.amount,
        currency=payment.currency,
        credit=returned,
        booking_date=today,
        value_date=today,
        account_servicer_ref=(payment.bank_reference + ("R" if returned else ""))[:35],
        details=(detail,),
    )
    msg_id = message_id("NTF")
    try:
        xml = camt054_xml(
            msg_id=msg_id,
            created_at=timezone.now(),
            account_iban=settings.PAYOUT_DEBTOR_IBAN,
            # The writer's output is schema-tested; a bank does not validate its own messages.
            validate=False,
            entries=[entry],
        )
    except Iso20022Error:
        return None  # an account the writer cannot describe (non-IBAN): the event feed still tells
    return SandboxBankMessage(kind="camt.054.001.08", msg_id=msg_id, xml=xml, created_at=timezone.now())


def incoming_transfer_issue(*, amount: int, remittance: str) -> SandboxBankMessage:
    """Money arriving on the platform's euro account (a brand funding its balance): the camt.054
    credit notification the bank sends, which the bank channel's fetch then imports. Nothing is
    booked here: the ledger learns of it from the bank's message, like any other deposit."""
    today = timezone.localdate()
    reference = "SBXIN" + secrets.token_hex(10).upper()
    entry = Entry(
        amount_minor=amount,
        currency="EUR",
        credit=True,
        booking_date=today,
        value_date=today,
        account_servicer_ref=reference,
        family="RCDT",
        sub_family="ESCT",
        details=(EntryDetail(end_to_end_id=reference, amount_minor=amount, remittance=remittance),),
    )
    msg_id = message_id("NTF")
    xml = camt054_xml(
        msg_id=msg_id, created_at=timezone.now(), account_iban=settings.PAYOUT_DEBTOR_IBAN, entries=[entry]
    )
    return SandboxBankMessage.objects.create(kind="camt.054.001.08", msg_id=msg_id, xml=xml)
