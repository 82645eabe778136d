"""The bank channel's health: the ledger's bank against the bank's, open alerts, and whether moves
from the platform's account are paused; read by the health checks, the metrics and custody_move."""

import datetime
from datetime import timedelta

from django.conf import settings
from django.db.models import Count, Q, Sum
from django.utils import timezone

from joyback.ledger.models import AccountKind, Entry
from joyback.metrics import gauge
from payouts.models import ReconciliationException, Statement
from payouts.models.reconciliation import ExceptionReason, ExceptionStatus


def reconciliation_metrics():
    """For GET /metrics: open reconciliation exceptions, and per platform bank account the drift
    between the ledger's platform bank and the bank's newest statement closing balance."""
    open_ = (
        ReconciliationException.objects.filter(status=ExceptionStatus.OPEN)
        .values_list("reason")
        .annotate(n=Count("pk"))
        .order_by()
    )
    yield gauge("joyback_reconciliation_exceptions_open", "Open reconciliation exceptions", ["reason"], open_)
    yield gauge(
        "joyback_statement_drift_minor",
        "The ledger's platform bank minus the bank's newest closing balance, per account (minor units)",
        ["account", "currency"],
        [(row["account"], row["currency"], row["drift"]) for row in bank_drift_now()],
    )
    yield gauge(
        "joyback_platform_moves_paused",
        "1 while an open bank drift above BANK_DRIFT_PAUSE_MINOR holds moves from the platform's account",
        [],
        [(int(platform_moves_paused()),)],
    )


def ledger_bank_balance(*, currency: str, as_of=None) -> int:
    """The ledger's platform bank in `currency`: now, or at the end of the day `as_of`."""
    # The live bank only: the sandbox bank's play money is on its own, test-mode account.
    entries = Entry.objects.filter(
        account__kind=AccountKind.PLATFORM_BANK, account__currency=currency, account__livemode=True
    )
    if as_of is not None:
        end = timezone.make_aware(datetime.datetime.combine(as_of + timedelta(days=1), datetime.time.min))
        entries = entries.filter(transaction__posted_at__lt=end)
    return entries.aggregate(total=Sum("amount"))["total"] or 0


def bank_alerts_open():
    """Open alerts about the bank account as a whole: a broken chain of statements, or the
    ledger's bank differing from the bank's (newest first)."""
    return ReconciliationException.objects.filter(
        status=ExceptionStatus.OPEN,
        reason__in=[
            ExceptionReason.SEQUENCE_GAP,
            ExceptionReason.OPENING_MISMATCH,
            ExceptionReason.BANK_DRIFT,
        ],
    ).order_by("-pk")


def platform_moves_paused() -> bool:
    """An open drift above BANK_DRIFT_PAUSE_MINOR holds what leaves the platform's own account (the
    custody moves of money legacy brands pooled there) until staff clear it: while the ledger and
    the bank disagree, nobody knows how much of it there is to move. Brands' payouts leave their
    own balance accounts at the provider, each reconciled on its own (brands_custody_blocked): the
    platform's drift does not hold them."""
    limit = settings.BANK_DRIFT_PAUSE_MINOR
    return (
        ReconciliationException.objects.filter(reason=ExceptionReason.BANK_DRIFT, status=ExceptionStatus.OPEN)
        .filter(Q(amount__gt=limit) | Q(amount__lt=-limit))
        .exists()
    )


def bank_drift_now() -> list[dict]:
    """Per bank account, its newest statement's closing balance against the ledger's platform bank
    at the end of that day, recomputed now (ledger_check's view, whatever alerts say)."""
    rows = []
    accounts = (
        Statement.objects.filter(closing_balance__isnull=False, closing_date__isnull=False)
        .values_list("account", flat=True)
        .distinct()
    )
    for account in accounts:
        newest = (
            Statement.objects.filter(
                account=account, closing_balance__isnull=False, closing_date__isnull=False
            )
            .order_by("-closing_date", "-sequence", "-pk")
            .first()
        )
        ledger = ledger_bank_balance(currency=newest.currency, as_of=newest.closing_date)
        rows.append(
            {
                "account": account,
                "currency": newest.currency,
                "date": newest.closing_date,
                "bank": newest.closing_balance,
                "ledger": ledger,
                "drift": ledger - newest.closing_balance,
            }
        )
    return rows


def bank_alert_problems() -> list[str]:
    """What /healthz/ and the admin report: the bank alerts staff have not cleared yet."""
    return [f"BANK ALERT #{alert.pk} {alert.reason}: {alert.detail}" for alert in bank_alerts_open()[:20]]


def bank_drift_problems() -> list[str]:
    """What ledger_check reports: drift recomputed now, whatever was cleared, and open alerts."""
    problems = [
        f"BANK DRIFT {row['account']} {row['currency']} on {row['date']}: ledger {row['ledger']}, "
        f"bank {row['bank']}, drift {row['drift']}"
        for row in bank_drift_now()
        if row["drift"]
    ]
    return problems + bank_alert_problems()
