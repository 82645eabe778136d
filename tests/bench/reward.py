"""Instant action -> reward posted: the latency of verification.services.rewards.action_reward().

A WhatsApp opt-in is an instant action: once the person's identity is verified, action_reward()
locks the campaign's rule, checks that the campaign is open and the caps, looks for fraud
signals, creates the claim and posts the reward (campaign budget -> the person's payable, opened
on their first reward) in one durable transaction. A call returns once that transaction has
committed, so its duration is the time from "identity verified" to "reward posted".

One live whatsapp_reward campaign, made through the services (brand, deposit, campaign, funding,
going live), and one verified WhatsApp identity per reward (participant_create + identity_attach):
a person is rewarded once per rule, so every call is a new person. The ledger already holds
--history rewards of an earlier campaign, as one in use would (see ledger.history_insert).

- sequential: one process, one call after another, nothing else running.
- concurrent: --workers processes at once, all on the same campaign: they queue on the rule's
  row lock and the budget's account row, which is the hot case of a campaign going viral.

Each run also counts the CPU the calls cost: the calling process's (time.process_time) and its
PostgreSQL backend's (utime + stime in /proc/<pid>/stat of pg_backend_pid(), the server being on
this machine), read before and after the timed calls; per reward, the sequential run's is the
reward_cpu_per_reward line. Then, with --reward-rate, approvals at that rate through the whole
product, paid by the standing worker (tests/bench/payout.py's sustained_run): the rate reached and
approval -> bank.

Workers are spawned processes (their own interpreter, Django setup and connection, as gunicorn or
django-q2 workers would be). Each makes one untimed call first, then they start together.
"""

import multiprocessing
import os
import queue as queues
import time
from dataclasses import dataclass, field

from tests.bench.server import BenchSetupError, Server, percentile

# The campaign-velocity fraud signal (FRAUD_CAMPAIGN_CLAIMS_PER_MINUTE, 1000 by default) sends
# every claim past that many a minute on one campaign to the review queue, with its reward held
# rather than posted. The runs here go past it on purpose (the latency of posting is what is
# measured), so the workers raise it; the notes say how fast the runs claimed.
VELOCITY_LIMIT = 10**9
PAST_PAYABLES = 4000


@dataclass(frozen=True)
class Setup:
    campaign_id: int
    rule_id: int
    budget_id: int
    funded: int
    reward: int
    warmup_ids: tuple[int, ...]
    sequential_ids: tuple[int, ...]
    concurrent_ids: tuple[int, ...]


@dataclass
class Report:
    worker: int
    started: float = 0.0  # time.monotonic(), one clock for every process on the machine
    ended: float = 0.0
    call_ms: list[float] = field(default_factory=list)
    not_posted: list[str] = field(default_factory=list)
    cpu_seconds: float = 0.0  # this process over the timed calls (time.process_time)
    backend_cpu_seconds: float = 0.0  # its PostgreSQL backend over the timed calls (/proc, utime+stime)


def setup(*, sequential: int, concurrent: int, workers: int, history: int) -> Setup:
    """The campaign, its past, and the verified identities; nothing here is timed."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.contrib.auth import get_user_model
    from django.db import connection, connections, transaction

    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from campaigns.services.brands import brand_create
    from campaigns.services.campaigns import campaign_create, campaign_transition
    from campaigns.services.funding import campaign_budget_account, campaign_fund
    from joyback.ledger.models import Account, AccountKind
    from tests.bench import ledger
    from tests.conftest import fund, verified
    from verification.services.participants import identity_attach, participant_create

    owner = get_user_model().objects.create_user(
        email="reward-owner@bench.localhost", password="bench-owner-pw"
    )
    brand = brand_create(name="Bench Reward Brand", slug="bench-reward-brand", owner=owner, currency="EUR")
    verified(brand)  # funding and payouts are open to verified brands only
    people = workers + sequential + concurrent + 1
    past_total = history * ledger.REWARD
    budget = 100 * people * 2_00  # far more than the runs pay out
    fund(brand, past_total + budget, "EUR", reference="BENCH-REWARD")
    common = dict(brand=brand, package="whatsapp_reward", currency="EUR", countries=["DE"], languages=["en"])

    # The ledger's past: an earlier campaign's rewards to earlier participants, written by SQL.
    past = campaign_create(name="Bench Spring Club", slug="bench-reward-past", **common)
    campaign_fund(campaign=past, amount=past_total)
    payables = Account.objects.bulk_create(
        Account(
            kind=AccountKind.PARTICIPANT_PAYABLE,
            currency="EUR",
            brand_id=brand.pk,
            subject=f"participant:past-{number}",
            name=f"Rewards owed to past participant {number}",
        )
        for number in range(PAST_PAYABLES)
    )
    ledger.history_insert(
        past_budget_id=campaign_budget_account(campaign=past).pk,
        payable_ids=[account.pk for account in payables],
        history=history,
        reference=past.budget_subject,
    )

    campaign = campaign_create(
        name="Bench Summer Club",
        slug="bench-reward",
        headline="Join our WhatsApp club, get 2 EUR",
        **common,
    )
    campaign_fund(campaign=campaign, amount=budget)
    campaign = campaign_transition(campaign=campaign, to="live")
    rule = campaign.rules.get(trigger="whatsapp_optin")
    identity_ids = []
    for start in range(0, people, 500):
        with transaction.atomic():  # the services' own atomic blocks become savepoints
            for number in range(start, min(start + 500, people)):
                person = participant_create(brand=brand)
                identity = identity_attach(
                    participant=person,
                    provider="whatsapp",
                    subject=f"49160{number:08d}",
                    display_name=f"Bench Person {number}",
                )
                identity_ids.append(identity.pk)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    connections.close_all()
    first = workers + 1
    return Setup(
        campaign_id=campaign.pk,
        rule_id=rule.pk,
        budget_id=campaign_budget_account(campaign=campaign).pk,
        funded=budget,
        reward=rule.reward_amount,
        warmup_ids=tuple(identity_ids[:first]),
        sequential_ids=tuple(identity_ids[first : first + sequential]),
        concurrent_ids=tuple(identity_ids[first + sequential : first + sequential + concurrent]),
    )


def rewards_claim(*, rule_id: int, identity_ids, warmup_id: int, worker: int, barrier=None) -> Report:
    """action_reward() for each identity in turn, each call timed; after one untimed call."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.db import connection

    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from verification.models import ActionRule, ClaimStatus, Identity
    from verification.services.refusals import ClaimRefused
    from verification.services.rewards import ClaimContext, action_reward

    rule = ActionRule.objects.select_related("campaign").get(pk=rule_id)
    by_id = Identity.objects.select_related("participant").in_bulk([warmup_id, *identity_ids])
    report = Report(worker=worker)

    def claim(identity) -> str:
        """ "" when the reward was posted, else what happened instead."""
        try:
            done = action_reward(rule=rule, identity=identity, context=ClaimContext())
        except ClaimRefused as refusal:
            return f"refused: {refusal.code}"
        if done.status != ClaimStatus.APPROVED or not done.ledger_transaction_id:
            return f"{done.status}: {done.reason}"
        return ""

    problem = claim(by_id[warmup_id])  # the first queries connect, compile and cache untimed
    if problem:
        report.not_posted.append(problem)
    with connection.cursor() as cursor:  # the backend whose CPU the calls cost on PostgreSQL's side
        cursor.execute("SELECT pg_backend_pid()")
        backend = str(cursor.fetchone()[0])
    if barrier is not None:
        barrier.wait()
    report.started = time.monotonic()
    cpu, backend_cpu = time.process_time(), backend_seconds(backend)
    for identity_id in identity_ids:
        began = time.perf_counter()
        problem = claim(by_id[identity_id])
        report.call_ms.append((time.perf_counter() - began) * 1000)
        if problem:
            report.not_posted.append(problem)
    report.ended = time.monotonic()
    report.cpu_seconds = time.process_time() - cpu
    report.backend_cpu_seconds = backend_seconds(backend) - backend_cpu
    return report


def backend_seconds(pid: str) -> float:
    """CPU seconds a PostgreSQL backend of this machine has used (utime + stime), or NaN when its
    /proc entry cannot be read (a server elsewhere)."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from tests.bench import web

    stat = web._stat(pid)
    return stat[2] if stat else float("nan")


def worker_main(rule_id, identity_ids, warmup_id, worker, barrier, results) -> None:
    """Entry point of one spawned worker process."""
    try:
        os.environ["FRAUD_CAMPAIGN_CLAIMS_PER_MINUTE"] = str(VELOCITY_LIMIT)
        # deferred: the bench sets Django up (its settings, per process) before importing apps
        from tests.bench import ledger

        ledger.django_setup()
        report = rewards_claim(
            rule_id=rule_id, identity_ids=identity_ids, warmup_id=warmup_id, worker=worker, barrier=barrier
        )
        # deferred: the bench sets Django up (its settings, per process) before importing apps
        from django.db import connections

        connections.close_all()
        results.put(report)
    except BaseException as error:
        barrier.abort()
        results.put(error)
        raise


def run(
    plan: Setup, identity_ids: tuple[int, ...], warmup_ids: tuple[int, ...], *, workers: int, label: str
) -> tuple[float, list[Report]]:
    """Spawn `workers` processes sharing identity_ids (each with its own warm-up identity), start
    them together; (wall seconds, reports)."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(workers, timeout=120)
    results = context.Queue()
    shares = [identity_ids[worker::workers] for worker in range(workers)]
    processes = [
        context.Process(
            target=worker_main,
            args=(plan.rule_id, shares[worker], warmup_ids[worker], worker, barrier, results),
            name=f"bench-reward-{label}-{worker}",
        )
        for worker in range(workers)
    ]
    for process in processes:
        process.start()
    reports = []
    deadline = time.monotonic() + 600
    try:
        while len(reports) < workers:
            try:
                item = results.get(timeout=1)
            except queues.Empty:
                dead = [p for p in processes if p.exitcode not in (None, 0)]
                if dead:  # died before it could say why (e.g. while starting)
                    raise BenchSetupError(f"{dead[0].name} exited with {dead[0].exitcode}") from None
                if time.monotonic() > deadline:
                    raise BenchSetupError(f"the {label} reward workers did not report back in time") from None
                continue
            if isinstance(item, BaseException):
                raise BenchSetupError(f"a {label} reward worker failed: {item!r}")
            reports.append(item)
    finally:
        for process in processes:
            process.join(timeout=10)
            if process.is_alive():
                process.terminate()
    not_posted = [problem for report in reports for problem in report.not_posted]
    if not_posted:
        raise BenchSetupError(
            f"{label}: {len(not_posted)} rewards were not posted at once, e.g. {not_posted[0]} "
            "(every identity is new and the budget covers them all)"
        )
    wall = max(r.ended for r in reports) - min(r.started for r in reports)
    return wall, reports


def verify(plan: Setup) -> str:
    """Every call's reward is in the ledger and the budget adds up: a problem, or ""."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.db import connection

    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from joyback.ledger.models import NORMAL_DEBIT

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*), count(ledger_transaction_id) FROM verification_actionclaim "
            "WHERE campaign_id = %s AND status = 'approved'",
            [plan.campaign_id],
        )
        claims, posted = cursor.fetchone()
        cursor.execute("SELECT balance FROM ledger_account WHERE id = %s", [plan.budget_id])
        (balance,) = cursor.fetchone()
        cursor.execute(
            "SELECT count(*) FROM ledger_account a WHERE a.balance <> "
            "(CASE WHEN a.kind = ANY(%s) THEN 1 ELSE -1 END) "
            "* COALESCE((SELECT sum(e.amount) FROM ledger_entry e WHERE e.account_id = a.id), 0)",
            [sorted(str(kind) for kind in NORMAL_DEBIT)],
        )
        (wrong,) = cursor.fetchone()
    expected = len(plan.warmup_ids) + len(plan.sequential_ids) + len(plan.concurrent_ids)
    problems = []
    if claims != expected or posted != expected:
        problems.append(f"{claims} approved claims and {posted} with a reward posted, not {expected}")
    if balance != plan.funded - expected * plan.reward:
        problems.append(f"budget balance {balance} != {plan.funded} - {expected} x {plan.reward}")
    if wrong:
        problems.append(f"{wrong} account balances differ from the sum of their entries")
    return "; ".join(problems)


def measure(server: Server, bench_db: str, args, note) -> dict:
    """Set up, run sequential then concurrent; latencies in ms and rates."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from tests.bench import web

    web.database_prepare(server, bench_db)
    began = time.monotonic()
    plan = setup(
        sequential=args.reward_calls, concurrent=args.reward_calls, workers=args.workers, history=args.history
    )
    note(
        f"reward setup: a live whatsapp_reward campaign ({plan.reward / 100:.2f} EUR an opt-in), "
        f"{len(plan.sequential_ids) + len(plan.concurrent_ids) + len(plan.warmup_ids)} verified WhatsApp "
        f"identities, {args.history} earlier rewards in the ledger, {time.monotonic() - began:.1f} s"
    )
    results = {"cpu": {}}
    for label, ids, warmups, workers in (
        ("sequential", plan.sequential_ids, plan.warmup_ids[-1:], 1),
        ("concurrent", plan.concurrent_ids, plan.warmup_ids[:-1], args.workers),
    ):
        wall, reports = run(plan, ids, warmups, workers=workers, label=label)
        calls = [ms for report in reports for ms in report.call_ms]
        results[label] = calls
        python_ms = sum(report.cpu_seconds for report in reports) * 1000 / len(calls)
        postgres_ms = sum(report.backend_cpu_seconds for report in reports) * 1000 / len(calls)
        results["cpu"][label] = (python_ms, postgres_ms)
        note(
            f"reward {label}: CPU per reward {python_ms + postgres_ms:.2f} ms: the calling process "
            f"{python_ms:.2f} ms (time.process_time), its PostgreSQL backend {postgres_ms:.2f} ms "
            f"(/proc/<pid>/stat utime+stime of pg_backend_pid(), before and after the {len(calls)} calls); "
            f"load average {os.getloadavg()[0]:.2f}"
        )
        rate = len(calls) / wall
        note(
            f"reward {label}: {len(calls)} action_reward() calls"
            + (f" from {workers} processes at once on one campaign" if workers > 1 else " one after another")
            + f", {rate:.0f} rewards/s ({rate * 60:.0f} a minute); identity verified -> reward posted "
            f"p50 {percentile(calls, 0.5):.1f} ms, p90 {percentile(calls, 0.9):.1f} ms, "
            f"p99 {percentile(calls, 0.99):.1f} ms, max {max(calls):.1f} ms"
        )
    problem = verify(plan)
    if problem:
        raise BenchSetupError(f"after the reward runs: {problem}")
    note(
        "reward check after the runs: every call approved with its reward posted, the budget down by "
        "exactly those rewards, every balance equal to its entries"
    )
    note(
        "reward: the workers raise FRAUD_CAMPAIGN_CLAIMS_PER_MINUTE (product default 1000) to "
        f"{VELOCITY_LIMIT}: "
        "at the default, claims past 1000 in a minute on one campaign go to the review queue (reward "
        "held, not posted) by design, and both runs claim faster than that"
    )
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.db import connections

    connections.close_all()
    if args.reward_rate:
        # deferred: the bench sets Django up (its settings, per process) before importing apps
        from tests.bench import payout

        results["sustained"] = done = payout.sustained_run(
            server, bench_db, args, note, rate=args.reward_rate, seconds=args.reward_rate_seconds
        )
        note(
            f"reward at {done['rate']:g} approvals/s for {args.reward_rate_seconds:g} s from "
            f"{args.payout_approvers} approving processes, with the standing worker and the task cluster "
            f"paying them (tests/bench/payout.py): reached {done['reached']:.1f}/s; {done['submitted']} of "
            f"{done['approved']} at the bank; approval -> bank p50 {done['p50_ms']:.0f} ms, p99 "
            f"{done['p99_ms']:.0f} ms; an approval call p99 {done['call_p99_ms']:.1f} ms, late for its slot "
            f"p99 {done['late_p99_ms']:.0f} ms; CPU per approval {done['approval_cpu_ms']:.1f} ms "
            f"(process and backend), per payout {done['payout_cpu_ms']:.1f} ms, the sandbox bank "
            f"{done['bank_cpu_ms']:.1f} ms; load average {os.getloadavg()[0]:.2f}"
            + ("" if done["finished"] else " (counted before all the work was done)")
        )
    return results
