"""`make bench`: JoyBack's ledger against pgbench, side by side on the same PostgreSQL in one run.

    bench <name> <value> <unit> vs <reference> <value> <unit> ratio <value / reference>

1. pgbench_tpcb: pgbench's built-in tpcb-like workload (scale 8, 8 clients, 2 threads) in its own
   scratch database: the rate this server commits small durable read-write transactions at. It
   runs once before and once after the ledger runs; the reference is the mean of the two.
2. ledger_batched_rewards: 8 worker processes post rewards through postings_post(), a batch per
   durable transaction, every one debiting the same campaign budget and crediting a participant's
   payable. Postings per second, over the same wall clock for all workers. The ledger already
   holds --history earlier rewards, as a ledger in use would (see ledger.accounts_setup).
3. ledger_per_row_rewards: the same, one transfer_post() per durable transaction.
4. ledger_unbatched_p99: latency of one reward posted alone (transfer_post() in its own durable
   transaction), called one after another from one process with nothing else running; the
   reference is the p99 of pgbench's own tpcb-like transaction, one client, same count.
5. landing_get, claim_post: requests per second of the campaign landing page (GET /c/<slug>/)
   and of a claim's payee-details submission (POST /p/c/<slug>/payee/), against a hello-world view
   served by the same gunicorn, settings and middleware in the same run (tests/bench/web.py), all
   loaded by wrk with the same 16 connections. In --http-rounds rounds of hello, landing, claim
   (and a last hello): each round's pages against the mean of the hello worlds just before and
   just after them, so a machine whose speed drifts (a shared VM) compares like with like; the
   line is the round with the median ratio. landing_get_p99, claim_post_p99: the median of the
   rounds' p99 latencies against the 100 ms target. After the ledger runs, in a fresh
   <dbname>_bench. Needs wrk (apt-get install wrk).
6. webhook_intake: requests per second of signed WhatsApp webhook deliveries (POST
   /v/webhooks/whatsapp/: verify the signature, dedupe and store for the worker), each a different
   message, against the hello world on the same gunicorn in the same run (tests/bench/webhook.py); its p99
   against the 50 ms target (webhook_intake_p99). The broker is the database's task table (no
   REDIS_URL); the intake runs again with Redis as the broker (--webhook-redis-url, an empty Redis
   database on 127.0.0.1) and a run of nothing but redeliveries, both as "#" lines. Needs wrk.
7. instant_reward_p99: identity verified -> reward posted, the latency of action_reward() for
   --reward-calls new people from --workers processes at once on one campaign, against the 100 ms
   target; the same one call after another from one process is a "#" line (tests/bench/reward.py).
   reward_cpu_per_reward: the CPU one action_reward() costs, the calling process and its PostgreSQL
   backend together (time.process_time, and /proc/<pid>/stat of pg_backend_pid()), over the calls
   one after another, against 5 ms. reward_sustained_rate: approvals a second reached when asked
   for --reward-rate (100) for --reward-rate-seconds, with the standing worker paying them, against
   that rate; reward_approval_to_bank_p99: their approval -> bank, against 1 s.
8. pain001_100k: 100,000 SEPA payouts written as one pain.001.001.09 file and validated against the
   official schema, against sepaxml writing the same payments without validation, each in a fresh
   process; target ratio <= 0.5; peak memory of each as a "#" line (tests/bench/pain001.py). Needs
   no database: `--only pain001` runs without DATABASE_URL.
9. caption_checker: the compliance caption checker on --captions captions (100,000) in one process,
   captions per second against the rate the 1 ms target allows; caption_checker_p99: the p99 of one
   check against that 1 ms target (tests/bench/caption.py). No database, no HTTP: `--only caption`
   runs without DATABASE_URL. compliance_agreement: the labelled captions and campaign rules of
   tests/compliance/eval/ checked as the claim flow and the launch check them, the share whose
   verdict is the expected one; compliance_unsafe_passes: how many that must fail (or be blocked)
   passed, target 0; compliance_review_cost_*: the share of what is fine that failing closed sends
   to a person; the same per part of the blind set (compliance_blind_dev_*, _blind_holdout_*,
   _blind_*, _unseen_* (the parts never read, together), _whole_*, with its safe rate and what
   happens to what is fine: reviewed or wrongly refused, and the share decided without a person
   with the agreement among those) against the 95 % target;
   compliance_check_p99: one check.

Lines starting with "#" are context. Needs DATABASE_URL=postgres://...; works in the scratch
databases <dbname>_bench and <dbname>_pgbench on that server and drops them at the end.
8. api_events: requests per second of POST /api/v1/events (a new purchase and Idempotency-Key per
   request) against the hello world on the same gunicorn in the same run, its p99 against 50 ms,
   and api_replay_p99: a replayed Idempotency-Key against 10 ms (tests/bench/api.py). Needs wrk.
10. payout_approval_to_submission_p99: a reward approved (action_reward) -> its payout made and
   sent to the sandbox bank by the standing worker's batches (manage.py work, payouts.pipeline;
   the task cluster runs beside it), approvals at a steady --payout-rate (50) a second for
   --payout-seconds (20), against the 1 s target; payout_cpu_per_payout: the CPU one payout costs
   from the approval's commit to the bank (workers and their PostgreSQL backends; the sandbox
   bank's share and the approval's own printed apart) against 10 ms; the same at
   --payout-high-rate (100) as "#" lines (tests/bench/payout.py).

`--only caption`, `--only api`, `--only payout` or `--only recon` runs one part.
12. scale (only with --only scale: it runs its own PostgreSQL primary and replica, Redis and
   PgBouncer from deploy/cluster.py, not the server of DATABASE_URL): the viral mix against one web
   node and two, both poolings, and a run where machines die (tests/bench/scale.py).
   scale_2nodes_requests against scale_1node_requests; each kind's p99 against 100 ms (payouts:
   approval -> bank against 1 s); scale_shared_lock_waits: lock waits (sampled) on anything but
   the hot rows the design accepts and one person's own rows (target 0);
   chaos_lost_or_doubled: what the proofs after the chaos run found wrong (target 0), the payout
   batch the standing worker held when it was killed asked about and settled, never sent again.
11. recon_import_100k: a camt.053 of 100,000 entries imported and matched, against 10,000 (target
   < 10 s, ratio <= 12x); recon_page_p95 and recon_page_queries: the reconciliation page over
   1,000,000 ledger entries and 200,000 payouts (tests/bench/recon.py).
"""

import argparse
import multiprocessing
import os
import platform
import queue
import sys
import time

from tests.bench import api, caption, ledger, pain001, payout, recon, reward, scale, web, webhook
from tests.bench.server import BenchSetupError, Server, percentile, pgbench_init, pgbench_run

UNBATCHED_TARGET_MS = 20.0
BATCHED_TARGET_RATIO = 3.0
# The targets for the public pages, against the hello world on the same server.
LANDING_TARGET_RATIO = 0.5
CLAIM_TARGET_RATIO = 0.35
HTTP_P99_TARGET_MS = 100.0
# The verification issue's: signed webhook intake against the hello world, and instant rewards.
WEBHOOK_TARGET_RATIO = 0.4
WEBHOOK_P99_TARGET_MS = 50.0
REWARD_P99_TARGET_MS = 100.0
REWARD_CPU_TARGET_MS = 5.0
REWARD_TO_BANK_P99_TARGET_MS = 1000.0
PARTS = ("ledger", "http", "webhook", "reward", "pain001", "caption", "api", "payout", "recon", "scale")


def line(name, value, unit, reference, ref_value, ref_unit) -> str:
    ratio = value / ref_value if ref_value else float("nan")
    return f"bench {name} {_num(value)} {unit} vs {reference} {_num(ref_value)} {ref_unit} ratio {ratio:.3g}"


def _num(value: float) -> str:
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for text in cpuinfo:
                if text.startswith("model name"):
                    return text.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def note(text: str) -> None:
    print(f"# {text}", flush=True)


def arguments(argv):
    parser = argparse.ArgumentParser(prog="python -m tests.bench.run", description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10, help="each ledger throughput run (10)")
    parser.add_argument("--pgbench-seconds", type=int, default=10, help="each of the two pgbench runs (10)")
    parser.add_argument("--pgbench-scale", type=int, default=8, help="pgbench's scale factor (8)")
    parser.add_argument("--workers", type=int, default=8, help="clients and worker processes (8)")
    parser.add_argument("--batch", type=int, default=500, help="postings per postings_post() call (500)")
    parser.add_argument("--latency-calls", type=int, default=2000, help="unbatched postings timed (2000)")
    parser.add_argument("--participants", type=int, default=4000, help="payable accounts credited (4000)")
    parser.add_argument(
        "--history", type=int, default=200_000, help="rewards already in the ledger before the runs (200000)"
    )
    parser.add_argument("--skip-per-row", action="store_true", help="leave out the per-row run")
    parser.add_argument("--only", choices=PARTS, help="run one part only (default: all)")
    parser.add_argument("--http-seconds", type=float, default=10, help="each timed HTTP run (10)")
    parser.add_argument("--http-warmup", type=float, default=2, help="untimed run before each (2)")
    parser.add_argument(
        "--http-rounds", type=int, default=3, help="rounds of hello, landing, claim in the http part (3)"
    )
    parser.add_argument(
        "--http-round-seconds", type=float, default=5, help="each timed run of an http round (5)"
    )
    parser.add_argument("--http-connections", type=int, default=16, help="wrk connections (16)")
    parser.add_argument(
        "--http-workers",
        type=int,
        default=2 * (os.cpu_count() or 1),
        help="gunicorn sync workers (2 x CPUs)",
    )
    parser.add_argument(
        "--webhook-deliveries",
        type=int,
        default=200_000,
        help="distinct signed deliveries made for each timed webhook run (200000)",
    )
    parser.add_argument(
        "--webhook-redis-url",
        default=webhook.default_redis_url(),
        help="an empty Redis database on 127.0.0.1 for the webhook run with REDIS_URL set, emptied "
        "afterwards; '' for none ($BENCH_REDIS_URL or redis://127.0.0.1:6379/13)",
    )
    parser.add_argument(
        "--reward-calls",
        type=int,
        default=2000,
        help="rewards posted in each reward run, one per new person (2000)",
    )
    parser.add_argument(
        "--reward-rate",
        type=float,
        default=100,
        help="approvals a second asked for in the reward part's sustained run (100; 0: none)",
    )
    parser.add_argument(
        "--reward-rate-seconds", type=float, default=20, help="the sustained run's length (20)"
    )
    parser.add_argument(
        "--pain001-count", type=int, default=100_000, help="payouts in the pain001 file (100000)"
    )
    parser.add_argument("--payout-rate", type=float, default=50, help="approvals a second (50)")
    parser.add_argument(
        "--payout-high-rate",
        type=float,
        default=100,
        help="approvals a second of the second payout run (100; 0: none)",
    )
    parser.add_argument("--payout-seconds", type=float, default=20, help="approvals for this long (20)")
    parser.add_argument(
        "--payout-backlog",
        type=int,
        default=300,
        help="rewards approved unmarked, then marked due at once: the pipeline's cost per payout "
        "in full batches (300; 0: none)",
    )
    parser.add_argument(
        "--payout-workers", type=int, default=4, help="workers of the payout run's task cluster (4)"
    )
    parser.add_argument(
        "--payout-approvers",
        type=int,
        default=2,
        help="processes approving the payout runs' rewards at once, as web workers would (2)",
    )
    parser.add_argument("--scale-seconds", type=float, default=20, help="each scale run (20)")
    parser.add_argument(
        "--scale-rate", type=float, default=5, help="approvals a second in the scale runs (5)"
    )
    parser.add_argument("--scale-landing", type=int, default=4, help="landing GET connections, all nodes (4)")
    parser.add_argument("--scale-claim", type=int, default=2, help="claim POST connections, all nodes (2)")
    parser.add_argument(
        "--scale-runs", default="", help="only these scale runs, comma-separated (1-node,2-nodes,...,chaos)"
    )
    parser.add_argument("--scale-claimants", type=int, default=300, help="people posting claims (300)")
    parser.add_argument("--scale-webhook", type=int, default=2, help="webhook connections, all nodes (2)")
    parser.add_argument(
        "--scale-deliveries", type=int, default=20_000, help="webhook deliveries per node and run"
    )
    parser.add_argument("--scale-web-workers", type=int, default=2, help="gunicorn workers per web node (2)")
    parser.add_argument(
        "--captions", type=int, default=100_000, help="captions the caption checker checks (100000)"
    )
    parser.add_argument(
        "--recon-scale",
        type=float,
        default=1.0,
        help="the recon part's sizes (100,000 entries, 200,000 payouts, 1,000,000 ledger entries) "
        "times this (1)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="every part at a size of seconds, to prove it still runs (make test does); "
        "its figures mean nothing",
    )
    args = parser.parse_args(argv)
    if args.smoke:
        for name, value in SMOKE.items():
            setattr(args, name, value)
    return args


# Sizes that run every part in seconds: what the suite runs so that no change breaks a part unseen.
SMOKE = {
    "seconds": 1,
    "pgbench_seconds": 1,
    "pgbench_scale": 1,
    "workers": 2,
    "batch": 20,
    "latency_calls": 20,
    "participants": 40,
    "history": 200,
    "http_seconds": 1,
    "http_warmup": 0.2,
    "http_rounds": 1,
    "http_round_seconds": 1,
    "http_connections": 16,
    "http_workers": 2,
    "webhook_deliveries": 500,
    "webhook_redis_url": "",
    "reward_calls": 20,
    "reward_rate": 5,
    "reward_rate_seconds": 2,
    "pain001_count": 200,
    "payout_rate": 5,
    "payout_high_rate": 0,
    "payout_seconds": 2,
    "payout_backlog": 10,
    "payout_workers": 1,
    "payout_approvers": 1,
    "scale_seconds": 2,
    "scale_rate": 2,
    "scale_landing": 1,
    "scale_claim": 1,
    "scale_claimants": 20,
    "scale_webhook": 1,
    "scale_deliveries": 200,
    "scale_web_workers": 1,
    "captions": 500,
    "recon_scale": 0.001,
}


def server_from_env() -> Server | None:
    url = os.environ.get("DATABASE_URL", "")
    try:
        return Server.from_url(url) if url else None
    except BenchSetupError:
        return None


def run_workers(*, accounts, mode: str, args) -> tuple[float, list]:
    """Spawn the workers, start them together, return (postings per second, reports)."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(args.workers, timeout=120)
    results = context.Queue()
    processes = [
        context.Process(
            target=ledger.worker_main,
            args=(accounts, mode, worker, args.batch, args.seconds, barrier, results),
            name=f"bench-{mode}-{worker}",
        )
        for worker in range(args.workers)
    ]
    for process in processes:
        process.start()
    reports = []
    try:
        for _ in processes:
            try:
                item = results.get(timeout=args.seconds + 120)
            except queue.Empty:
                raise BenchSetupError(f"the {mode} workers did not report back in time") from None
            if isinstance(item, BaseException):
                raise BenchSetupError(f"a {mode} worker failed: {item!r}")
            reports.append(item)
    finally:
        for process in processes:
            process.join(timeout=10)
            if process.is_alive():
                process.terminate()
    wall = max(r.ended for r in reports) - min(r.started for r in reports)
    postings = sum(r.postings for r in reports)
    errors = sum(r.errors for r in reports)
    if errors:
        first = next(r.first_error for r in reports if r.first_error)
        raise BenchSetupError(f"{errors} {mode} postings were refused, e.g.: {first}")
    return postings / wall, reports


def main(argv=None) -> int:
    args = arguments(argv)
    ledger_part, http_part = args.only in (None, "ledger"), args.only in (None, "http")
    webhook_part, reward_part = args.only in (None, "webhook"), args.only in (None, "reward")
    api_part = args.only in (None, "api")
    payout_part = args.only in (None, "payout")
    recon_part = args.only in (None, "recon")
    if args.only == "pain001":
        return pain001_only(args)
    if args.only == "caption":
        return caption_only(args)
    if args.only == "scale":
        return scale_only(args)
    server = server_from_env()
    if server is None:
        print(
            "make bench needs PostgreSQL: set DATABASE_URL=postgres://USER@HOST:5432/DBNAME "
            "(it works in scratch databases DBNAME_bench and DBNAME_pgbench and drops them afterwards)",
            file=sys.stderr,
        )
        return 2
    if (http_part or webhook_part or api_part) and web.wrk_missing():
        print(f"make bench: {web.wrk_missing()}", file=sys.stderr)
        return 2
    try:
        version = server.setting("server_version")
        durability = (
            f"synchronous_commit={server.setting('synchronous_commit')} fsync={server.setting('fsync')}"
        )
    except Exception as error:
        print(
            f"make bench could not reach PostgreSQL at {server.host}:{server.port}: {error}", file=sys.stderr
        )
        return 2
    bench_db, pgbench_db = f"{server.dbname}_bench", f"{server.dbname}_pgbench"
    note(
        f"machine: {os.cpu_count()} CPUs ({cpu_model()}), "
        f"load average {os.getloadavg()[0]:.2f}, Python {platform.python_version()}, "
        f"PostgreSQL {version.split()[0]} at {server.host}:{server.port}, {durability}"
    )
    if ledger_part:
        note(
            f"runs: pgbench tpcb-like -s {args.pgbench_scale} -c {args.workers} -j 2 "
            f"-T {args.pgbench_seconds}, before and "
            f"after the ledger runs; ledger {args.workers} worker processes x {args.seconds:g} s per mode, "
            f"batch {args.batch}; unbatched latency over {args.latency_calls} sequential calls"
        )
    if http_part:
        http_notes(args)
    if webhook_part:
        webhook_notes(args)
    if reward_part:
        note(
            f"runs: reward: {args.reward_calls} action_reward() calls one after another from one process, "
            f"then {args.reward_calls} from {args.workers} processes at once on the same campaign"
            + (
                f", then {args.reward_rate:g} approvals/s for {args.reward_rate_seconds:g} s paid by the "
                "standing worker"
                if args.reward_rate
                else ""
            )
        )
    begun = time.monotonic()
    results, loads, intakes, rewards, api_loads = {}, {}, {}, {}, {}
    try:
        if args.only is None:
            # First, on a quiet machine: after the database parts PostgreSQL keeps vacuuming and
            # analysing what they loaded (a million rows for recon), which these CPU-only runs felt.
            files = pain001.measure(args, note)
            # The compliance evaluation sets Django up: its settings must already name the bench
            # database that the ledger part creates, or this process would migrate the server's
            # own database while the ledger's spawned workers look in the bench one.
            os.environ["DATABASE_URL"] = server.url_for(bench_db)
            checked = caption.measure(args, note)
        if ledger_part:
            results = measure(server, bench_db, pgbench_db, args)
        if http_part:
            loads = web.measure(server, bench_db, args, note)
        if webhook_part:
            intakes = webhook.measure(server, bench_db, args, note)
        if reward_part:
            rewards = reward.measure(server, bench_db, args, note)
        if api_part:
            api_loads = api.measure(server, bench_db, args, note)
        if payout_part:
            payouts = payout.measure(server, bench_db, args, note)
        if recon_part:
            reconciled = recon.measure(server, bench_db, args, note)
    except BenchSetupError as error:
        print(f"make bench failed: {error}", file=sys.stderr)
        return 1
    finally:
        if "django.apps" in sys.modules and sys.modules["django.apps"].apps.ready:
            # deferred: the bench sets Django up (its settings, per process) before importing apps
            from django.db import connections

            connections.close_all()
        server.database_drop(bench_db)
        server.database_drop(web.migrated_template(bench_db))
        server.database_drop(pgbench_db)

    lines = ledger_lines(results) if ledger_part else []
    if http_part:
        lines += http_lines(loads)
    if webhook_part:
        lines += webhook.lines(
            intakes,
            note=note,
            line=line,
            target_ratio=WEBHOOK_TARGET_RATIO,
            p99_target_ms=WEBHOOK_P99_TARGET_MS,
        )
    if reward_part:
        lines += reward_lines(rewards)
    if api_part:
        lines += api.lines(api_loads, note=note, line=line)
    if payout_part:
        lines += payout.lines(payouts, note=note, line=line, args=args)
    if recon_part:
        lines += recon.lines(reconciled, note=note, line=line)
    if args.only is None:
        lines += pain001.lines(files, note=note, line=line)
        lines += caption_lines(checked)
    note(f"total {time.monotonic() - begun:.0f} s")
    for text in lines:
        print(text, flush=True)
    return 0


def caption_lines(checked: dict) -> list[str]:
    target = caption.P99_TARGET_MS
    note(
        f"targets: caption checker p99 < {target:g} ms: "
        f"{'met' if checked['p99_ms'] < target else 'MISSED'} ({checked['p99_ms'] * 1000:.0f} µs)"
    )
    return [
        line("caption_checker", checked["rate"], "captions/s", "target", 1000 / target, "captions/s"),
        line("caption_checker_p99", checked["p99_ms"], "ms", "target", target, "ms"),
        *compliance_lines(checked["evaluation"]),
    ]


def compliance_lines(evaluated: dict) -> list[str]:
    target = caption.AGREEMENT_TARGET
    judged = evaluated["parts"].get("blind", evaluated)
    met = judged["agreement"] >= target and judged["unsafe"] == 0
    note(
        f"targets: compliance agreement on the blind set >= {target:g} % and no unsafe pass: "
        f"{'met' if met else 'MISSED'} ({judged['agreement']:.1f} %, {judged['unsafe']} unsafe)"
    )
    lines = [
        line("compliance_agreement", evaluated["agreement"], "%", "target", target, "%"),
        # The target is zero: a ratio to it would mean nothing, so the count stands alone.
        f"bench compliance_unsafe_passes {evaluated['unsafe']} rows vs target 0 rows",
        # Failing closed has a price: the share of the own set's compliant captions and allowed
        # rules that now go to a person's review.
        f"bench compliance_review_cost_captions {evaluated['caption_review_cost']:.1f} %",
        f"bench compliance_review_cost_rules {evaluated['rule_review_cost']:.1f} %",
    ]
    for part, scored in evaluated["parts"].items():
        if part == "own":
            continue
        lines += [
            line(f"compliance_{part}_agreement", scored["agreement"], "%", "target", target, "%"),
            f"bench compliance_{part}_unsafe_passes {scored['unsafe']} rows vs target 0 rows",
            f"bench compliance_{part}_safe_rate {scored['safe_rate']:.1f} %",
            # What happens to what is fine: sent to a person, or refused outright.
            f"bench compliance_{part}_fine_outcomes captions {scored['caption_review_cost']:.1f} % "
            f"reviewed, {scored['caption_refused']:.1f} % refused; rules {scored['rule_review_cost']:.1f} % "
            f"reviewed, {scored['rule_refused']:.1f} % refused",
            # How often an automatic verdict is right when JoyBack gives one alone (review aside).
            f"bench compliance_{part}_decided_alone {scored['decided']:.1f} % of rows, "
            f"{scored['decided_agreement']:.1f} % of them agree; rules {scored['rule_decided']:.1f} % "
            f"decided, {scored['rule_decided_agreement']:.1f} % of them agree",
        ]
    lines.append(
        line("compliance_check_p99", evaluated["check_p99_ms"], "ms", "target", caption.P99_TARGET_MS, "ms")
    )
    return lines


def caption_only(args) -> int:
    # The checker is pure Python over policy data: no PostgreSQL needed for this part alone.
    begun = time.monotonic()
    note(
        f"machine: {os.cpu_count()} CPUs ({cpu_model()}), load average {os.getloadavg()[0]:.2f}, "
        f"Python {platform.python_version()}"
    )
    lines = caption_lines(caption.measure(args, note))
    note(f"total {time.monotonic() - begun:.0f} s")
    for text in lines:
        print(text, flush=True)
    return 0


def scale_only(args) -> int:
    # Its own PostgreSQL (primary and replica), Redis and PgBouncer: DATABASE_URL is not used.
    began = time.monotonic()
    note(
        f"machine: {os.cpu_count()} CPUs ({cpu_model()}), load average {os.getloadavg()[0]:.2f}, "
        f"Python {platform.python_version()}"
    )
    if web.wrk_missing():
        print(f"make bench: {web.wrk_missing()}", file=sys.stderr)
        return 2
    note(
        f"scale: {args.scale_seconds:g} s per run; wrk connections over all nodes: landing "
        f"{args.scale_landing}, claim {args.scale_claim}, webhook {args.scale_webhook}, dashboard 1 per "
        f"node; approvals {args.scale_rate:g}/s; {args.scale_web_workers} gunicorn workers per node; "
        "everything (PostgreSQL, Redis, the nodes, the workers, wrk) on this machine's CPUs"
    )
    try:
        done = scale.measure(args, note)
    except BenchSetupError as error:
        print(f"make bench failed: {error}", file=sys.stderr)
        return 1
    lines = scale.lines(done, note=note, line=line)
    note(f"total {time.monotonic() - began:.0f} s")
    for text in lines:
        print(text, flush=True)
    return 0


def pain001_only(args) -> int:
    # Pure Python file writing: no PostgreSQL needed for this part alone.
    began = time.monotonic()
    note(
        f"machine: {os.cpu_count()} CPUs ({cpu_model()}), load average {os.getloadavg()[0]:.2f}, "
        f"Python {platform.python_version()}"
    )
    try:
        results = pain001.measure(args, note)
    except BenchSetupError as error:
        print(f"make bench failed: {error}", file=sys.stderr)
        return 1
    lines = pain001.lines(results, note=note, line=line)
    note(f"total {time.monotonic() - began:.0f} s")
    for text in lines:
        print(text, flush=True)
    return 0


def http_notes(args) -> None:
    note(
        f"http: gunicorn {args.http_workers} sync workers"
        + (" (2 x CPUs)" if args.http_workers == 2 * (os.cpu_count() or 1) else "")
        + " on 127.0.0.1 (a sync worker closes the connection after each answer, so every request is a new "
        "TCP connection, as behind a proxy), serving tests.bench.settings: the product's settings and URLs "
        "plus /bench/hello/"
    )
    note(
        "http: JOYBACK_ENV=test with DEBUG off (production's settings would make cookies Secure and "
        "redirect to plain http to https; they differ from test there, in HSTS, whitenoise, SMTP mail and "
        "the sandbox switch, not in the pages' work); "
        "PAYEE_SUBMISSIONS_PER_MINUTE=1000000 so that the per-address limit does not refuse the "
        "load, which all comes from 127.0.0.1; Q_SYNC=0 (queued tasks go to the broker, as in production); "
        "the status-link mail goes to the dummy backend"
    )
    note(
        f"http: wrk {args.http_connections} connections, one thread each, {args.http_warmup:g} s untimed per "
        f"URL, then {args.http_rounds} rounds of hello, landing, claim ({args.http_round_seconds:g} s timed "
        "each) and a last hello"
        + (", after the ledger runs and a CHECKPOINT" if args.only is None else "")
        + f"; wrk runs on the same {os.cpu_count()} CPUs as gunicorn and PostgreSQL and competes with them"
    )


def webhook_notes(args) -> None:
    note(
        f"webhook: the same gunicorn ({args.http_workers} sync workers, tests.bench.settings, "
        "JOYBACK_ENV=test, "
        f"DEBUG off, Q_SYNC=0) and wrk ({args.http_connections} connections, {args.http_warmup:g} s untimed "
        f"then {args.http_seconds:g} s timed per run) as the http part, in the order hello, intake, "
        "duplicates, hello; each intake request a new signed WhatsApp delivery (its own wamid), made "
        "and signed before the clock starts; no task cluster runs, so the queue only grows"
    )


def reward_lines(rewards: dict) -> list[str]:
    sequential, concurrent = rewards["sequential"], rewards["concurrent"]
    p99 = percentile(concurrent, 0.99)
    python_ms, postgres_ms = rewards["cpu"]["sequential"]
    cpu_ms = python_ms + postgres_ms
    note(
        f"targets: instant reward p99 < {REWARD_P99_TARGET_MS:g} ms: "
        f"{_verdict(p99 < REWARD_P99_TARGET_MS)} ({p99:.1f} ms concurrent; "
        f"{percentile(sequential, 0.99):.1f} ms sequential); CPU per reward <= {REWARD_CPU_TARGET_MS:g} ms: "
        f"{_verdict(cpu_ms <= REWARD_CPU_TARGET_MS)} ({cpu_ms:.2f} ms: python {python_ms:.2f} + "
        f"postgres {postgres_ms:.2f})"
    )
    lines = [
        line("instant_reward_p99", p99, "ms", "target", REWARD_P99_TARGET_MS, "ms"),
        line("reward_cpu_per_reward", cpu_ms, "ms", "target", REWARD_CPU_TARGET_MS, "ms"),
    ]
    sustained = rewards.get("sustained")
    if sustained:
        rate, reached, to_bank = sustained["rate"], sustained["reached"], sustained["p99_ms"]
        note(
            f"targets: {rate:g} approvals/s sustained: {_verdict(reached >= 0.95 * rate)} ({reached:.1f}/s); "
            f"approval -> bank p99 < {REWARD_TO_BANK_P99_TARGET_MS:g} ms: "
            f"{_verdict(to_bank < REWARD_TO_BANK_P99_TARGET_MS)} ({to_bank:.0f} ms)"
        )
        lines += [
            line("reward_sustained_rate", reached, "approvals/s", "target", rate, "approvals/s"),
            line("reward_approval_to_bank_p99", to_bank, "ms", "target", REWARD_TO_BANK_P99_TARGET_MS, "ms"),
        ]
    return lines


def ledger_lines(results: dict) -> list[str]:
    tps = results["pgbench_tps"]
    lines = [line("ledger_batched_rewards", results["batched"], "postings/s", "pgbench_tpcb", tps, "tps")]
    if "per_row" in results:
        lines.append(
            line("ledger_per_row_rewards", results["per_row"], "postings/s", "pgbench_tpcb", tps, "tps")
        )
    p99, pgbench_p99 = results["unbatched_p99"], results["pgbench_1client_p99"]
    lines.append(line("ledger_unbatched_p99", p99, "ms", "pgbench_tpcb_1client_p99", pgbench_p99, "ms"))
    batched_ratio = results["batched"] / tps
    note(
        f"targets: batched >= {BATCHED_TARGET_RATIO:g}x pgbench_tpcb: "
        f"{'met' if batched_ratio >= BATCHED_TARGET_RATIO else 'MISSED'} ({batched_ratio:.3g}x); "
        f"unbatched p99 < {UNBATCHED_TARGET_MS:g} ms: "
        f"{'met' if p99 < UNBATCHED_TARGET_MS else 'MISSED'} ({p99:.2f} ms)"
    )
    return lines


def _verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def http_lines(rounds: list[dict]) -> list[str]:
    """Each round's pages against the hello worlds around them; the round of the median ratio."""
    pages = {"landing_get": [], "claim_post": []}
    for number, loads in enumerate(rounds, 1):
        before, after = loads["django_hello"], loads["django_hello_after"]
        hello = (before.rps + after.rps) / 2
        for page, runs in pages.items():
            runs.append((loads[page].rps / hello, loads[page], hello))
        spread = abs(before.rps - after.rps) / hello
        note(
            f"http round {number}: django_hello {before.rps:.0f} / {after.rps:.0f} req/s before / after "
            f"(mean {hello:.0f}; p99 {before.p99_ms:.1f} / {after.p99_ms:.1f} ms), landing "
            f"{pages['landing_get'][-1][0]:.3g}x, claim {pages['claim_post'][-1][0]:.3g}x"
            + (f" (the hello worlds differ by {spread:.0%}: not a quiet machine)" if spread > 0.2 else "")
        )
    rates, latencies, verdicts = [], [], []
    targets = {"landing_get": ("landing", LANDING_TARGET_RATIO), "claim_post": ("claim", CLAIM_TARGET_RATIO)}
    for page, runs in pages.items():
        name, target = targets[page]
        ratio, load, hello = sorted(runs, key=lambda run: run[0])[len(runs) // 2]
        p99 = sorted(run[1].p99_ms for run in runs)[len(runs) // 2]
        verdicts.append(f"{name} >= {target:g}x hello: {_verdict(ratio >= target)} ({ratio:.3g}x)")
        fast = _verdict(p99 < HTTP_P99_TARGET_MS)
        verdicts.append(f"{name} p99 < {HTTP_P99_TARGET_MS:g} ms: {fast} ({p99:.1f} ms)")
        rates.append(line(page, load.rps, "req/s", "django_hello", hello, "req/s"))
        latencies.append(line(f"{page}_p99", p99, "ms", "target", HTTP_P99_TARGET_MS, "ms"))
    note("targets (the median round): " + "; ".join(verdicts))
    return rates + latencies


def measure(server: Server, bench_db: str, pgbench_db: str, args) -> dict:
    results = {}
    eight = ["-c", str(args.workers), "-j", "2", "-T", str(args.pgbench_seconds)]

    # 1. The reference: what this server does with pgbench's own small durable transactions.
    pgbench_init(server, pgbench_db, scale=args.pgbench_scale)
    before = pgbench_run(server, pgbench_db, *eight)
    single = pgbench_run(server, pgbench_db, "-c", "1", "-j", "1", "-t", str(args.latency_calls), log=True)
    results["pgbench_1client_p99"] = single.percentile(0.99)
    note(
        f"pgbench tpcb-like: {before.tps:.0f} tps with {args.workers} clients; one client, "
        f"{len(single.latencies_ms)} transactions: p50 {single.percentile(0.5):.2f} ms, "
        f"p99 {single.percentile(0.99):.2f} ms"
    )

    # 2. JoyBack's database, migrated like production, with one funded campaign budget.
    web.database_prepare(server, bench_db)
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.db import connections

    setup_began = time.monotonic()
    accounts = ledger.accounts_setup(participants=args.participants, history=args.history)
    connections.close_all()
    note(
        f"setup: {len(accounts.payable_ids)} participant payables, {args.history} earlier rewards already "
        f"in the ledger, {time.monotonic() - setup_began:.1f} s"
    )

    # 3. Batched, then per-row: 8 processes, one campaign budget.
    results["batched"], reports = run_workers(accounts=accounts, mode="batched", args=args)
    calls = [ms for r in reports for ms in r.call_ms]
    note(
        f"batched: {sum(r.postings for r in reports)} postings in {len(calls)} postings_post() calls "
        f"of {args.batch}; a call (lock wait included) p50 {percentile(calls, 0.5):.0f} ms, "
        f"p99 {percentile(calls, 0.99):.0f} ms"
    )
    if not args.skip_per_row:
        results["per_row"], reports = run_workers(accounts=accounts, mode="per_row", args=args)
        calls = [ms for r in reports for ms in r.call_ms]
        note(
            f"per-row: {sum(r.postings for r in reports)} transfer_post() calls; under {args.workers}-worker "
            f"load a posting p50 {percentile(calls, 0.5):.1f} ms, p99 {percentile(calls, 0.99):.1f} ms"
        )

    # 4. One reward at a time from one process, nothing else running: what a single approval sees.
    report = ledger.rewards_post(
        accounts=accounts,
        mode="per_row",
        label="unbatched",
        worker=0,
        batch=1,
        seconds=300,
        calls=args.latency_calls,
    )
    results["unbatched_p99"] = percentile(report.call_ms, 0.99)
    note(
        f"unbatched: {report.calls} sequential transfer_post() calls, "
        f"p50 {percentile(report.call_ms, 0.5):.2f} ms, p99 {results['unbatched_p99']:.2f} ms"
    )
    problem = ledger.ledger_verify(accounts=accounts)
    if problem:
        raise BenchSetupError(f"the ledger does not add up after the runs: {problem}")
    note("ledger check after the runs: every balance equals its entries, every transaction sums to zero")
    connections.close_all()

    # 5. pgbench again, so that a machine getting busier or quieter during the run shows up.
    after = pgbench_run(server, pgbench_db, *eight)
    results["pgbench_tps"] = (before.tps + after.tps) / 2
    spread = abs(before.tps - after.tps) / results["pgbench_tps"]
    note(
        f"pgbench tpcb-like after the ledger runs: {after.tps:.0f} tps; reference = mean "
        f"{results['pgbench_tps']:.0f} tps"
        + (
            f" (WARNING: the two runs differ by {spread:.0%}: the machine was not quiet)"
            if spread > 0.2
            else ""
        )
    )
    return results


if __name__ == "__main__":
    sys.exit(main())
