"""Matching statement lines to the payouts, batches and deposits they pay, or an exception."""

import datetime
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from payouts.funding.deposits import brand_deposit_book
from payouts.models import PaymentBatch, Payout, ReconciliationException, StatementImport, StatementLine
from payouts.models.payouts import PayoutStatus
from payouts.models.reconciliation import ExceptionReason as Reason
from payouts.models.reconciliation import ExceptionStatus as ExcStatus
from payouts.models.reconciliation import LineKind as Kind
from payouts.models.reconciliation import LineState as State
from payouts.models.reconciliation import ResolutionAction as Action
from payouts.models.reconciliation import amount_mismatch_text
from payouts.reconciliation.exceptions import exception_resolution_record
from payouts.reconciliation.references import brand_for_reference
from payouts.reconciliation.rules import BOOKED, SENT
from payouts.submission.outcomes import payout_return, payout_settle


def lines_match(
    *, line_ids: list[int], import_id: int | None = None, offset: int = 0, matched: int = 0
) -> tuple[int, int]:
    """Match the lines still new among these to payouts, batches and deposits; (matched,
    exceptions). matched: how many of them were matched as they were written (the lines that only
    confirm a settled payout, payouts.sql.statement_lines_copy), counted in."""
    if not line_ids:
        return matched, 0
    # A range, not an IN list of 100,000 parameters; the import's own lines only.
    lines = StatementLine.objects.filter(pk__range=(min(line_ids), max(line_ids)), state=State.NEW)
    if import_id:
        lines = lines.filter(statement__statement_import_id=import_id)
    else:
        lines = lines.filter(pk__in=line_ids)
    remaining = list(lines.select_related("statement").order_by("pk"))
    unknown = _unknown_lines(remaining)
    exceptions = _exceptions_bulk(unknown, Reason.UNKNOWN_LINE, _("No payout has this EndToEndId."))
    unknown_ids = {line.pk for line in unknown}
    remaining = [line for line in remaining if line.pk not in unknown_ids]
    for position, line in enumerate(remaining, start=1):
        if _line_match(line):
            matched += 1
        else:
            exceptions += 1
        if import_id and position % 500 == 0:
            StatementImport.objects.filter(pk=import_id).update(
                processed=offset + (len(line_ids) - len(remaining) + position) // 2
            )
    return matched, exceptions


def _unknown_lines(lines: list[StatementLine]) -> list[StatementLine]:
    """Payout and return lines whose EndToEndId no payout has (in the statement's scope), found in
    one query so that a file full of strangers costs one transaction, not one per line."""
    named = [line for line in lines if line.kind in (Kind.PAYOUT, Kind.RETURN) and line.end_to_end_id]
    known = set()
    for brand_id in {line.statement.brand_id for line in named}:
        payouts = Payout.objects.filter(end_to_end_id__in=[line.end_to_end_id for line in named])
        if brand_id:
            payouts = payouts.filter(brand_id=brand_id)
        known |= {(brand_id, e2e) for e2e in payouts.values_list("end_to_end_id", flat=True)}
    return [line for line in named if (line.statement.brand_id, line.end_to_end_id) not in known]


def _exceptions_bulk(lines: list[StatementLine], reason: str, detail: str) -> int:
    if not lines:
        return 0
    with transaction.atomic(durable=True):
        StatementLine.objects.filter(pk__in=[line.pk for line in lines]).update(state=State.EXCEPTION)
        ReconciliationException.objects.bulk_create(
            [
                ReconciliationException(
                    line=line,
                    brand_id=line.statement.brand_id,
                    reason=reason,
                    detail=str(detail)[:300],
                    amount=line.signed_amount,
                    currency=line.currency,
                )
                for line in lines
            ],
            ignore_conflicts=True,
        )
    return len(lines)


def _payout_for(line: StatementLine) -> Payout | None:
    payouts = Payout.objects.filter(end_to_end_id=line.end_to_end_id)
    if line.statement.brand_id:
        payouts = payouts.filter(brand_id=line.statement.brand_id)
    return payouts.first()


def _line_match(line: StatementLine) -> bool:
    """Match one line; True when matched, False when it became an exception."""
    if line.kind in (Kind.PAYOUT, Kind.RETURN) and line.end_to_end_id:
        payout = _payout_for(line)
        if payout is None:
            return _exception(line, Reason.UNKNOWN_LINE, _("No payout has this EndToEndId."))
        return _payout_line(line, payout)
    if line.kind == Kind.BATCH:
        return _batch_line(line)
    if line.kind == Kind.DEPOSIT:
        return _deposit_line(line)
    return _exception(line, Reason.UNKNOWN_LINE, _("Nothing on this line says what it pays."))


def _payout_line(line: StatementLine, payout: Payout) -> bool:
    if line.currency != payout.currency:
        return _exception(
            line,
            Reason.CURRENCY_MISMATCH,
            _("The bank booked %(line)s; the payout is in %(payout)s.")
            % {"line": line.currency, "payout": payout.currency},
            payout=payout,
        )
    if line.amount != payout.amount:
        return _exception(
            line,
            Reason.AMOUNT_MISMATCH,
            amount_mismatch_text(line=line, payout=payout, language=get_language() or "en"),
            payout=payout,
        )
    earlier = (
        StatementLine.objects.filter(payout=payout, credit=line.credit, state=State.MATCHED)
        .exclude(pk=line.pk)
        .first()
    )
    if earlier is not None:
        if line.entry_ref and earlier.entry_ref == line.entry_ref:
            # The same booking told twice (a batch total, then its breakdown in a camt.054).
            return _matched(line, payout=payout)
        return _exception(
            line,
            Reason.DUPLICATE,
            _("This payout was already booked on statement line %(id)s.") % {"id": earlier.pk},
            payout=payout,
        )
    if line.credit:
        if payout.status in (*SENT, PayoutStatus.SETTLED):
            payout = payout_return(
                payout=payout, reason_code=line.return_reason or "MS03", detail=f"statement {line.entry_ref}"
            )
        if payout.status != PayoutStatus.RETURNED:
            return _exception(
                line,
                Reason.STATE_MISMATCH,
                _("Money came back for a payout that is %(status)s.")
                % {"status": payout.get_status_display()},
                payout=payout,
            )
        return _matched(line, payout=payout)
    if payout.status in SENT:
        payout = payout_settle(payout=payout, bank_reference=line.entry_ref)
    if payout.status not in BOOKED:
        return _exception(
            line,
            Reason.STATE_MISMATCH,
            _("The bank paid a payout that is %(status)s.") % {"status": payout.get_status_display()},
            payout=payout,
        )
    return _matched(line, payout=payout)


def _batch_line(line: StatementLine) -> bool:
    """One debit for a whole pain.001 file: matched when its payouts add up to it, and split into
    one line per payout so each payout has its own."""
    batch = PaymentBatch.objects.filter(msg_id__in=[line.batch_ref, *_batch_msg_ids(line)]).first()
    if batch is None and line.batch_ref:
        # The bank may name the batch by its PmtInfId, which starts with the file's MsgId.
        batch = PaymentBatch.objects.filter(msg_id__in=_prefixes(line.batch_ref)).order_by("-msg_id").first()
    if batch is None:
        return _exception(line, Reason.UNKNOWN_LINE, _("No payment file has this batch reference."))
    payouts = list(batch.payouts.exclude(status__in=[PayoutStatus.REJECTED, PayoutStatus.CANCELLED]))
    brands = {p.brand_id for p in payouts}
    if line.statement.brand_id and brands - {line.statement.brand_id}:
        return _exception(line, Reason.UNKNOWN_LINE, _("No payment file has this batch reference."))
    total = sum(p.amount for p in payouts)
    if total != line.amount or batch.currency != line.currency:
        return _exception(
            line,
            Reason.AMOUNT_MISMATCH,
            _("The bank booked %(line)s %(currency)s for file %(file)s; its payouts add up to %(total)s.")
            % {"line": line.amount, "currency": line.currency, "file": batch.msg_id, "total": total},
        )
    for payout in payouts:
        if payout.status in SENT:
            payout_settle(payout=payout, bank_reference=line.entry_ref)
    with transaction.atomic(durable=True):
        StatementLine.objects.bulk_create(
            [
                StatementLine(
                    statement_id=line.statement_id,
                    brand_id=payout.brand_id,
                    dedupe_key=f"{line.dedupe_key[:50]}:{payout.end_to_end_id}",
                    entry_ref=line.entry_ref,
                    kind=Kind.PAYOUT,
                    credit=False,
                    amount=payout.amount,
                    currency=payout.currency,
                    booking_date=line.booking_date,
                    end_to_end_id=payout.end_to_end_id,
                    batch_ref=line.batch_ref,
                    reference=_("part of batch booking %(ref)s") % {"ref": line.entry_ref},
                    state=State.MATCHED,
                    payout=payout,
                )
                for payout in payouts
            ],
            ignore_conflicts=True,
        )
        StatementLine.objects.filter(pk=line.pk).update(
            state=State.MATCHED, payment_batch=batch, brand_id=brands.pop() if len(brands) == 1 else None
        )
    return True


def _batch_msg_ids(line: StatementLine) -> list[str]:
    return [line.reference] if line.reference and len(line.reference) <= 35 else []


def _prefixes(reference: str) -> list[str]:
    parts = reference.split("-")
    return ["-".join(parts[:n]) for n in range(1, len(parts))]


def _deposit_line(line: StatementLine) -> bool:
    brand = brand_for_reference(line.reference)
    if brand is None:
        # Never a brand's money until platform staff say whose it is.
        return _exception(
            line, Reason.UNKNOWN_LINE, _("Money came in with no brand's payment reference on it.")
        )
    if brand.livemode:
        # Funding by reference to the platform's account is retired: the bank's word is that the
        # platform's account received it, and the reference is only a hint of whose it may be, so
        # it is never the brand's funding; staff send it back, or move it with custody_move.
        return _exception(
            line,
            Reason.UNKNOWN_LINE,
            _(
                "Money came in with %(brand)s's payment reference, but the brand funds only through "
                "its own virtual IBAN now; send it back to the sender."
            )
            % {"brand": brand.name},
        )
    posted = brand_deposit_book(
        brand=brand,
        amount=line.amount,
        currency=line.currency,
        bank_reference=line.entry_ref or line.dedupe_key[-32:],
        receiving_account=line.statement.account,
    )
    StatementLine.objects.filter(pk=line.pk).update(
        state=State.MATCHED, brand=brand, ledger_transaction_id=posted.pk
    )
    return True


def _matched(line: StatementLine, *, payout: Payout) -> bool:
    with transaction.atomic(durable=True):
        StatementLine.objects.filter(pk=line.pk).update(
            state=State.MATCHED, payout=payout, brand_id=payout.brand_id
        )
        for waiting in ReconciliationException.objects.filter(
            payout=payout, reason=Reason.NO_STATEMENT_LINE, status=ExcStatus.OPEN
        ):
            exception_resolution_record(
                waiting, action=Action.LINK, actor=None, note="matched by a statement line"
            )
    return True


def _exception(line: StatementLine, reason: str, detail: str, *, payout: Payout | None = None) -> bool:
    brand_id = payout.brand_id if payout is not None else line.statement.brand_id
    with transaction.atomic(durable=True):
        StatementLine.objects.filter(pk=line.pk).update(state=State.EXCEPTION, brand_id=brand_id)
        ReconciliationException.objects.get_or_create(
            line=line,
            defaults={
                "brand_id": brand_id,
                "payout": payout,
                "reason": reason,
                "detail": str(detail)[:300],
                "amount": line.signed_amount,
                "currency": line.currency,
            },
        )
    return False


def payouts_unreconciled_flag(*, now=None) -> int:
    """Payouts sent long before the newest statement yet on none of them: each gets an exception.

    "Long" is RECONCILIATION_STALE_DAYS before the newest booking date imported, so nothing is
    flagged while no statement has been imported at all."""
    newest = StatementLine.objects.filter(state=State.MATCHED).order_by("-booking_date").first()
    if newest is None or newest.booking_date is None:
        return 0
    days = settings.RECONCILIATION_STALE_DAYS
    cutoff = timezone.make_aware(
        datetime.datetime.combine(newest.booking_date - timedelta(days=days), datetime.time.min)
    )
    stale = (
        # Test payouts leave the sandbox bank, never on the live bank's statements.
        Payout.objects.filter(
            submitted_at__lt=cutoff, status__in=[*SENT, PayoutStatus.SETTLED], brand__livemode=True
        )
        .filter(~Exists(StatementLine.objects.filter(payout=OuterRef("pk"))))
        .filter(
            ~Exists(
                ReconciliationException.objects.filter(
                    payout=OuterRef("pk"), reason=Reason.NO_STATEMENT_LINE, status=ExcStatus.OPEN
                )
            )
        )
        .values_list("pk", "brand_id", "amount", "currency", "submitted_at")[:1000]
    )
    flagged = 0
    for pk, brand_id, amount, currency, submitted_at in stale:
        try:
            with transaction.atomic(durable=True):
                ReconciliationException.objects.create(
                    brand_id=brand_id,
                    payout_id=pk,
                    reason=Reason.NO_STATEMENT_LINE,
                    detail=f"submitted {submitted_at:%Y-%m-%d}",
                    amount=-amount,
                    currency=currency,
                )
            flagged += 1
        except IntegrityError:  # another sweep flagged it first
            pass
    return flagged
