"""SEPA batch files: payouts verified and waiting leave together in pain.001 files, each file
written once, stored byte for byte, and sent at most once; the bank's pain.002 reports applied."""

import hashlib
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _

from joyback.queue import enqueue_on_commit
from payouts import psp
from payouts.iso20022.pain001 import pain001_files
from payouts.iso20022.pain002 import pain002_parse
from payouts.iso20022.types import CreditTransfer, Debtor
from payouts.models import PaymentBatch, Payout, VirtualAccount
from payouts.models.funding import VirtualAccountStatus
from payouts.models.payouts import PayoutScheme, PayoutStatus
from payouts.reconciliation.bank_health import payouts_paused
from payouts.submission.states import PayoutRefused, payout_transition
from payouts.submission.submit import payout_status_apply
from payouts.vop import payout_creditor_name, vop_current


def _transfer(payout: Payout) -> CreditTransfer:
    account = payout.payee.account
    return CreditTransfer(
        end_to_end_id=payout.end_to_end_id,
        amount_minor=payout.amount,
        currency=payout.currency,
        creditor_name=payout_creditor_name(payout, vop_current(payee=payout.payee)),
        creditor_iban=account.iban,
        creditor_bic=account.bic,
        remittance=f"JoyBack reward {payout.end_to_end_id}",
    )


def _brands_holding_own():
    return (
        VirtualAccount.objects.filter(status=VirtualAccountStatus.OPEN)
        .exclude(account_holder_id="")
        .values("brand_id")
    )


def payment_batch_build(*, currency: str = "EUR", now=None) -> list[PaymentBatch]:
    """Put every verified SEPA batch payout into pain.001 files (split at the bank's cap)."""
    now = now or timezone.now()
    if payouts_paused():
        return []  # as for a single payout: nothing leaves while the bank and the ledger disagree
    if not settings.CUSTODY_POOLED_LEGACY:
        # The platform's bank account pays no brand's rewards: every live brand pays from its own
        # balance account at the provider (payouts.submission.submit), batch SEPA transfers too.
        return []
    with transaction.atomic(durable=True):
        payouts = list(
            Payout.objects.select_for_update(skip_locked=True)
            .filter(status=PayoutStatus.PAYEE_VERIFIED, scheme=PayoutScheme.SEPA, currency=currency)
            .filter(brand__livemode=True)  # the bank's files carry live money only
            # A brand holding its own money pays from its own account, never in the platform's files.
            .exclude(brand_id__in=_brands_holding_own())
            # Made to details the person replaced since: cancelled and made again by the sweep.
            .filter(payee__replaced_at__isnull=True)
            .select_related("payee")
            .order_by("pk")[: settings.PAYOUT_FILE_MAX_TRANSACTIONS * 10]
        )
        if not payouts:
            return []
        by_id = {p.end_to_end_id: p for p in payouts}
        files = pain001_files(
            debtor=Debtor(
                name=settings.PAYOUT_DEBTOR_NAME,
                iban=settings.PAYOUT_DEBTOR_IBAN,
                bic=settings.PAYOUT_DEBTOR_BIC,
            ),
            transfers=[_transfer(p) for p in payouts],
            msg_id_prefix="JBP",
            created_at=now,
            execution_date=now.date(),
            max_per_file=settings.PAYOUT_FILE_MAX_TRANSACTIONS,
        )
        batches = []
        for file in files:
            batch, created = PaymentBatch.objects.get_or_create(
                msg_id=file.msg_id,
                defaults={
                    "currency": currency,
                    "number_of_transactions": file.number_of_transactions,
                    "control_sum": file.control_sum_minor,
                    "xml": file.xml,
                    "sha256": hashlib.sha256(file.xml).hexdigest(),
                },
            )
            if not created:
                # The same payouts again: only after the bank said it never got the file (the
                # status checks reopened every one of them), so the stored file may go once more.
                PaymentBatch.objects.filter(pk=batch.pk).update(sent_at=None)
            for end_to_end_id in file.end_to_end_ids:
                payout_transition(
                    by_id[end_to_end_id],
                    "submit",
                    detail=f"in file {file.msg_id}",
                    batch=batch,
                    submissions=F("submissions") + 1,
                    submitted_at=now,
                    next_check_at=now + timedelta(seconds=settings.PAYOUT_STALE_SECONDS),
                )
            enqueue_on_commit("payouts.tasks.payment_batch_transmit_task", batch.pk)
            batches.append(batch)
    return batches


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
    # Our files hold one payment batch each (payment_batch_build sets no max_per_batch), so a
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
