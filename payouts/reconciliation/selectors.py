"""Reads for the reconciliation dashboard, each scoped to one brand and each a fixed number of
queries whatever the number of payouts, lines or ledger entries."""

import datetime
from collections import defaultdict
from dataclasses import dataclass

from django.core.cache import cache
from django.db.models import Count, Sum
from django.db.models.functions import TruncWeek
from django.utils import timezone

from campaigns.models import Brand, Campaign
from joyback.ledger.models import Account, AccountKind, Entry, normal_sign
from payouts.models import Payout, ProviderDeposit, ReconciliationException, StatementLine, VirtualAccount
from payouts.models.funding import ProviderDepositStatus
from payouts.models.payouts import PayoutStatus
from payouts.models.reconciliation import ExceptionStatus
from payouts.models.reconciliation import LineKind as Kind
from payouts.models.reconciliation import LineState as State
from payouts.reconciliation.references import brand_for_reference
from verification.models import ActionClaim, ClaimStatus

NUMBERS_SECONDS = 15


def numbers_key(brand_id: int) -> str:
    return f"reconciliation:numbers:{brand_id}"


def dashboard_numbers(*, brand: Brand) -> tuple[list[dict], list[dict]]:
    """The tiles and the drift: aggregates over every payout and deposit of the brand, kept for a
    few seconds (the page refreshes itself every ten) and forgotten when a statement or a
    resolution changes them."""

    def numbers():
        money = brand_money(brand=brand)
        return summary_tiles(brand=brand, money=money), drift(brand=brand, money=money)

    return cache.get_or_set(numbers_key(brand.pk), numbers, NUMBERS_SECONDS)


@dataclass(frozen=True)
class BrandMoney:
    """The aggregates both the tiles and the drift start from, read once per page."""

    accounts: list[tuple[str, str, int, int]]  # kind, currency, balance, held
    deposits: dict[str, int]  # currency -> the funding account's deposit credits (negative)
    payouts: dict[tuple[str, str], int]  # (status, currency) -> total, settled and returned


def brand_money(*, brand: Brand) -> BrandMoney:
    deposits = (
        Entry.objects.filter(
            account__brand_id=brand.pk, account__kind=AccountKind.BRAND_FUNDING, transaction__reason="deposit"
        )
        .values_list("currency")
        .annotate(total=Sum("amount"))
    )
    payouts = (
        Payout.objects.filter(brand=brand, status__in=[PayoutStatus.SETTLED, PayoutStatus.RETURNED])
        .values_list("status", "currency")
        .annotate(total=Sum("amount"))
    )
    return BrandMoney(
        accounts=list(
            Account.objects.filter(brand_id=brand.pk).values_list("kind", "currency", "balance", "held")
        ),
        deposits=dict(deposits),
        payouts={(status, currency): total for status, currency, total in payouts},
    )


def summary_tiles(*, brand: Brand, money: BrandMoney | None = None) -> list[dict]:
    """Funded, reserved, paid, in transit, returned and unmatched, per currency (four queries)."""
    money = money or brand_money(brand=brand)
    tiles = defaultdict(lambda: defaultdict(int))
    for kind, currency, balance, held in money.accounts:
        if kind in (AccountKind.BRAND_FUNDING, AccountKind.CAMPAIGN_BUDGET):
            tiles[currency]["available"] += balance - held
            tiles[currency]["reserved"] += held
        elif kind == AccountKind.PAYOUT_IN_TRANSIT:
            tiles[currency]["in_transit"] += balance
    for currency, total in money.deposits.items():
        tiles[currency]["funded"] += -total  # a liability grows with credits
    for (status, currency), total in money.payouts.items():
        tiles[currency]["paid" if status == PayoutStatus.SETTLED else "returned"] += total
    for currency, count, total in (
        ReconciliationException.objects.filter(brand=brand, status=ExceptionStatus.OPEN)
        .values_list("currency")
        .annotate(count=Count("pk"), total=Sum("amount"))
    ):
        tiles[currency]["unmatched"] += count
        tiles[currency]["unmatched_amount"] += total or 0
    return [{"currency": currency, **values} for currency, values in sorted(tiles.items())]


def exceptions_open(*, brand: Brand, limit: int = 50) -> list[ReconciliationException]:
    return list(
        ReconciliationException.objects.filter(brand=brand, status=ExceptionStatus.OPEN)
        .select_related("line", "payout", "statement")
        .order_by("-pk")[:limit]
    )


def exceptions_resolved(*, brand: Brand, limit: int = 20) -> list[ReconciliationException]:
    return list(
        ReconciliationException.objects.filter(brand=brand, status=ExceptionStatus.RESOLVED)
        .select_related("line", "payout", "statement")
        .prefetch_related("resolutions__actor")
        .order_by("-resolved_at", "-pk")[:limit]
    )


def drift(*, brand: Brand, money: BrandMoney | None = None) -> list[dict]:
    """The brand's money at the bank as the ledger sees it, against what the bank's statements
    show, per currency; and what explains the difference.

    Ledger side: everything the brand's accounts hold (funding, budgets, what is owed to people,
    payouts in transit, suspense) is money that should still be at the bank for that brand.
    Bank side: the brand's matched statement lines (deposits in, payouts out, returns back).
    """
    money = money or brand_money(brand=brand)
    rows = defaultdict(lambda: defaultdict(int))
    for kind, currency, balance, _held in money.accounts:
        # Liabilities to the brand and its people count for the bank, receivables against it.
        rows[currency]["ledger"] += balance * -normal_sign(kind)
        if kind == AccountKind.PAYOUT_IN_TRANSIT:
            rows[currency]["in_transit"] += balance
        if kind == AccountKind.SUSPENSE:
            rows[currency]["suspense"] += balance
    for kind, currency, credit, total in (
        StatementLine.objects.filter(brand=brand, state=State.MATCHED)
        .exclude(kind=Kind.BATCH)
        .values_list("kind", "currency", "credit")
        .annotate(total=Sum("amount"))
    ):
        rows[currency]["statement"] += total if credit else -total
        rows[currency]["deposits_on_statement" if kind == Kind.DEPOSIT else "payouts_on_statement"] += (
            total if credit else -total
        )
    for currency, total in money.deposits.items():
        rows[currency]["deposits_in_ledger"] += -total
    for (status, currency), total in money.payouts.items():
        if status == PayoutStatus.SETTLED:
            rows[currency]["payouts_in_ledger"] += -total
    result = []
    for currency, row in sorted(rows.items()):
        difference = row["ledger"] - row["statement"]
        deposits_missing = row["deposits_in_ledger"] - row["deposits_on_statement"]
        payouts_missing = row["payouts_in_ledger"] - row["payouts_on_statement"]
        # Money the ledger knows that no matched line shows: deposits booked without a statement
        # line (by hand, in the sandbox), payouts paid without one yet, and lines put on suspense.
        explained = deposits_missing + payouts_missing + row["suspense"]
        result.append(
            {
                "currency": currency,
                "ledger": row["ledger"],
                "statement": row["statement"],
                "difference": difference,
                "deposits_missing": deposits_missing,
                "payouts_missing": payouts_missing,
                "in_transit": row["in_transit"],
                "suspense": row["suspense"],
                "unexplained": difference - explained,
            }
        )
    return result


def campaign_spend(*, brand: Brand, weeks: int = 12) -> list[dict]:
    """Per campaign and week: rewards approved (spend), verified actions, and cost per action."""
    since = timezone.localdate() - datetime.timedelta(weeks=weeks)
    rows = (
        ActionClaim.objects.filter(
            campaign__brand=brand, status=ClaimStatus.APPROVED, created_at__date__gte=since
        )
        .annotate(week=TruncWeek("created_at"))
        .values_list("campaign_id", "week", "currency")
        .annotate(spend=Sum("amount"), actions=Count("pk"))
        .order_by("campaign_id", "week")
    )
    names = dict(Campaign.objects.filter(brand=brand).values_list("pk", "name"))
    charts = defaultdict(list)
    for campaign_id, week, currency, spend, actions in rows:
        charts[campaign_id].append(
            {
                "week": week.date() if hasattr(week, "date") else week,
                "currency": currency,
                "spend": spend,
                "actions": actions,
                "cost_per_action": spend // actions if actions else 0,
            }
        )
    result = []
    for campaign_id, points in charts.items():
        top = max(point["spend"] for point in points) or 1
        for point in points:
            point["height"] = max(2, int(100 * point["spend"] / top))
        result.append({"campaign": names.get(campaign_id, campaign_id), "points": points})
    return result


def deposits_evidence(*, brand: Brand, limit: int = 50) -> list[StatementLine]:
    """The brand's deposits as the bank booked them: the platform statement line behind each."""
    return list(
        StatementLine.objects.filter(brand=brand, kind=Kind.DEPOSIT, state=State.MATCHED)
        .select_related("statement")
        .order_by("-booking_date", "-pk")[:limit]
    )


def payouts_evidence(payouts: list[Payout]) -> None:
    """Each payout gets `bank_line` (the debit that paid it) and `bank_return` (the credit that
    brought it back), the platform statement lines that prove what happened to it; one query."""
    by_payout = defaultdict(dict)
    for line in (
        StatementLine.objects.filter(payout__in=[p.pk for p in payouts], state=State.MATCHED)
        .exclude(kind=Kind.BATCH)
        .order_by("pk")
    ):
        by_payout[line.payout_id].setdefault("bank_return" if line.credit else "bank_line", line)
    for payout in payouts:
        payout.bank_line = by_payout[payout.pk].get("bank_line")
        payout.bank_return = by_payout[payout.pk].get("bank_return")


@dataclass(frozen=True)
class ComparedTransfer:
    booking_date: datetime.date | None
    amount: int
    currency: str
    reference: str
    # What the provider booked on the brand's own virtual account for it: its day and transfer id.
    arrived_on: datetime.date | None = None
    arrived_ref: str = ""

    @property
    def arrived(self) -> bool:
        return bool(self.arrived_ref)


COMPARE_DAYS = 7  # a SEPA transfer is booked on our side within a few banking days


def _iban(text: str) -> str:
    return "".join(text.split()).upper()


def statement_compare(*, brand: Brand, parsed) -> list[ComparedTransfer]:
    """The brand's own statement (already read) against what the payment provider booked on the
    brand's own virtual account (its deposits, from the provider's webhooks): each transfer the
    brand sent to its virtual IBAN (or with its old funding reference, to the platform's account,
    which never arrives as its funding), and the deposit that shows it arrived, or none. Only this
    brand's deposits are looked at. Reads only: a brand's file is never the bank's word on anything."""
    ibans = {
        _iban(iban)
        for iban in VirtualAccount.objects.filter(brand=brand, brand__livemode=True)
        .exclude(iban="")
        .values_list("iban", flat=True)
    }
    sent = [
        line
        for block in parsed.statements
        for line in block.lines
        if not line.credit
        and line.entry_status == "BOOK"
        and (
            _iban(line.counterparty_iban) in ibans
            if line.counterparty_iban
            else brand_for_reference(line.reference) == brand
        )
    ]
    deposits = list(
        ProviderDeposit.objects.filter(brand=brand, status=ProviderDepositStatus.BOOKED).order_by(
            "created_at", "pk"
        )
    )
    used = set()
    result = []
    for line in sorted(sent, key=lambda found: (found.booking_date or datetime.date.min, found.amount)):
        arrived = None
        # Money sent to the platform's account (no IBAN of the brand's named) never funds the brand.
        candidates = deposits if _iban(line.counterparty_iban) in ibans else []
        for deposit in candidates:
            if deposit.pk in used or (deposit.amount, deposit.currency) != (line.amount, line.currency):
                continue
            if line.booking_date:
                days = (timezone.localdate(deposit.created_at) - line.booking_date).days
                if not -1 <= days <= COMPARE_DAYS:
                    continue
            arrived = deposit
            used.add(deposit.pk)
            break
        result.append(
            ComparedTransfer(
                line.booking_date,
                line.amount,
                line.currency,
                line.reference[:140],
                timezone.localdate(arrived.created_at) if arrived else None,
                arrived.transfer_id if arrived else "",
            )
        )
    return result
