"""The platform bank's pain.001 files from before brands held their own money: no file is built any
more (every live payout, a batch SEPA transfer too, leaves its brand's own balance account at the
provider: payouts.submission.submit), but a file stored then is still sent at most once and the
bank's pain.002 reports on it are applied."""

from django.utils import timezone
from django.utils.translation import gettext as _

from payouts import psp
from payouts.iso20022.pain002 import pain002_parse
from payouts.models import PaymentBatch, Payout
from payouts.submission.states import PayoutRefused
from payouts.submission.submit import payout_status_apply


def payment_batch_transmit(*, batch_id: int) -> PaymentBatch:
    """Send a stored file; a file already sent is refused, never sent twice."""
    claimed = PaymentBatch.objects.filter(pk=batch_id, sent_at__isnull=True).update(sent_at=timezone.now())
    batch = PaymentBatch.objects.get(pk=batch_id)
    if not claimed:
        raise PayoutRefused(_("File %(msg_id)s has already been sent.") % {"msg_id": batch.msg_id})
    try:
        report = psp.payment_file_send(xml=bytes(batch.xml))
    except psp.PspUnknown:
        return batch  # its payouts are "submitted": their status checks find out what the bank got
    status_report_apply(xml=report)
    return batch


def status_report_apply(*, xml: bytes) -> int:
    """A pain.002 from the bank: each payout it speaks of moves, once, whatever order reports come in."""
    report = pain002_parse(xml)
    applied = 0
    payouts = Payout.objects.filter(batch__msg_id=report.original_msg_id).select_related("payee")
    # Our files held one payment batch each (they were built with no max_per_batch), so a
    # batch-level rejection that lists no transactions still reaches every payout of the file.
    batch_id = f"{report.original_msg_id}-1"
    for payout in payouts:
        status = report.status_of(payout.end_to_end_id, batch_id)
        if status is None:
            continue
        payout_status_apply(
            payout=payout,
            status=psp.PaymentStatus(status=status.status, reason_code=status.reason),
        )
        applied += 1
    return applied
