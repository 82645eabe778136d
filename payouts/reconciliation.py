"""Reconciliation: bank statements in, every line matched to what it pays, or an exception.

Only the platform's bank channel books money: the bank's own feed fetched on a schedule, the
folder the bank drops its files in, or a file platform staff upload that a second staff member
approves. A brand may hand in its own statement only to compare
(reconciliation_selectors.statement_compare), which writes nothing. Each camt.053 must follow on
from the one before it (sequence, opening = previous closing) and its entries must add up; the
ledger's platform bank is then compared with the bank's closing balance, and a difference is an
alert that pauses payouts above a set amount.

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

import datetime
import hashlib
import secrets
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef
from django.db.models.functions import Length
from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns.models import Brand
from campaigns.services import brand_deposit_record
from joyback.ledger.models import AccountKind
from joyback.ledger.services import InsufficientFunds, account_get_or_create, platform_bank, transfer_post
from joyback.queue import enqueue_on_commit
from payouts.iso20022.camt import camt_read, entry_count, message_detect
from payouts.iso20022.types import SchemaError
from payouts.models import (
    BrandFundingReference,
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
from payouts.models import ExceptionReason as Reason
from payouts.models import ExceptionResolution as Resolution
from payouts.models import ExceptionStatus as ExcStatus
from payouts.models import LineKind as Kind
from payouts.models import LineState as State
from payouts.models import ResolutionAction as Action
from payouts.reconciliation_selectors import brand_for_reference, ledger_bank_balance, numbers_key
from payouts.services import payout_return, payout_settle

SENT = (PayoutStatus.SUBMITTED, PayoutStatus.ACCEPTED, PayoutStatus.UNKNOWN)
# A payout the bank has booked is one of these; a debit line for any other is a contradiction.
BOOKED = (PayoutStatus.SETTLED, PayoutStatus.RETURNED)


class ReconciliationRefused(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class Channel:
    """Where a statement came from; each of them is the bank's word."""

    FEED = "feed"  # fetched from the bank / PSP on a schedule (in the sandbox: the sandbox bank)
    FOLDER = "folder"  # a file the bank wrote to the drop folder
    STAFF = "staff"  # uploaded by platform staff, booked once a second staff member approves


CHANNELS = (Channel.FEED, Channel.FOLDER, Channel.STAFF)
# Alerts about a whole statement or the account: cleared by staff, never booked.
ALERTS = (Reason.SEQUENCE_GAP, Reason.OPENING_MISMATCH, Reason.BANK_DRIFT)


def _sync_limit() -> int:
    return getattr(settings, "STATEMENT_SYNC_BYTES", 2 * 1024 * 1024)


def _staff_refuse(user, permission: str, message: str) -> None:
    if user is None or not user.is_active or not user.is_staff or not user.has_perm(permission):
        raise ReconciliationRefused(message)


# Funding references.

_REFERENCE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no I, O, 0, 1: read aloud and typed safely


def _rf_check_digits(body: str) -> str:
    digits = "".join(str(int(char, 36)) for char in body + "RF00")
    return f"{98 - int(digits) % 97:02d}"


def brand_deposit_reference(brand: Brand) -> str:
    """The brand's own payment reference for transfers to the platform's account (ISO 11649 RF
    creditor reference), made on first use; shown in groups of four as banks print it."""
    found = BrandFundingReference.objects.filter(brand=brand).values_list("reference", flat=True).first()
    while found is None:
        body = "JB" + "".join(secrets.choice(_REFERENCE_ALPHABET) for _ in range(8))
        try:
            with transaction.atomic():
                found = BrandFundingReference.objects.create(
                    brand=brand, reference=f"RF{_rf_check_digits(body)}{body}"
                ).reference
        except IntegrityError:  # another request made it first, or (rarely) the same body exists
            found = (
                BrandFundingReference.objects.filter(brand=brand).values_list("reference", flat=True).first()
            )
    return " ".join(found[i : i + 4] for i in range(0, len(found), 4))


# Import.


def statement_import_create(
    *, data: bytes, channel: str, filename: str = "", uploaded_by=None
) -> StatementImport:
    """Take in a file from the bank channel: from the feed or the drop folder it is imported at
    once (a large one by the task queue); from staff it waits for a second person's approval.

    A file that is not a statement at all is refused here (SchemaError) and nothing is kept.
    """
    if channel not in CHANNELS:
        raise ReconciliationRefused(
            _("Statements come only from the bank's feed, its folder or platform staff.")
        )
    if channel == Channel.STAFF:
        _staff_refuse(
            uploaded_by,
            "payouts.statement_upload",
            _("Only platform staff with the statement upload permission may upload a bank statement."),
        )
    if not data or not data.strip():
        raise SchemaError(_("The file is empty."), line=None, reason="empty")
    message = message_detect(data)
    large = len(data) > _sync_limit()
    if channel == Channel.STAFF and not large:
        camt_read(data)  # a bad file is refused now, not after someone approved it
    waits = channel == Channel.STAFF
    with transaction.atomic(durable=True):
        job = StatementImport.objects.create(
            uploaded_by=uploaded_by,
            source=channel,
            filename=filename[:200],
            data=data,
            sha256=hashlib.sha256(data).hexdigest(),
            message=message,
            total=entry_count(data),
            status=StatementImportStatus.AWAITING if waits else StatementImportStatus.QUEUED,
        )
        if large and not waits:
            enqueue_on_commit("payouts.reconciliation_tasks.statement_import_task", job.pk)
    if not large and not waits:
        statement_import_run(import_id=job.pk)
        _progress_refresh(job)
    return job


def statement_import_approve(*, import_id: int, approver) -> StatementImport:
    """A second staff member approves a file staff uploaded: only now does it book anything."""
    _staff_refuse(
        approver,
        "payouts.statement_approve",
        _("Only platform staff with the approval permission may approve a statement."),
    )
    job = StatementImport.objects.defer("data").annotate(size=Length("data")).filter(pk=import_id).first()
    if job is None or job.status != StatementImportStatus.AWAITING:
        raise ReconciliationRefused(_("This statement is not waiting for approval."))
    if job.uploaded_by_id == approver.pk:
        raise ReconciliationRefused(_("A second person must approve a statement you uploaded yourself."))
    with transaction.atomic(durable=True):
        claimed = (
            StatementImport.objects.filter(pk=import_id, status=StatementImportStatus.AWAITING)
            .exclude(uploaded_by=approver)
            .update(status=StatementImportStatus.QUEUED, approved_by=approver, approved_at=timezone.now())
        )
        if not claimed:
            raise ReconciliationRefused(_("This statement is not waiting for approval."))
        large = job.size > _sync_limit()
        if large:
            enqueue_on_commit("payouts.reconciliation_tasks.statement_import_task", import_id)
    if not large:
        statement_import_run(import_id=import_id)
    job.refresh_from_db(fields=["status", "approved_by", "approved_at", "matched", "exceptions", "error"])
    return job


def statement_import_decline(*, import_id: int, actor, note: str) -> StatementImport:
    """A second staff member refuses a file staff uploaded: it books nothing, ever; the why is kept."""
    _staff_refuse(
        actor,
        "payouts.statement_approve",
        _("Only platform staff with the approval permission may decline a statement."),
    )
    if not note.strip():
        raise ReconciliationRefused(_("Say why the statement is declined."))
    with transaction.atomic(durable=True):
        declined = StatementImport.objects.filter(pk=import_id, status=StatementImportStatus.AWAITING).update(
            status=StatementImportStatus.FAILED,
            approved_by=actor,
            approved_at=timezone.now(),
            error=(_("Declined by %(who)s: %(why)s") % {"who": actor.get_username(), "why": note.strip()})[
                :2000
            ],
            finished_at=timezone.now(),
        )
    if not declined:
        raise ReconciliationRefused(_("This statement is not waiting for approval."))
    return StatementImport.objects.defer("data").get(pk=import_id)


def statement_import_run(*, import_id: int) -> StatementImport:
    """Read, check, write and match one file; safe to run again (a second run finds it done)."""
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
        _totals_check(parsed)
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
    for statement in Statement.objects.filter(statement_import_id=import_id, closing_balance__isnull=False):
        bank_drift_check(statement=statement)
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


def _totals_check(parsed) -> None:
    """A statement whose booked entries do not add up to closing minus opening is not the bank's
    account of anything: the whole file is refused and nothing is booked."""
    for block in parsed.statements:
        if block.opening_balance is None or block.closing_balance is None:
            continue  # a camt.054 notification carries no balances
        if block.opening_balance + block.booked_total != block.closing_balance:
            raise SchemaError(
                _(
                    "Statement %(id)s does not add up: opening %(opening)s plus its booked entries "
                    "%(entries)s is not its closing balance %(closing)s (minor units)."
                )
                % {
                    "id": block.statement_id,
                    "opening": block.opening_balance,
                    "entries": block.booked_total,
                    "closing": block.closing_balance,
                },
                line=None,
                reason="totals",
            )


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
    # Every booking statement is the platform's own (brand None); "0" keeps the keys of lines
    # imported before brands stopped handing in statements.
    scope = "0"
    copying = connection.vendor == "postgresql"
    with transaction.atomic(durable=True):
        statement_ids = []
        copied = []
        for block in parsed.statements:
            statement = Statement.objects.create(
                statement_import=job,
                brand_id=None,
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
            _chain_check(statement)
            rows = [_line_values(statement.pk, None, scope, block.account, line) for line in block.lines]
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


# Integrity: the statements chain, and the ledger's bank agrees with the bank.


def _chain_check(statement: Statement) -> None:
    """A camt.053 follows on from the account's previous one: the next sequence number, and an
    opening balance equal to its closing balance. A gap or a mismatch is an alert for staff."""
    if statement.opening_balance is None or statement.closing_balance is None:
        return
    earlier = Statement.objects.filter(
        account=statement.account, closing_balance__isnull=False, opening_balance__isnull=False
    ).exclude(pk=statement.pk)
    if earlier.filter(statement_id=statement.statement_id, sequence=statement.sequence).exists():
        return  # the same statement again: its lines are known, its place in the chain too
    if statement.sequence is not None:
        previous = earlier.filter(sequence__lt=statement.sequence).order_by("-sequence", "-pk").first()
    else:
        previous = (
            earlier.filter(closing_date__lte=statement.closing_date).order_by("-closing_date", "-pk").first()
        )
    if previous is None:
        return  # the account's first statement starts the chain
    if (
        statement.sequence is not None
        and previous.sequence is not None
        and statement.sequence != previous.sequence + 1
    ):
        _alert(
            statement,
            Reason.SEQUENCE_GAP,
            _("Statement %(this)s follows statement %(previous)s: %(missing)s missing in between.")
            % {
                "this": statement.sequence,
                "previous": previous.sequence,
                "missing": statement.sequence - previous.sequence - 1,
            },
            amount=0,
        )
    if statement.opening_balance != previous.closing_balance:
        _alert(
            statement,
            Reason.OPENING_MISMATCH,
            _("Opening balance %(opening)s is not the previous statement's closing balance %(closing)s.")
            % {"opening": statement.opening_balance, "closing": previous.closing_balance},
            amount=statement.opening_balance - previous.closing_balance,
        )


def _alert(statement: Statement, reason: str, detail: str, *, amount: int) -> ReconciliationException:
    return ReconciliationException.objects.create(
        statement=statement,
        reason=reason,
        detail=str(detail)[:300],
        amount=amount,
        currency=statement.currency,
    )


def bank_drift_check(*, statement: Statement) -> ReconciliationException | None:
    """The ledger's platform bank at the end of the statement's day against the bank's closing
    balance; a difference is an alert (and pauses payouts above BANK_DRIFT_PAUSE_MINOR)."""
    if statement.closing_balance is None or statement.closing_date is None:
        return None
    newest = (
        Statement.objects.filter(account=statement.account, closing_balance__isnull=False)
        .order_by("-closing_date", "-sequence", "-pk")
        .values_list("pk", flat=True)
        .first()
    )
    if newest != statement.pk:
        return None  # an older statement arriving late: the newest one speaks for the account
    ledger = ledger_bank_balance(currency=statement.currency, as_of=statement.closing_date)
    drift = ledger - statement.closing_balance
    if not drift:
        return None
    if ReconciliationException.objects.filter(statement=statement, reason=Reason.BANK_DRIFT).exists():
        return None
    with transaction.atomic(durable=True):
        return _alert(
            statement,
            Reason.BANK_DRIFT,
            _("On %(date)s the ledger's bank held %(ledger)s, the bank's statement %(bank)s (minor units).")
            % {"date": statement.closing_date, "ledger": ledger, "bank": statement.closing_balance},
            amount=drift,
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
    brand = brand_for_reference(line.reference)
    if brand is None:
        # Never a brand's money until platform staff say whose it is.
        return _exception(
            line, Reason.UNKNOWN_LINE, _("Money came in with no brand's payment reference on it.")
        )
    posted = brand_deposit_record(
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


# Resolving exceptions: platform staff only; what moves money needs a second person above
# RECONCILIATION_SECOND_APPROVAL_MINOR; each resolution keeps who, who approved and why.

MONEY_MOVING = (Action.LINK, Action.SUSPENSE, Action.DEPOSIT)


def _resolved(
    exception: ReconciliationException, *, action: str, actor, note="", payout=None, tx=None, approved_by=None
):
    closed = ReconciliationException.objects.filter(pk=exception.pk, status=ExcStatus.OPEN).update(
        status=ExcStatus.RESOLVED, resolved_at=timezone.now()
    )
    if not closed:
        raise ReconciliationRefused(_("This exception has already been resolved."))
    Resolution.objects.create(
        exception=exception,
        action=action,
        actor=actor,
        approved_by=approved_by,
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
    brand: Brand | None = None,
    note: str = "",
) -> ReconciliationException:
    """Link the line to a payout, book it to suspense or as a brand's deposit (money that came in
    without the brand's reference), mark the payout re-paid, or clear an alert.

    Platform staff only, and always with a reason. Linking or booking to suspense above the
    second-approval amount is first proposed, then done when another staff member approves the
    same thing; until then the exception stays open (its proposal shows who asked for what)."""
    _staff_refuse(
        actor, "payouts.exception_resolve", _("Only platform staff resolve reconciliation exceptions.")
    )
    note = (note or "").strip()
    if not note:
        raise ReconciliationRefused(_("Say why: the reason is kept with the resolution."))
    if exception.status != ExcStatus.OPEN:
        raise ReconciliationRefused(_("This exception has already been resolved."))
    if (action == Action.CLEAR) != (exception.reason in ALERTS):
        raise ReconciliationRefused(
            _("An alert is cleared once checked; a statement line is linked, booked to suspense or re-paid.")
        )
    # What can be refused now is refused before anyone proposes it to a second person.
    if action == Action.DEPOSIT and brand is None:
        raise ReconciliationRefused(_("Choose the brand whose money it is."))
    if action == Action.LINK and payout is None:
        raise ReconciliationRefused(_("Choose a payout of this brand to link the line to."))
    if exception.proposed_by_id and action != exception.proposed_action:
        raise ReconciliationRefused(
            _("The second person approves what was proposed (%(action)s); nothing else.")
            % {"action": Action(exception.proposed_action).label}
        )
    try:
        if action in MONEY_MOVING and abs(exception.amount) > settings.RECONCILIATION_SECOND_APPROVAL_MINOR:
            return _second_person(
                exception, action=action, actor=actor, payout=payout, brand=brand, note=note
            )
        return _exception_resolve(
            exception, action=action, actor=actor, payout=payout, brand=brand, note=note
        )
    finally:
        # After the writes (each in its own durable transaction), so no reader caches the old numbers.
        numbers_forget([exception.brand_id, payout.brand_id if payout else None, brand.pk if brand else None])


def _second_person(exception, *, action, actor, payout, brand, note) -> ReconciliationException:
    """The first person's resolution is kept as a proposal; a second person's same resolution does it."""
    with transaction.atomic(durable=True):
        row = ReconciliationException.objects.select_for_update().get(pk=exception.pk)
        if row.status != ExcStatus.OPEN:
            raise ReconciliationRefused(_("This exception has already been resolved."))
        if row.proposed_by_id is None:
            row.proposed_action = action
            row.proposed_payout = payout
            row.proposed_brand = brand
            row.proposed_note = note[:500]
            row.proposed_by = actor
            row.proposed_at = timezone.now()
            row.save(
                update_fields=[
                    "proposed_action",
                    "proposed_payout",
                    "proposed_brand",
                    "proposed_note",
                    "proposed_by",
                    "proposed_at",
                ]
            )
            return row
        if row.proposed_by_id == actor.pk:
            raise ReconciliationRefused(_("A second person must approve a resolution you proposed."))
        asked = (action, payout.pk if payout else None, brand.pk if brand else None)
        if (row.proposed_action, row.proposed_payout_id, row.proposed_brand_id) != asked:
            raise ReconciliationRefused(
                _("The second person approves what was proposed (%(action)s); nothing else.")
                % {"action": Action(row.proposed_action).label}
            )
    return _exception_resolve(
        row,
        action=row.proposed_action,
        actor=row.proposed_by,
        payout=row.proposed_payout,
        brand=row.proposed_brand,
        note=f"{row.proposed_note} | {note}"[:500],
        approved_by=actor,
    )


def _exception_resolve(
    exception, *, action, actor, payout, note, brand=None, approved_by=None
) -> ReconciliationException:
    line = exception.line
    if action == Action.DEPOSIT:
        return _resolve_deposit(
            exception, line=line, brand=brand, actor=actor, note=note, approved_by=approved_by
        )
    if action == Action.LINK:
        return _resolve_link(
            exception, line=line, payout=payout, actor=actor, note=note, approved_by=approved_by
        )
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
                return _suspense_book(
                    exception, line, source, destination, actor=actor, note=note, approved_by=approved_by
                )
        except InsufficientFunds:
            raise ReconciliationRefused(
                _("The ledger's bank account does not hold this much; book the deposits first.")
            ) from None
    if action == Action.REPAID:
        if payout is not None and exception.brand_id and payout.brand_id != exception.brand_id:
            raise ReconciliationRefused(_("Choose a payout of this brand."))
        with transaction.atomic(durable=True):
            return _resolved(exception, action=action, actor=actor, note=note, payout=payout)
    if action == Action.CLEAR:
        with transaction.atomic(durable=True):
            return _resolved(exception, action=action, actor=actor, note=note)
    raise ReconciliationRefused(_("Choose how to resolve the exception."))


def _suspense_book(exception, line, source, destination, *, actor, note, approved_by=None):
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
    return _resolved(
        exception, action=Action.SUSPENSE, actor=actor, note=note, tx=posted.pk, approved_by=approved_by
    )


def _resolve_link(exception, *, line, payout, actor, note, approved_by=None):
    if line is None:
        raise ReconciliationRefused(_("There is no statement line to link."))
    # A line on the platform's statement names no brand until staff link it to a payout.
    if payout is None or (exception.brand_id and payout.brand_id != exception.brand_id):
        raise ReconciliationRefused(_("Choose a payout of this brand to link the line to."))
    if payout.currency != line.currency:
        raise ReconciliationRefused(
            _("The line is in %(line)s and the payout in %(payout)s: they cannot be the same money.")
            % {"line": line.currency, "payout": payout.currency}
        )
    _link_refuse_if_matched(line=line, payout=payout)
    if line.credit and payout.status in (*SENT, PayoutStatus.SETTLED):
        payout = payout_return(
            payout=payout, reason_code=line.return_reason or "MS03", detail="linked by platform staff"
        )
    elif not line.credit and payout.status in SENT:
        payout = payout_settle(payout=payout, bank_reference=line.entry_ref)
    with transaction.atomic(durable=True):
        Payout.objects.select_for_update().filter(pk=payout.pk).first()  # two members linking at once
        _link_refuse_if_matched(line=line, payout=payout)
        StatementLine.objects.filter(pk=line.pk).update(
            state=State.MATCHED, payout=payout, brand_id=payout.brand_id
        )
        ReconciliationException.objects.filter(pk=exception.pk).update(brand_id=payout.brand_id)
        return _resolved(
            exception, action=Action.LINK, actor=actor, note=note, payout=payout, approved_by=approved_by
        )


def _resolve_deposit(exception, *, line, brand, actor, note, approved_by=None):
    """Money that came in without a brand's reference, which staff found to be a brand's transfer
    (the bank's details, the brand's own statement): booked as its deposit, keyed like any other."""
    if line is None or not line.credit or line.kind != Kind.DEPOSIT:
        raise ReconciliationRefused(_("Only money that came in can be booked as a brand's deposit."))
    if brand is None:
        raise ReconciliationRefused(_("Choose the brand whose money it is."))
    if not brand.livemode:
        raise ReconciliationRefused(_("The bank's money is live: book it to the brand, not its test data."))
    posted = brand_deposit_record(
        brand=brand,
        amount=line.amount,
        currency=line.currency,
        bank_reference=line.entry_ref or line.dedupe_key[-32:],
        receiving_account=line.statement.account,
    )
    with transaction.atomic(durable=True):
        StatementLine.objects.filter(pk=line.pk).update(
            state=State.MATCHED, brand=brand, ledger_transaction_id=posted.pk
        )
        ReconciliationException.objects.filter(pk=exception.pk).update(brand=brand)
        return _resolved(
            exception, action=Action.DEPOSIT, actor=actor, note=note, tx=posted.pk, approved_by=approved_by
        )


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


def bank_statements_fetch() -> list[StatementImport]:
    """The scheduled fetch: every statement the bank issued since the last fetch, and every file
    the bank dropped in BANK_DROP_FOLDER, imported as the platform's own. A file seen before is
    skipped by its hash (and its lines would be known anyway)."""
    jobs = []
    if settings.SANDBOX:
        done = set(StatementImport.objects.filter(source=Channel.FEED).values_list("sha256", flat=True))
        for message in SandboxBankMessage.objects.filter(kind__startswith="camt.").order_by("pk"):
            data = bytes(message.xml)
            if hashlib.sha256(data).hexdigest() not in done:
                jobs.append(statement_import_create(data=data, filename=message.msg_id, channel=Channel.FEED))
    if settings.BANK_DROP_FOLDER:
        jobs += drop_folder_import(folder=Path(settings.BANK_DROP_FOLDER))
    return jobs


def drop_folder_import(*, folder: Path) -> list[StatementImport]:
    """The files (.xml) the bank wrote to its folder, oldest name first; a refused file is kept as a
    failed import, so it is reported once and not tried again."""
    done = set(StatementImport.objects.filter(source=Channel.FOLDER).values_list("sha256", flat=True))
    jobs = []
    for path in sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() == ".xml"):
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() in done:
            continue
        try:
            jobs.append(statement_import_create(data=data, filename=path.name, channel=Channel.FOLDER))
        except SchemaError as error:
            with transaction.atomic(durable=True):
                jobs.append(
                    StatementImport.objects.create(
                        source=Channel.FOLDER,
                        filename=path.name[:200],
                        data=data,
                        sha256=hashlib.sha256(data).hexdigest(),
                        status=StatementImportStatus.FAILED,
                        error=str(error)[:2000],
                        error_line=error.line,
                        finished_at=timezone.now(),
                    )
                )
    return jobs
