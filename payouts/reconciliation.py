"""Reconciliation: bank statements in, every line matched to what it pays, or an exception.

A statement file is read whole before anything is written (payouts.iso20022.camt): a bad file
imports nothing. Its lines are then written in one transaction, each keyed by the bank's entry
reference (or a hash of the booking where the bank gives none), so importing a file twice, or a
camt.054 after the camt.053 that holds the same bookings, adds nothing.

Matching goes through the payouts' own services (payout_settle, payout_return) and the brand's
deposit service, which are idempotent and conditional: a line matched twice, or a settlement the
PSP's feed reported first, books once. Those services open their own durable transactions, so
matching runs line by line outside any enclosing one; lines whose payout needs no transition (the
common case: the PSP already said it settled) are matched with one set-based UPDATE instead.
"""

import hashlib
import re
from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns.models import Brand
from campaigns.services import brand_deposit_record
from joyback.ledger.models import AccountKind
from joyback.ledger.services import InsufficientFunds, account_get_or_create, platform_bank, transfer_post
from joyback.queue import enqueue_on_commit
from payouts.iso20022.camt import camt_read, entry_count, message_detect
from payouts.iso20022.types import SchemaError
from payouts.models import ExceptionReason as Reason
from payouts.models import ExceptionResolution as Resolution
from payouts.models import ExceptionStatus as ExcStatus
from payouts.models import LineKind as Kind
from payouts.models import LineState as State
from payouts.models import (
    PaymentBatch,
    Payout,
    PayoutStatus,
    ReconciliationException,
    SandboxBankMessage,
    Statement,
    StatementImport,
    StatementImportStatus,
    StatementLine,
)
from payouts.models import ResolutionAction as Action
from payouts.reconciliation_selectors import numbers_key
from payouts.services import payout_return, payout_settle

SENT = (PayoutStatus.SUBMITTED, PayoutStatus.ACCEPTED, PayoutStatus.UNKNOWN)
# A payout the bank has booked is one of these; a debit line for any other is a contradiction.
BOOKED = (PayoutStatus.SETTLED, PayoutStatus.RETURNED)
DEPOSIT_REFERENCE = re.compile(r"JOYBACK[\s:/-]*([A-Z0-9][A-Z0-9-]{0,59})", re.IGNORECASE)


class ReconciliationRefused(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def brand_deposit_reference(brand: Brand) -> str:
    """What a brand writes in the remittance of a transfer to fund its account."""
    return f"JOYBACK {brand.slug.upper()}"


def _sync_limit() -> int:
    return getattr(settings, "STATEMENT_SYNC_BYTES", 2 * 1024 * 1024)


# Import.


def statement_import_create(
    *, data: bytes, filename: str = "", brand: Brand | None = None, uploaded_by=None, source: str = "upload"
) -> StatementImport:
    """Take in a file: a small one is imported at once, a large one by the task queue.

    A file that is not a statement at all is refused here (SchemaError) and nothing is kept; the
    full check of a large file happens in the background and its refusal shows on the import.
    """
    if not data or not data.strip():
        raise SchemaError(_("The file is empty."), line=None, reason="empty")
    message = message_detect(data)
    large = len(data) > _sync_limit()
    with transaction.atomic(durable=True):
        job = StatementImport.objects.create(
            brand=brand,
            uploaded_by=uploaded_by,
            source=source,
            filename=filename[:200],
            data=data,
            sha256=hashlib.sha256(data).hexdigest(),
            message=message,
            total=entry_count(data),
        )
        if large:
            enqueue_on_commit("payouts.reconciliation_tasks.statement_import_task", job.pk)
    if not large:
        statement_import_run(import_id=job.pk)
        _progress_refresh(job)
    return job


def statement_import_run(*, import_id: int) -> StatementImport:
    """Read, write and match one handed-in file; safe to run again (a second run finds it done)."""
    claimed = StatementImport.objects.filter(pk=import_id, status=StatementImportStatus.QUEUED).update(
        status=StatementImportStatus.RUNNING
    )
    job = StatementImport.objects.get(pk=import_id)
    if not claimed:
        return job

    def progress(read: int) -> None:
        # Reading is the first half of the bar, matching the second.
        StatementImport.objects.filter(pk=import_id).update(processed=read // 2)

    try:
        parsed = camt_read(bytes(job.data), progress=progress)
    except SchemaError as error:
        StatementImport.objects.filter(pk=import_id).update(
            status=StatementImportStatus.FAILED,
            error=str(error)[:2000],
            error_line=error.line,
            finished_at=timezone.now(),
        )
        job.refresh_from_db()
        return job
    total = parsed.line_count
    new_line_ids = _lines_write(job, parsed)
    StatementImport.objects.filter(pk=import_id).update(
        total=total, processed=total // 2, new_lines=len(new_line_ids), known_lines=total - len(new_line_ids)
    )
    matched, exceptions = lines_match(line_ids=new_line_ids, import_id=import_id, offset=total // 2)
    payouts_unreconciled_flag()
    numbers_forget(
        StatementLine.objects.filter(statement__statement_import_id=import_id)
        .exclude(brand_id=None)
        .values_list("brand_id", flat=True)
        .distinct()
    )
    StatementImport.objects.filter(pk=import_id).update(
        status=StatementImportStatus.DONE,
        processed=total,
        matched=matched,
        exceptions=exceptions,
        finished_at=timezone.now(),
    )
    _progress_refresh(job)
    return job


def _progress_refresh(job: StatementImport) -> None:
    # Everything but the file, which never changes: a large one is tens of megabytes to read again.
    job.refresh_from_db(
        fields=[f.attname for f in StatementImport._meta.concrete_fields if f.name not in ("id", "data")]
    )


def _dedupe_key(scope: str, account: str, line) -> str:
    if line.entry_ref:
        natural = f"{account}|{line.entry_ref}|{line.detail}"
    else:
        natural = "|".join(
            map(
                str,
                (
                    account,
                    line.booking_date,
                    line.amount,
                    line.currency,
                    line.credit,
                    line.end_to_end_id,
                    line.reference,
                    line.detail,
                ),
            )
        )
    return f"{scope}:" + hashlib.sha256(natural.encode()).hexdigest()


_LINE_COLUMNS = (
    "statement_id",
    "brand_id",
    "dedupe_key",
    "entry_ref",
    "kind",
    "credit",
    "amount",
    "currency",
    "booking_date",
    "entry_status",
    "reversal",
    "end_to_end_id",
    "batch_ref",
    "return_reason",
    "reference",
    "counterparty",
    "state",
)


def _line_values(statement_id: int, brand_id: int | None, scope: str, account: str, line) -> tuple:
    """A StatementLine's columns, in _LINE_COLUMNS order."""
    return (
        statement_id,
        brand_id,
        _dedupe_key(scope, account, line),
        line.entry_ref[:35],
        line.kind,
        line.credit,
        line.amount,
        line.currency,
        line.booking_date,
        line.entry_status[:4],
        line.reversal,
        line.end_to_end_id,
        line.batch_ref[:35],
        line.return_reason,
        line.reference,
        line.counterparty,
        State.NEW.value if line.entry_status == "BOOK" else State.PENDING.value,
    )


def _lines_copy(rows) -> None:
    """Insert statement lines with COPY on PostgreSQL: through a scratch table, because COPY cannot
    skip a line seen before (same entry, same transaction) the way INSERT ... ON CONFLICT does."""
    columns = ", ".join(_LINE_COLUMNS)
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMPORARY TABLE statementline_incoming ON COMMIT DROP AS "
            "SELECT 0 AS position, {columns} FROM payouts_statementline WITH NO DATA".replace(
                "{columns}", columns
            )
        )
        with cursor.copy(
            "COPY statementline_incoming (position, {columns}) FROM STDIN".replace("{columns}", columns)
        ) as copy:
            for position, row in enumerate(rows):
                copy.write_row((position, *row))
        # In file order, so the lines' ids (and the order they are matched in) follow the file.
        cursor.execute(
            "INSERT INTO payouts_statementline ({columns}, created_at) SELECT {columns}, %s "
            "FROM statementline_incoming ORDER BY position ON CONFLICT DO NOTHING".replace(
                "{columns}", columns
            ),
            [timezone.now()],
        )
        cursor.execute("DROP TABLE statementline_incoming")


def _lines_write(job: StatementImport, parsed) -> list[int]:
    """Write the statements and their new lines in one transaction; the ids of the new lines."""
    scope = str(job.brand_id or 0)
    copying = connection.vendor == "postgresql"
    with transaction.atomic(durable=True):
        statement_ids = []
        copied = []
        for block in parsed.statements:
            statement = Statement.objects.create(
                statement_import=job,
                brand_id=job.brand_id,
                message=parsed.message,
                msg_id=parsed.msg_id[:35],
                statement_id=block.statement_id[:35],
                sequence=block.sequence,
                account=block.account[:40],
                currency=block.currency,
                opening_balance=block.opening_balance,
                closing_balance=block.closing_balance,
                closing_date=block.closing_date,
            )
            statement_ids.append(statement.pk)
            rows = [
                _line_values(statement.pk, job.brand_id, scope, block.account, line) for line in block.lines
            ]
            if copying:
                copied.append(rows)
                continue
            # A line seen before (same entry, same transaction) is the same booking: skipped.
            StatementLine.objects.bulk_create(
                [StatementLine(**dict(zip(_LINE_COLUMNS, row, strict=True))) for row in rows],
                batch_size=5000,
                ignore_conflicts=True,
            )
        if copying:
            _lines_copy(row for rows in copied for row in rows)
        return list(
            StatementLine.objects.filter(statement_id__in=statement_ids, state=State.NEW)
            .order_by("pk")
            .values_list("pk", flat=True)
        )


# Matching.


def lines_match(*, line_ids: list[int], import_id: int | None = None, offset: int = 0) -> tuple[int, int]:
    """Match lines to payouts, batches and deposits; (matched, exceptions)."""
    if not line_ids:
        return 0, 0
    matched = _bulk_match(line_ids, import_id=import_id)
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


def _bulk_match(line_ids: list[int], *, import_id: int | None = None) -> int:
    """One UPDATE for the lines that only confirm what the payouts already know: a debit for a
    payout already settled (or since returned), in the same amount and currency, the first line
    for it. Everything else goes through _line_match."""
    if connection.vendor != "postgresql":
        return 0
    # "= ANY(array)" is a linear search per row: an import's lines are named by their import.
    if import_id:
        which, argument = "s.statement_import_id = %s", import_id
    else:
        which, argument = "l.id = ANY(%s)", line_ids
    with transaction.atomic(durable=True), connection.cursor() as cursor:
        cursor.execute(
            """
            WITH candidates AS (
                SELECT DISTINCT ON (l.end_to_end_id) l.id, p.id AS payout_id, p.brand_id
                FROM payouts_statementline l
                JOIN payouts_statement s ON s.id = l.statement_id
                JOIN payouts_payout p ON p.end_to_end_id = l.end_to_end_id
                WHERE {which} AND l.state = 'new' AND l.kind = 'payout' AND NOT l.credit
                  AND p.status IN ('settled', 'returned')
                  AND p.amount = l.amount AND p.currency = l.currency
                  AND (s.brand_id IS NULL OR s.brand_id = p.brand_id)
                  AND NOT EXISTS (
                      SELECT 1 FROM payouts_statementline o
                      WHERE o.payout_id = p.id AND NOT o.credit AND o.kind IN ('payout', 'batch')
                  )
                ORDER BY l.end_to_end_id, l.id
            )
            UPDATE payouts_statementline l
            SET state = 'matched', payout_id = c.payout_id, brand_id = c.brand_id
            FROM candidates c WHERE l.id = c.id
            """.replace("{which}", which),
            [argument],
        )
        matched = cursor.rowcount
        # A payout that waited for its line gets it: its "no statement line" question is answered.
        cursor.execute(
            """
            UPDATE payouts_reconciliationexception e SET status = 'resolved', resolved_at = now()
            FROM payouts_statementline l JOIN payouts_statement s ON s.id = l.statement_id
            WHERE {which} AND l.state = 'matched' AND e.payout_id = l.payout_id
              AND e.reason = 'no_statement_line' AND e.status = 'open'
            RETURNING e.id
            """.replace("{which}", which),
            [argument],
        )
        resolved = [row[0] for row in cursor.fetchall()]
        Resolution.objects.bulk_create(
            [
                Resolution(exception_id=pk, action=Action.LINK, note="matched by a statement line")
                for pk in resolved
            ]
        )
    return matched


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
            _("The bank booked %(line)s minor units; the payout is %(payout)s.")
            % {"line": line.amount, "payout": payout.amount},
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
    found = DEPOSIT_REFERENCE.search(line.reference or "")
    brands = Brand.objects.filter(slug=found.group(1).lower()) if found else Brand.objects.none()
    if line.statement.brand_id:
        brands = brands.filter(pk=line.statement.brand_id)
    brand = brands.first()
    if brand is None:
        return _exception(
            line, Reason.UNKNOWN_LINE, _("Money came in with no brand's deposit reference on it.")
        )
    posted = brand_deposit_record(
        brand=brand,
        amount=line.amount,
        currency=line.currency,
        bank_reference=line.entry_ref or line.dedupe_key[-32:],
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
            _resolved(waiting, action=Action.LINK, actor=None, note="matched by a statement line")
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
    days = getattr(settings, "RECONCILIATION_STALE_DAYS", 3)
    cutoff = timezone.make_aware(
        timezone.datetime.combine(newest.booking_date - timedelta(days=days), timezone.datetime.min.time())
    )
    stale = (
        Payout.objects.filter(submitted_at__lt=cutoff, status__in=[*SENT, PayoutStatus.SETTLED])
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


# Resolving exceptions (finance members).


def _resolved(exception: ReconciliationException, *, action: str, actor, note="", payout=None, tx=None):
    closed = ReconciliationException.objects.filter(pk=exception.pk, status=ExcStatus.OPEN).update(
        status=ExcStatus.RESOLVED, resolved_at=timezone.now()
    )
    if not closed:
        raise ReconciliationRefused(_("This exception has already been resolved."))
    Resolution.objects.create(
        exception=exception,
        action=action,
        actor=actor,
        note=note[:500],
        payout=payout,
        ledger_transaction_id=tx,
    )
    exception.refresh_from_db()
    return exception


def numbers_forget(brand_ids) -> None:
    cache.delete_many([numbers_key(brand_id) for brand_id in brand_ids])


def exception_resolve(
    *,
    exception: ReconciliationException,
    action: str,
    actor,
    payout: Payout | None = None,
    note: str = "",
) -> ReconciliationException:
    """Link the line to a payout, book it to suspense, or mark the payout re-paid; recorded."""
    if exception.status != ExcStatus.OPEN:
        raise ReconciliationRefused(_("This exception has already been resolved."))
    try:
        return _exception_resolve(exception, action=action, actor=actor, payout=payout, note=note)
    finally:
        # After the writes (each in its own durable transaction), so no reader caches the old numbers.
        numbers_forget([exception.brand_id])


def _exception_resolve(exception, *, action, actor, payout, note) -> ReconciliationException:
    line = exception.line
    if action == Action.LINK:
        return _resolve_link(exception, line=line, payout=payout, actor=actor, note=note)
    if action == Action.SUSPENSE:
        if line is None:
            raise ReconciliationRefused(_("Only a statement line can be booked to suspense."))
        suspense = account_get_or_create(
            kind=AccountKind.SUSPENSE,
            currency=line.currency,
            brand_id=exception.brand_id,
            name=f"Suspense {line.currency}",
        )
        bank = platform_bank(currency=line.currency)
        # Money in that nothing explains waits on suspense; money out that nothing explains is
        # taken from it, so the bank account in the ledger agrees with the bank's.
        source, destination = (bank, suspense) if line.credit else (suspense, bank)
        try:
            with transaction.atomic(durable=True):
                return _suspense_book(exception, line, source, destination, actor=actor, note=note)
        except InsufficientFunds:
            raise ReconciliationRefused(
                _("The ledger's bank account does not hold this much; book the deposits first.")
            ) from None
    if action == Action.REPAID:
        if payout is not None and payout.brand_id != exception.brand_id:
            raise ReconciliationRefused(_("Choose a payout of this brand."))
        with transaction.atomic(durable=True):
            return _resolved(exception, action=action, actor=actor, note=note, payout=payout)
    raise ReconciliationRefused(_("Choose how to resolve the exception."))


def _suspense_book(exception, line, source, destination, *, actor, note):
    posted = transfer_post(
        source=source,
        destination=destination,
        amount=line.amount,
        reason="reconciliation_suspense",
        idempotency_key=f"reconciliation-suspense:{exception.pk}",
        reference=f"statement-line:{line.pk}",
        description=f"Unexplained statement line {line.entry_ref or line.pk}",
    )
    StatementLine.objects.filter(pk=line.pk).update(ledger_transaction_id=posted.pk)
    return _resolved(exception, action=Action.SUSPENSE, actor=actor, note=note, tx=posted.pk)


def _resolve_link(exception, *, line, payout, actor, note):
    if line is None:
        raise ReconciliationRefused(_("There is no statement line to link."))
    if payout is None or payout.brand_id != exception.brand_id:
        raise ReconciliationRefused(_("Choose a payout of this brand to link the line to."))
    if payout.currency != line.currency:
        raise ReconciliationRefused(
            _("The line is in %(line)s and the payout in %(payout)s: they cannot be the same money.")
            % {"line": line.currency, "payout": payout.currency}
        )
    _link_refuse_if_matched(line=line, payout=payout)
    if line.credit and payout.status in (*SENT, PayoutStatus.SETTLED):
        payout = payout_return(
            payout=payout, reason_code=line.return_reason or "MS03", detail="linked by a finance member"
        )
    elif not line.credit and payout.status in SENT:
        payout = payout_settle(payout=payout, bank_reference=line.entry_ref)
    with transaction.atomic(durable=True):
        Payout.objects.select_for_update().filter(pk=payout.pk).first()  # two members linking at once
        _link_refuse_if_matched(line=line, payout=payout)
        StatementLine.objects.filter(pk=line.pk).update(
            state=State.MATCHED, payout=payout, brand_id=payout.brand_id
        )
        return _resolved(exception, action=Action.LINK, actor=actor, note=note, payout=payout)


def _link_refuse_if_matched(*, line, payout) -> None:
    """A payout leaves the bank once and comes back at most once: one debit line, one credit line."""
    other = (
        StatementLine.objects.filter(payout=payout, state=State.MATCHED, credit=line.credit)
        .exclude(pk=line.pk)
        .first()
    )
    if other is not None:
        raise ReconciliationRefused(
            _("This payout is already matched to the statement line %(reference)s.")
            % {"reference": other.entry_ref or f"#{other.pk}"}
        )


def sandbox_statements_import(*, uploaded_by=None) -> list[StatementImport]:
    """Import every camt message the sandbox bank issued that has not been imported yet, as the
    platform's own statements (each line lands with the brand it matches)."""
    done = set(StatementImport.objects.filter(source="sandbox").values_list("sha256", flat=True))
    jobs = []
    for message in SandboxBankMessage.objects.filter(kind__startswith="camt.").order_by("pk"):
        data = bytes(message.xml)
        if hashlib.sha256(data).hexdigest() in done:
            continue
        jobs.append(
            statement_import_create(
                data=data, filename=message.msg_id, brand=None, uploaded_by=uploaded_by, source="sandbox"
            )
        )
    return jobs
