"""The JoyBack side of the benchmarks: reward postings that all debit one campaign budget.

Rewards go through the product's write path, joyback.ledger.services: postings_post() for the
batched form, transfer_post() for one posting at a time, each call inside the durable
transaction.atomic() a service opens. Synchronous commit stays on, so every commit is durable.

The workers are processes, not threads: each has its own interpreter, Django setup and database
connection, as gunicorn or django-q2 workers would, and none of them waits on another's GIL.
"""

import os
import time
from dataclasses import dataclass, field

REWARD = 150  # minor units: a 1.50 EUR reward
CURRENCY = "EUR"
BRAND_ID = 1
CAMPAIGN_ID = 1
FUNDING = 10**15  # enough for any run


def django_setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # Work the product queues goes to the broker, as in production; inline it would be timed too.
    os.environ.setdefault("Q_SYNC", "0")
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    import django

    django.setup()


@dataclass(frozen=True)
class Accounts:
    budget_id: int
    payable_ids: tuple[int, ...]


@dataclass
class WorkerReport:
    worker: int
    postings: int = 0
    errors: int = 0
    calls: int = 0
    started: float = 0.0  # time.monotonic(), one clock for every process on the machine
    ended: float = 0.0
    call_ms: list[float] = field(default_factory=list)
    first_error: str = ""


def accounts_setup(*, participants: int, history: int) -> Accounts:
    """Fund one campaign budget, open a payable per participant, and give the ledger a past.

    None of this is timed. The past (`history` rewards of an earlier campaign, written by SQL in
    one statement, balanced, and checked by the same deferred trigger at commit) makes the
    tables the size of a ledger in use, so the planner picks the plans it would in production:
    on a near-empty ledger_entry the balance trigger's cached plan is a sequential scan, and
    every commit would then get slower as the run adds rows.
    """
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.db import connection, transaction

    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from joyback.ledger.models import Account, AccountKind
    from joyback.ledger.services import account_get_or_create, transfer_post

    def budget_open(campaign: int) -> Account:
        return account_get_or_create(
            kind=AccountKind.CAMPAIGN_BUDGET,
            currency=CURRENCY,
            brand_id=BRAND_ID,
            subject=f"campaign:{campaign}",
            name=f"Bench campaign {campaign} budget",
        )

    with transaction.atomic(durable=True):
        # The brand's own balance account at the provider, where its deposits stay (not remembered
        # by the process as account_for would: the bench's next part starts on a fresh database).
        bank = account_get_or_create(
            kind=AccountKind.BRAND_BALANCE, currency=CURRENCY, brand_id=BRAND_ID, name="Bench balance account"
        )
        funding = account_get_or_create(
            kind=AccountKind.BRAND_FUNDING, currency=CURRENCY, brand_id=BRAND_ID, name="Bench brand funding"
        )
        past_budget, budget = budget_open(0), budget_open(CAMPAIGN_ID)
    with transaction.atomic(durable=True):
        transfer_post(
            source=bank,
            destination=funding,
            amount=2 * FUNDING,
            reason="deposit",
            idempotency_key="bench:deposit",
        )
    for campaign_budget in (past_budget, budget):
        with transaction.atomic(durable=True):
            transfer_post(
                source=funding,
                destination=campaign_budget,
                amount=FUNDING,
                reason="budget_fund",
                idempotency_key=f"bench:{campaign_budget.subject}",
                reference=campaign_budget.subject,
            )
    # Payables are opened one by one by account_get_or_create in the product; here thousands are
    # needed up front, so they are inserted in one go.
    payables = Account.objects.bulk_create(
        Account(
            kind=AccountKind.PARTICIPANT_PAYABLE,
            currency=CURRENCY,
            brand_id=BRAND_ID,
            subject=f"participant:{number}",
            name=f"Reward payable participant:{number}",
        )
        for number in range(participants)
    )
    history_insert(
        past_budget_id=past_budget.pk,
        payable_ids=[account.pk for account in payables],
        history=history,
        reference="campaign:0",
    )
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    return Accounts(budget_id=budget.pk, payable_ids=tuple(account.pk for account in payables))


def history_insert(*, past_budget_id: int, payable_ids: list[int], history: int, reference: str) -> None:
    """`history` balanced rewards from past_budget_id to the payables in turn, written by SQL in one
    durable transaction (the deferred balance trigger checks each at commit), balances updated.

    The payables' ids must be consecutive (as one bulk_create makes them)."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.db import connection, transaction

    first, count = min(payable_ids), len(payable_ids)
    if max(payable_ids) - first + 1 != count:
        raise ValueError("history_insert needs consecutive payable ids")
    with transaction.atomic(durable=True), connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO ledger_transaction (reason, description, reference, idempotency_key, fingerprint, "
            "posted_at, brand_id) "
            "SELECT 'reward', '', %s, 'history:' || %s || ':' || g, md5(g::text), now(), %s "
            "FROM generate_series(1, %s) AS g",
            [reference, reference, BRAND_ID, history],
        )
        cursor.execute(
            "INSERT INTO ledger_entry (transaction_id, account_id, amount, currency, brand_id) "
            "SELECT t.id, leg.account_id, leg.amount, %s, t.brand_id FROM ledger_transaction AS t, "
            "LATERAL (VALUES (%s::bigint, %s::bigint), (%s + t.id %% %s, -%s)) AS leg(account_id, amount) "
            "WHERE t.reference = %s AND t.reason = 'reward'",
            [CURRENCY, past_budget_id, REWARD, first, count, REWARD, reference],
        )
        # Liabilities keep their balance on the credit side: balance = -(sum of entries).
        cursor.execute(
            "UPDATE ledger_account AS a SET balance = a.balance - s.total FROM "
            "(SELECT e.account_id, sum(e.amount) AS total FROM ledger_entry e JOIN ledger_transaction t "
            "ON t.id = e.transaction_id WHERE t.reference = %s AND t.reason = 'reward' "
            "GROUP BY e.account_id) AS s WHERE a.id = s.account_id",
            [reference],
        )


def _load(accounts: Accounts):
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from joyback.ledger.models import Account

    by_id = Account.objects.in_bulk([accounts.budget_id, *accounts.payable_ids])
    return by_id[accounts.budget_id], [by_id[pk] for pk in accounts.payable_ids]


def _reward(budget, payable, key: str) -> dict:
    return {
        "source": budget,
        "destination": payable,
        "amount": REWARD,
        "reason": "reward",
        "idempotency_key": key,
        "reference": f"campaign:{CAMPAIGN_ID}",
    }


def _post_batch(rewards) -> tuple[int, int, str]:
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.db import transaction

    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from joyback.ledger.services import postings_post, transfer

    with transaction.atomic(durable=True):
        results = postings_post(postings=[transfer(**reward) for reward in rewards])
    posted = sum(1 for result in results if result.ok and not result.replayed)
    errors = [result for result in results if not result.ok]
    return posted, len(errors), str(errors[0].error) if errors else ""


def _post_one(reward) -> tuple[int, int, str]:
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.db import transaction

    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from joyback.ledger.services import LedgerError, transfer_post

    try:
        with transaction.atomic(durable=True):
            transfer_post(**reward)
    except LedgerError as error:
        return 0, 1, str(error)
    return 1, 0, ""


def rewards_post(
    *,
    accounts: Accounts,
    mode: str,
    worker: int,
    batch: int,
    seconds: float,
    calls: int | None = None,
    label: str = "",
    barrier=None,
) -> WorkerReport:
    """Post rewards for `seconds` (or `calls` calls); mode "batched" (postings_post) or "per_row"."""
    budget, payables = _load(accounts)
    report = WorkerReport(worker=worker)
    size = batch if mode == "batched" else 1
    # Each worker starts on its own stretch of participants, as separate requests would.
    cursor = worker * 499 % len(payables)
    sequence = 0

    def postings(count: int, tag: str):
        nonlocal cursor, sequence
        out = []
        for _ in range(count):
            out.append(_reward(budget, payables[cursor % len(payables)], f"reward:{tag}:{worker}:{sequence}"))
            cursor += 1
            sequence += 1
        return out

    def post(items):
        return _post_batch(items) if mode == "batched" else _post_one(items[0])

    label = label or mode
    post(postings(size, f"{label}-warmup"))  # first queries compile and cache before the clock runs
    if barrier is not None:
        barrier.wait()
    report.started = time.monotonic()
    deadline = report.started + seconds
    while time.monotonic() < deadline and (calls is None or report.calls < calls):
        items = postings(size, label)
        began = time.perf_counter()
        posted, errors, message = post(items)
        report.call_ms.append((time.perf_counter() - began) * 1000)
        report.calls += 1
        report.postings += posted
        report.errors += errors
        report.first_error = report.first_error or message
    report.ended = time.monotonic()
    return report


def worker_main(accounts, mode, worker, batch, seconds, barrier, queue) -> None:
    """Entry point of one spawned worker process."""
    try:
        django_setup()
        report = rewards_post(
            accounts=accounts,
            mode=mode,
            worker=worker,
            batch=batch,
            seconds=seconds,
            barrier=barrier,
        )
        # deferred: the bench sets Django up (its settings, per process) before importing apps
        from django.db import connections

        connections.close_all()
        queue.put(report)
    except BaseException as error:
        barrier.abort()
        queue.put(error)
        raise


def ledger_verify(*, accounts: Accounts) -> str:
    """The ledger still adds up after the run: a problem description, or "" when it does."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.db import connection

    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from joyback.ledger.models import NORMAL_DEBIT

    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT count(*) FROM ledger_account a
             WHERE a.balance <> (CASE WHEN a.kind = ANY(%s) THEN 1 ELSE -1 END)
                   * COALESCE((SELECT sum(e.amount) FROM ledger_entry e WHERE e.account_id = a.id), 0)
            """,
            [sorted(str(kind) for kind in NORMAL_DEBIT)],
        )
        (wrong_balances,) = cursor.fetchone()
        cursor.execute(
            "SELECT count(*) FROM (SELECT transaction_id FROM ledger_entry "
            "GROUP BY transaction_id, currency HAVING sum(amount) <> 0) t"
        )
        (unbalanced,) = cursor.fetchone()
        cursor.execute(
            "SELECT count(*) FROM ledger_transaction WHERE reason = 'reward' AND reference = %s",
            [f"campaign:{CAMPAIGN_ID}"],
        )
        (rewards,) = cursor.fetchone()
        cursor.execute("SELECT balance FROM ledger_account WHERE id = %s", [accounts.budget_id])
        (budget_balance,) = cursor.fetchone()
    problems = []
    if wrong_balances:
        problems.append(f"{wrong_balances} account balances differ from the sum of their entries")
    if unbalanced:
        problems.append(f"{unbalanced} transactions do not sum to zero")
    if budget_balance != FUNDING - rewards * REWARD:
        problems.append(f"budget balance {budget_balance} != {FUNDING} - {rewards} rewards x {REWARD}")
    return "; ".join(problems)
