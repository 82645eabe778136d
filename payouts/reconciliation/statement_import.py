"""Importing bank statements: from the bank's feed, its drop folder, or a staff upload a second
staff member approves; read whole, then written line by line keyed by the bank's reference."""

import hashlib
import logging
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models.functions import Length
from django.utils import timezone
from django.utils.translation import gettext as _

from joyback.queue import enqueue_on_commit
from joyback.safety import sandbox_bank_live_refusal
from joyback.users.four_eyes import second_person_refusal
from payouts import sql
from payouts.iso20022.camt import camt_read, entry_count, message_detect
from payouts.iso20022.types import SchemaError
from payouts.models import ExceptionResolution as Resolution
from payouts.models import SandboxBankMessage, Statement, StatementImport, StatementLine
from payouts.models.reconciliation import LineState as State
from payouts.models.reconciliation import ResolutionAction as Action
from payouts.models.reconciliation import StatementImportStatus
from payouts.models.transitions import STATEMENT_IMPORT, state_step
from payouts.reconciliation.exceptions import numbers_forget
from payouts.reconciliation.integrity import bank_drift_check, statement_chain_check
from payouts.reconciliation.matching import lines_match, payouts_unreconciled_flag
from payouts.reconciliation.rules import ReconciliationRefused, staff_permission_check

logger = logging.getLogger(__name__)


class Channel:
    """Where a statement came from; each of them is the bank's word."""

    FEED = "feed"  # fetched from the bank / PSP on a schedule (in the sandbox: the sandbox bank)
    FOLDER = "folder"  # a file the bank wrote to the drop folder
    STAFF = "staff"  # uploaded by platform staff, booked once a second staff member approves


CHANNELS = (Channel.FEED, Channel.FOLDER, Channel.STAFF)


def _sync_limit() -> int:
    return getattr(settings, "STATEMENT_SYNC_BYTES", 2 * 1024 * 1024)


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
        staff_permission_check(
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
            data=b"",
            sha256=hashlib.sha256(data).hexdigest(),
            message=message,
            total=entry_count(data),
            status=STATEMENT_IMPORT.step("hand_in_held" if waits else "hand_in").target,
        )
        sql.statement_file_store(import_id=job.pk, data=data)
        job.data = data
        if large and not waits:
            enqueue_on_commit("payouts.reconciliation.tasks.statement_import_task", job.pk)
    if not large and not waits:
        statement_import_run(import_id=job.pk)
        _progress_refresh(job)
    return job


def statement_import_approve(*, import_id: int, approver) -> StatementImport:
    """A second staff member approves a file staff uploaded: only now does it book anything."""
    staff_permission_check(
        approver,
        "payouts.statement_approve",
        _("Only platform staff with the approval permission may approve a statement."),
    )
    job = StatementImport.objects.defer("data").annotate(size=Length("data")).filter(pk=import_id).first()
    if job is None or job.status != StatementImportStatus.AWAITING:
        raise ReconciliationRefused(_("This statement is not waiting for approval."))
    if job.uploaded_by_id == approver.pk:
        raise ReconciliationRefused(_("A second person must approve a statement you uploaded yourself."))
    refusal = second_person_refusal(first=job.uploaded_by, second=approver)
    if refusal:
        raise ReconciliationRefused(refusal)
    with transaction.atomic(durable=True):
        claimed = state_step(
            STATEMENT_IMPORT,
            StatementImport.objects.filter(pk=import_id).exclude(uploaded_by=approver),
            "approve",
            approved_by=approver,
            approved_at=timezone.now(),
        )
        if not claimed:
            raise ReconciliationRefused(_("This statement is not waiting for approval."))
        large = job.size > _sync_limit()
        if large:
            enqueue_on_commit("payouts.reconciliation.tasks.statement_import_task", import_id)
    if not large:
        statement_import_run(import_id=import_id)
    job.refresh_from_db(fields=["status", "approved_by", "approved_at", "matched", "exceptions", "error"])
    return job


def statement_import_decline(*, import_id: int, actor, note: str) -> StatementImport:
    """A second staff member refuses a file staff uploaded: it books nothing, ever; the why is kept."""
    staff_permission_check(
        actor,
        "payouts.statement_approve",
        _("Only platform staff with the approval permission may decline a statement."),
    )
    if not note.strip():
        raise ReconciliationRefused(_("Say why the statement is declined."))
    with transaction.atomic(durable=True):
        declined = state_step(
            STATEMENT_IMPORT,
            StatementImport.objects.filter(pk=import_id),
            "decline",
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
    claimed = state_step(STATEMENT_IMPORT, StatementImport.objects.filter(pk=import_id), "run")
    job = StatementImport.objects.defer("data").get(pk=import_id)
    if not claimed:
        return job

    def progress(read: int) -> None:
        # Reading is the first half of the bar, matching the second.
        StatementImport.objects.filter(pk=import_id).update(processed=read // 2)

    try:
        parsed = camt_read(sql.statement_file(import_id=import_id), progress=progress)
        _totals_check(parsed)
    except SchemaError as error:
        state_step(
            STATEMENT_IMPORT,
            StatementImport.objects.filter(pk=import_id),
            "fail",
            error=str(error)[:2000],
            error_line=error.line,
            finished_at=timezone.now(),
        )
        job.refresh_from_db()
        return job
    total = parsed.line_count
    new_line_ids, confirmed = _lines_write(job, parsed)
    StatementImport.objects.filter(pk=import_id).update(
        total=total, processed=total // 2, new_lines=len(new_line_ids), known_lines=total - len(new_line_ids)
    )
    matched, exceptions = lines_match(
        line_ids=new_line_ids, import_id=import_id, offset=total // 2, matched=confirmed
    )
    payouts_unreconciled_flag()
    for statement in Statement.objects.filter(statement_import_id=import_id, closing_balance__isnull=False):
        bank_drift_check(statement=statement)
    numbers_forget(
        StatementLine.objects.filter(statement__statement_import_id=import_id)
        .exclude(brand_id=None)
        .values_list("brand_id", flat=True)
        .distinct()
    )
    state_step(
        STATEMENT_IMPORT,
        StatementImport.objects.filter(pk=import_id),
        "finish",
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


def _lines_write(job: StatementImport, parsed) -> tuple[list[int], int]:
    """Write the statements and their new lines in one transaction: (the ids of the new lines, how
    many of them were written matched, confirming a settled payout; sql.statement_lines_copy)."""
    # Every booking statement is the platform's own (brand None); "0" keeps the keys of lines
    # imported before brands stopped handing in statements.
    scope = "0"
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
            statement_chain_check(statement)
            rows = [_line_values(statement.pk, None, scope, block.account, line) for line in block.lines]
            copied.append(rows)
        ids, confirmed, resolved = sql.statement_lines_copy(
            (row for rows in copied for row in rows), _LINE_COLUMNS
        )
        Resolution.objects.bulk_create(
            [
                Resolution(exception_id=pk, action=Action.LINK, note="matched by a statement line")
                for pk in resolved
            ]
        )
        return ids, confirmed


def bank_statements_fetch() -> list[StatementImport]:
    """The scheduled fetch: every statement the bank issued since the last fetch, and every file
    the bank dropped in BANK_DROP_FOLDER, imported as the platform's own. A file seen before is
    skipped by its hash (and its lines would be known anyway)."""
    jobs = []
    refusal = sandbox_bank_live_refusal() if settings.SANDBOX else ""
    if refusal:
        logger.error("sandbox bank feed not read: %s", refusal)
    if settings.SANDBOX and not refusal:
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
                        status=STATEMENT_IMPORT.step("refuse_unread").target,
                        error=str(error)[:2000],
                        error_line=error.line,
                        finished_at=timezone.now(),
                    )
                )
    return jobs
