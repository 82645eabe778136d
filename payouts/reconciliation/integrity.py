"""Integrity: the statements chain, and the ledger's bank agrees with the bank."""

from django.db import transaction
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from payouts.models import ReconciliationException, Statement
from payouts.models.reconciliation import ExceptionReason as Reason
from payouts.models.reconciliation import bank_drift_text
from payouts.reconciliation.bank_health import ledger_bank_balance


def statement_chain_check(statement: Statement) -> None:
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
            bank_drift_text(statement=statement, ledger=ledger, language=get_language() or "en"),
            amount=drift,
        )
