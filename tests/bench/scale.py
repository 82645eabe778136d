"""The viral mix on the production topology: one web node, then two, then two with machines dying.

`make bench BENCH_ARGS="--only scale"` starts deploy/cluster.py (its own PostgreSQL primary and
streaming replica, Redis, the web nodes, qcluster and the standing worker, each its own process
group) and, for --scale-seconds per run, drives at once:

- landing GET: GET /c/<slug>/ (200), the public page of a live campaign;
- claim POST: a person's bank details (POST /p/c/<slug>/payee/, 302), each connection a person;
- webhook intake: signed WhatsApp deliveries (POST /v/webhooks/whatsapp/, 200), each new, which
  the standing worker then processes;
- rewards: approvals (action_reward for a new person with verified bank details) at --scale-rate a
  second from a process of their own, as the standing worker or an API call would make them;
- payouts: each approval marks its person due, and the standing worker's batches (payouts.pipeline)
  make, post and send the payouts to the sandbox bank; approval -> bank is measured as the payout
  part measures it (the bank's received_at minus the approval's commit). The claims' payouts (bank
  details given after a reward) go through the task cluster: payee_onboard, then payout_submit.

The HTTP load is wrk, one instance per URL and node (connections split between the nodes as a
load balancer would); the runs are: "1 node" and "2 nodes" with persistent connections straight
to the primary, then "1 node" again through each pooling (Django's psycopg pool in every process;
PgBouncer in transaction mode, statements no longer prepared), then "chaos": two nodes while one
web node, the task cluster and the standing worker are killed with SIGKILL (the standing worker
while it holds a payout batch: payouts claimed as submitted whose answer is not applied, watched
for on the primary) and the replica restarts, each restarted as systemd would (Restart=always),
followed by the proofs that nothing was lost or done twice, and that the payouts the killed worker
held were asked about, not sent again.

Where the time goes: CPU seconds of each process group (psutil, the group's processes and the
children they waited for) per request, the payout batches in the standing worker's, with the
in-process sandbox bank's share (the worker's sender threads) taken out and shown apart; the
approving process's own CPU apart (the rewards themselves); PostgreSQL's statements by total time
(pg_stat_statements on the primary); and every 100 ms a sample of the backends waiting for a
lock (pg_stat_activity, pg_locks, pg_blocking_pids), named by their process group (PGAPPNAME),
so a lock that serialises the nodes shows up as waits whose holder is on another node.
"""

import multiprocessing
import os
import queue as queues
import re
import signal
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import psycopg

from deploy.cluster import Cluster, ClusterError, ha_available, stale_down
from tests.bench import payout, web, webhook
from tests.bench.server import BenchSetupError, percentile

DATABASE = "joyback_scale"
P99_TARGET_MS = 100.0
# A dead primary is replaced within Patroni's TTL and a loop or two (deploy/cluster.py).
FAILOVER_TARGET_SECONDS = 30.0
PAYOUT_P99_TARGET_MS = 1000.0
SAMPLE_SECONDS = 0.1
CLAIMANT_IBANS = 500_000
# Each run's and node's claimants their own IBAN numbers (beyond the approved people's).
_claim_numbers = iter(range(0, 10**9, 10**6))
# Up to this long after the load for every payout to reach the bank (a late one counts with its
# whole latency); the task cluster's sweep (every minute) asks about the payouts a killed worker
# held once they are PAYOUT_STALE_SECONDS (60) old.
DRAIN_SECONDS = 150.0
# The one lock the design accepts on a hot row: the campaign budget's ledger account, taken once
# per posting batch (joyback.ledger.services), and the campaign and rule rows of a reward.
EXPECTED_HOT = ("ledger_account", "campaigns_campaign", "campaigns_actionrule")
# One person's rows: only that person's own requests (and the work they cause) meet on them.
PER_PERSON = (
    "verification_participant",
    "verification_identity",
    "verification_actionclaim",
    "payouts_payee",
    "payouts_payout",
)


@dataclass
class Run:
    label: str
    nodes: int
    pooling: str
    loads: dict = field(default_factory=dict)  # (kind, node) -> web.Load
    approvals: object = None
    latency_ms: list = field(default_factory=list)  # approval committed -> the bank booked it
    to_payout_ms: list = field(default_factory=list)  # approval committed -> payout made
    approved: int = 0
    submitted: int = 0
    seconds: float = 0.0
    cpu: dict = field(default_factory=dict)  # group -> CPU seconds during the run
    statements: list = field(default_factory=list)
    waits: Counter = field(default_factory=Counter)
    samples: int = 0
    lag_ms: list = field(default_factory=list)  # the replica's replay lag, sampled
    events: list = field(default_factory=list)  # what the chaos did, when
    proofs: dict = field(default_factory=dict)
    stored_events: int = 0
    cpu_at_kill: dict = field(default_factory=dict)  # group -> its CPU seconds just before it died
    held: dict = field(default_factory=dict)  # payout id -> the bank had it when its worker died
    work_killed_at: float = 0.0  # time.time()
    outage_seconds: float | None = None  # the failover: the primary killed -> a write accepted again
    skipped: str = ""  # why the run was not made
    fault: str = ""  # one of FAULTS: the fault made during the run
    fault_seconds: float = 0.0  # how long it lasts (Redis down, the worker stopped)
    health: list = field(default_factory=list)  # (seconds into the run, /healthz/ready, /healthz/work/)
    fault_at: float = 0.0  # seconds into the run the fault began, and ended
    fault_end: float = 0.0

    def requests(self, kind: str | None = None) -> int:
        return sum(load.requests for (k, _n), load in self.loads.items() if kind in (None, k))

    def rps(self, kind: str | None = None) -> float:
        return self.requests(kind) / max(self.seconds, 1e-9)

    def p99(self, kind: str) -> float:
        # wrk gives each instance's p99; the worse node's is the one a visitor may meet.
        found = [load.p99_ms for (k, _n), load in self.loads.items() if k == kind]
        return max(found) if found else float("nan")

    def errors(self) -> int:
        return sum(load.errors for load in self.loads.values())

    def approval_errors(self) -> int:
        """Approvals the database refused during the run (an outage: not acknowledged, not counted)."""
        return sum(1 for problem in self.approvals.not_approved if problem.startswith("database"))


def group_cpu(pid: int) -> float:
    """CPU seconds of a process, its live descendants and the children it waited for."""
    try:
        root = psutil.Process(pid)
        members = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    total = 0.0
    for member in members:
        try:
            times = member.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


def postmaster_pid(data: Path) -> int | None:
    try:
        return int((data / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


BANK_THREADS = "sandbox bank (in the standing worker)"


def cpu_snapshot(cluster) -> dict:
    """name -> (pid, CPU seconds so far) of each process group, PostgreSQL server and the load
    generators; the standing worker's sender threads, where the in-process sandbox bank answers
    the payouts, also on their own (they are part of the standing worker's count)."""
    snapshot = {
        name: (group.pid, group_cpu(group.pid)) for name, group in cluster.groups.items() if group.alive()
    }
    if (work := cluster.groups.get("work")) and work.alive():
        snapshot[BANK_THREADS] = (work.pid, payout.sender_threads_cpu(work.pid))
    for name in ("primary", "replica"):
        if pid := postmaster_pid(cluster.data_dir(name)):
            snapshot[f"postgres {name}"] = (pid, group_cpu(pid))
    # wrk, waited for by its threads; the approving process is counted by itself (Approvals).
    children = os.times()
    snapshot["load generators (wrk)"] = (os.getpid(), children.children_user + children.children_system)
    return snapshot


def cpu_spent(before: dict, after: dict, *, at_kill: dict) -> dict:
    """CPU seconds each part used between two snapshots. A group restarted in between (the chaos)
    counts its new process from its start and the killed one up to its last reading (at_kill);
    the sandbox bank's threads are taken out of the standing worker's count, shown apart."""
    spent = {}
    for name, (pid, used) in after.items():
        old_pid, old_used = before.get(name, (None, 0.0))
        if pid == old_pid:
            spent[name] = used - old_used
        else:
            spent[name] = used + max(0.0, at_kill.get(name, old_used) - old_used)
    for name, (_pid, old_used) in before.items():
        if name not in after:  # died and not back by the end: up to its last reading
            spent[name] = max(0.0, at_kill.get(name, old_used) - old_used)
    if BANK_THREADS in spent and "work" in spent:
        spent["work"] -= spent[BANK_THREADS]
    return spent


class LockSampler(threading.Thread):
    """Every SAMPLE_SECONDS: which backends wait for a lock, on what, and whose process holds it."""

    QUERY = """
        SELECT w.application_name, w.wait_event,
               left(regexp_replace(w.query, '\\s+', ' ', 'g'), 90),
               (SELECT string_agg(DISTINCT b.application_name, ',')
                  FROM pg_stat_activity b WHERE b.pid = ANY(pg_blocking_pids(w.pid))),
               (SELECT string_agg(DISTINCT l.relation::regclass::text, ',')
                  FROM pg_locks l WHERE l.pid = w.pid AND NOT l.granted AND l.relation IS NOT NULL)
          FROM pg_stat_activity w
         WHERE w.datname = %s AND w.wait_event_type = 'Lock'
    """

    def __init__(self, url: str):
        super().__init__(daemon=True)
        self.url, self.stop_event = url, threading.Event()
        self.waits, self.samples, self.lag_ms = Counter(), 0, []

    def run(self):
        # The primary lost (the failover run): sampling goes on on whichever node is primary next.
        while not self.stop_event.is_set():
            try:
                self._sample()
            except psycopg.Error:
                self.stop_event.wait(1)

    def _sample(self):
        with psycopg.connect(self.url, autocommit=True, application_name="bench-sampler") as conn:
            while not self.stop_event.wait(SAMPLE_SECONDS):
                self.samples += 1
                for waiter, event, query, holders, relation in conn.execute(self.QUERY, [DATABASE]):
                    key = (event, relation or "", _shape(query), waiter or "?", holders or "?")
                    self.waits[key] += 1
                # How far the replica's replay is behind (none while it restarts).
                lag = conn.execute(
                    "SELECT max(extract(epoch FROM coalesce(replay_lag, interval '0'))) "
                    "FROM pg_stat_replication"
                ).fetchone()[0]
                if lag is not None:
                    self.lag_ms.append(float(lag) * 1000)

    def stop(self) -> tuple[Counter, int, list]:
        self.stop_event.set()
        self.join(timeout=5)
        return self.waits, self.samples, self.lag_ms


def _shape(query: str) -> str:
    return re.sub(r"\$\d+|'[^']*'|\b\d+\b", "?", query or "")[:70]


def _node(application: str) -> str:
    return application.split("-")[0]


def statements_reset(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_statements_reset()")


def statements_top(url: str, limit: int = 6) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(
            "SELECT calls, total_exec_time, left(regexp_replace(query, '\\s+', ' ', 'g'), 80) "
            "FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = %s) "
            "AND query NOT LIKE '%%pg_stat_activity%%' "
            "ORDER BY total_exec_time DESC LIMIT %s",
            [DATABASE, limit],
        ).fetchall()


# The health endpoints name what is wrong only to a monitor with this token (METRICS_TOKEN).
MONITORING_TOKEN = "bench-scale-monitor-" + os.urandom(8).hex()


def cluster_env(*, secret_key: str) -> dict:
    env = web.server_env(database_url="", secret_key=secret_key)
    env.pop("DATABASE_URL")
    env.update(
        SANDBOX="1",
        PAYOUT_SEPA_MODE="instant",
        FRAUD_CAMPAIGN_CLAIMS_PER_MINUTE=str(payout.VELOCITY_LIMIT),
        LOG_LEVEL="WARNING",
        # As in production and the payout part (JOYBACK_ENV=test alone sends a batch in turn).
        PAYOUT_SEND_THREADS=str(payout.SEND_THREADS),
        # The health probe reads what is wrong (the worker named), as a monitoring system does.
        METRICS_TOKEN=MONITORING_TOKEN,
    )
    return env


def setup(cluster, *, people: int, runs: dict, note) -> tuple:
    """The campaigns, the claimants' cookies, the people to approve; in the cluster's database."""
    os.environ["DATABASE_URL"] = cluster.primary_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.bench.settings"
    os.environ.pop("REDIS_URL", None)
    os.environ["LOG_LEVEL"] = "WARNING"  # not a line per task the setup queues
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from tests.bench import ledger

    ledger.django_setup()
    began = time.monotonic()
    clients = web.data_setup(people=people)
    plan = payout.setup(runs=runs)
    note(
        f"scale setup: a live campaign with {len(clients)} claimants (an approved reward and a cookie "
        f"each), a whatsapp_reward campaign with {sum(w + t for w, t in runs.values())} people to "
        f"approve (verified IBANs), {time.monotonic() - began:.1f} s"
    )
    return clients, plan, owner_session()


def owner_session() -> str:
    """The Cookie header of the bench brand's owner, signed in (a session as a sign-in leaves it)."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.contrib.sessions.backends.db import SessionStore

    owner = get_user_model().objects.get(email="owner@bench.localhost")
    session = SessionStore()
    session[SESSION_KEY] = str(owner.pk)
    session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
    session[HASH_SESSION_KEY] = owner.get_session_auth_hash()
    session.save()
    return f"{settings.SESSION_COOKIE_NAME}={session.session_key}"


def one_run(
    cluster,
    run: Run,
    *,
    plan,
    clients,
    tokens: list,
    owner_cookie: str,
    tmp: Path,
    args,
    note,
    chaos: bool = False,
    failover: bool = False,
) -> Run:

    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.conf import settings

    nodes = list(range(1, run.nodes + 1))
    # A fault's run lasts the fault and a quarter of a minute after it, to see the recovery.
    seconds = args.scale_seconds + (run.fault_seconds + 15 if run.fault else 0)
    if not tokens:  # the CSRF cookie and form token of each claimant, valid on every node
        tokens += [web.client_tokens(cluster.web_port(1), client) for client in clients]
    per_node = {
        "landing": max(1, args.scale_landing // run.nodes),
        "claim": max(1, args.scale_claim // run.nodes),
        "webhook": max(1, args.scale_webhook // run.nodes),
        "dashboard": 1,
    }
    files = {}
    for node in nodes:
        # People who have not given bank details yet, one a request (a person's second POST is a 409:
        # details on file change only with a code sent to them), apart from the approved people's IBANs.
        files[("claim", node)] = web.claim_forms_files(
            template=tokens[0],
            connections=per_node["claim"],
            seconds=seconds + 30,  # the run's warm-up and drain included
            per_second=100,  # a connection's claims per second on a loaded cluster, with room
            prefix=tmp / f"{run.label}-claims-{node}",
            start=CLAIMANT_IBANS + next(_claim_numbers),
        )
        prefix = tmp / f"{run.label}-hooks-{node}"
        webhook.deliveries_write(
            prefix,
            tag=f"{run.label}-{node}",
            # Enough distinct deliveries that wrk never starts again from the first (a redelivery
            # answered 200 is stored once, and the proof counts every 200 as a delivery to store),
            # however long a fault run lasts.
            total=max(
                args.scale_deliveries,
                per_node["webhook"] * round(seconds + 30) * DELIVERIES_PER_CONNECTION_SECOND,
            ),
            connections=per_node["webhook"],
            secret=settings.WHATSAPP_APP_SECRET,
        )
        files[("webhook", node)] = f"signed:{prefix}"
    urls = {
        "landing": (f"/c/{web.SLUG}/", 200),
        "claim": (f"/p/c/{web.SLUG}/payee/", 302),
        "webhook": (webhook.PATH, 200),
        "dashboard": ("/brands/bench-brand/", 200),
    }
    for node in nodes:
        files[("dashboard", node)] = f"cookie:{owner_cookie}"
    events_before = webhook.Counts().now()[0]

    # The approvals: a spawned process, warm-up first (the cluster answers), then paced.
    warmup_ids, timed_ids = plan.people[run.label]
    timed_ids = timed_ids[: max(1, round(args.scale_rate * args.scale_seconds))]
    context = multiprocessing.get_context("spawn")
    results, timed_start = context.Queue(), context.Event()
    approver_env = {
        "DJANGO_SETTINGS_MODULE": "tests.bench.settings",
        "DATABASE_URL": cluster.primary_url,
        "JOYBACK_ENV": "test",
        "Q_SYNC": "0",
        "SANDBOX": "1",
        "LOG_LEVEL": "WARNING",
        "EMAIL_BACKEND": "django.core.mail.backends.dummy.EmailBackend",
        "FRAUD_CAMPAIGN_CLAIMS_PER_MINUTE": str(payout.VELOCITY_LIMIT),
        "REDIS_URL": cluster.redis_url,
        "PGAPPNAME": "approver",
    }
    alone = context.Barrier(1)  # kept here until the process has it (a lost one fails its start)
    approver = context.Process(
        target=payout.approver_main,
        # One approving process: all of the people (its share, 0 of 1), no one else to wait for.
        args=(
            approver_env,
            plan.rule_id,
            warmup_ids,
            timed_ids,
            args.scale_rate,
            timed_start,
            results,
            (0, 1),
            alone,
        ),
        name=f"bench-scale-{run.label}",
    )
    approver.start()
    deadline = time.monotonic() + payout.READY_TIMEOUT + 60
    looked = 0.0
    while not timed_start.is_set():
        if time.monotonic() - looked > 1:
            # Before the timed run, a process that died is started again as systemd would (the
            # faults are the timed run's, and each says what it did).
            looked = time.monotonic()
            for line in cluster.supervise():
                note(f"scale {run.label}: before the timed run: {line}")
        if time.monotonic() > deadline or approver.exitcode is not None:
            # What the workers said is the only trace of why a warm-up payout never left.
            said = "".join(
                f"\n--- {name} (last lines) ---\n{cluster.groups[name].tail()}"
                for name in ("work", "qcluster")
                if name in cluster.groups
            )
            raise BenchSetupError(
                f"{run.label}: the approvals did not start (exit {approver.exitcode}){said}"
            )
        time.sleep(0.05)

    # Everything at once, from here.
    statements_reset(cluster.primary_url)
    sampler = LockSampler(cluster.primary_url)
    sampler.start()
    cpu_before = cpu_snapshot(cluster)
    began = time.monotonic()
    threads, errors = [], []

    def load(kind: str, node: int) -> None:
        path, expected = urls[kind]
        try:
            run.loads[(kind, node)] = web.wrk_run(
                f"http://127.0.0.1:{cluster.web_port(node)}{path}",
                expected=expected,
                connections=per_node[kind],
                seconds=seconds,
                clients=files.get((kind, node)),
            )
        except BenchSetupError as error:
            errors.append(error)

    for kind in urls:
        for node in nodes:
            thread = threading.Thread(target=load, args=(kind, node), daemon=True)
            thread.start()
            threads.append(thread)
    probe = HealthProbe(cluster.web_port(1), began) if run.fault else None
    if probe is not None:
        probe.start()
    if chaos:
        chaos_run(cluster, run, seconds=args.scale_seconds, began=began, identities=list(timed_ids))
    if failover:
        failover_run(cluster, run, seconds=args.scale_seconds, began=began)
    if run.fault:
        fault_run(cluster, run, began=began, probe=probe)
    for thread in threads:
        thread.join(timeout=seconds + 90)
    if probe is not None:
        run.health = probe.stop()
    run.seconds = time.monotonic() - began
    cpu_after = cpu_snapshot(cluster)
    run.waits, run.samples, run.lag_ms = sampler.stop()
    run.statements = statements_top(cluster.primary_url)
    run.cpu = cpu_spent(cpu_before, cpu_after, at_kill=run.cpu_at_kill)
    if errors:
        raise BenchSetupError(f"{run.label}: {errors[0]}")
    try:
        report = results.get(timeout=seconds + 120)
    except queues.Empty:
        raise BenchSetupError(f"{run.label}: the approver did not report back") from None
    finally:
        approver.join(timeout=10)
    if isinstance(report, BaseException):
        raise BenchSetupError(f"{run.label}: the approvals failed: {report!r}")
    run.approvals = report
    people = list(report.approved_at)
    # Every payout of the run reaches the bank before the next run starts on an empty queue; a
    # late one counts with its whole latency.
    until = time.time() + DRAIN_SECONDS
    while time.time() < until and len(payout.submitted_at(people)) < len(people):
        time.sleep(0.5)
    found = payout.submitted_at(people)
    run.approved, run.submitted = len(people), len(found)
    run.latency_ms = [(found[p][1] - report.approved_at[p]) * 1000 for p in people if p in found]
    run.to_payout_ms = [(found[p][0] - report.approved_at[p]) * 1000 for p in people if p in found]
    run.stored_events = webhook.Counts().now()[0] - events_before
    if chaos or failover or run.fault:
        run.proofs = proofs(
            people=people,
            accepted_deliveries=sum(
                load.requests - load.bad for (kind, _n), load in run.loads.items() if kind == "webhook"
            ),
            stored_deliveries=run.stored_events,
            # The webhooks the killed standing worker had claimed come back when their lease ends.
            drain_until=max(until, run.work_killed_at + settings.STANDING_WORK_LEASE_SECONDS + 90),
            held=run.held,
        )
    return run


def chaos_run(cluster, run: Run, *, seconds: float, began: float, identities: list) -> None:
    """During the load: a web node, the task cluster and the standing worker (while it holds a
    payout batch) die with SIGKILL, the replica restarts, and the dead come back as systemd would
    bring them back."""

    def at(fraction: float) -> None:
        time.sleep(max(0.0, began + seconds * fraction - time.monotonic()))

    def event(text: str) -> None:
        run.events.append(f"{time.monotonic() - began:.1f} s {text}")

    def kill(name: str) -> None:
        group = cluster.groups[name]
        run.cpu_at_kill[name] = group_cpu(group.pid)
        group.kill()

    at(0.25)
    kill("web2")
    event("web node 2 killed (SIGKILL to its process group)")
    kill("qcluster")
    event("the task cluster killed (SIGKILL to its process group)")
    # The moment a batch is seen held: a reading of the worker's CPU first would come too late.
    work = cluster.groups["work"]
    caught, run.cpu_at_kill["work"], run.cpu_at_kill[BANK_THREADS] = batch_watch(
        cluster.primary_url, identities=identities, until=began + seconds * 0.4, pid=work.pid
    )
    work.kill()
    run.work_killed_at = time.time()
    run.held = batch_held(cluster.primary_url, caught)
    event(
        "the standing worker killed (SIGKILL to its process group) "
        + (
            f"holding {len(run.held)} payouts claimed as submitted and not yet answered "
            f"({sum(run.held.values())} of them already at the bank)"
            if run.held
            else "holding no payout batch"
        )
    )
    at(0.4)
    run.cpu_at_kill["postgres replica"] = group_cpu(postmaster_pid(cluster.data_dir("replica")) or 0)
    cluster.replica_restart()
    event("the replica restarted (" + ("by Patroni" if cluster.ha else "pg_ctl restart") + ")")
    at(0.55)
    cluster.web_start(2)
    cluster.worker_start("qcluster")
    cluster.worker_start("work")
    event("web node 2, the task cluster and the standing worker started again")
    cluster.web_ready(2)
    event("web node 2 answers")


def failover_run(cluster, run: Run, *, seconds: float, began: float) -> None:
    """During the load: the primary's machine dies (its Patroni and its PostgreSQL, SIGKILL), the
    synchronous replica is promoted by Patroni once the leader key expires, and every process finds
    it through its multi-host URL; the dead node comes back as systemd would bring it back and
    rejoins as the replica. The outage: from the kill to the first write the new primary accepts."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.db import connections

    def event(text: str) -> None:
        run.events.append(f"{time.monotonic() - began:.1f} s {text}")

    time.sleep(max(0.0, began + seconds * 0.3 - time.monotonic()))
    node = cluster.primary_node()
    if node is None:
        event("no primary found to kill")
        return
    pid = postmaster_pid(cluster.node_dir(node))
    run.cpu_at_kill["postgres primary"] = group_cpu(pid or 0)
    killed = time.monotonic()
    cluster.node_kill(node)
    event(f"the primary ({node}) killed: its Patroni and its PostgreSQL, SIGKILL")
    promoted = None
    while time.monotonic() - killed < FAILOVER_TIMEOUT:
        try:
            with psycopg.connect(
                cluster.primary_url, autocommit=True, application_name="bench-failover"
            ) as conn:
                conn.execute("CREATE TEMPORARY TABLE failover_probe (written int)")
                conn.execute("INSERT INTO failover_probe VALUES (1)")
            promoted = cluster.primary_node()
            break
        except psycopg.Error:
            time.sleep(0.2)
    run.outage_seconds = time.monotonic() - killed
    if promoted is None:
        event(f"no new primary took writes within {FAILOVER_TIMEOUT:.0f} s")
        run.outage_seconds = float("inf")
    else:
        event(f"{promoted} promoted: a write accepted {run.outage_seconds:.1f} s after the kill")
    # This thread's connection went with the old primary: the proofs' queries connect afresh.
    connections.close_all()
    cluster.groups[node].start()
    event(f"{node} started again (Patroni rejoins it as the replica)")


FAILOVER_TIMEOUT = 90.0
# Webhook deliveries a wrk connection sends per second on a loaded cluster, with room.
DELIVERIES_PER_CONNECTION_SECOND = 100
FAULT_AFTER_SECONDS = 3.0

# The faults a run can be made with (--scale-runs fault-...): how long each lasts by default.
FAULTS = {
    "fault-primary-restart": 0.0,  # the primary's PostgreSQL killed (SIGKILL) and started again
    "fault-redis": 30.0,  # Redis killed, started again 30 s later
    "fault-pgbouncer": 0.0,  # PgBouncer killed (SIGKILL), started again as systemd would
    "fault-worker-stop": 85.0,  # the standing worker frozen (SIGSTOP) for 85 s, then SIGCONT
}


class HealthProbe(threading.Thread):
    """/healthz/ready and /healthz/work/ of a web node, twice a second: (seconds into the run,
    the two statuses, the work check's problems)."""

    def __init__(self, port: int, began: float):
        super().__init__(daemon=True)
        self.port, self.began, self.seen, self.stopping = port, began, [], threading.Event()

    def _get(self, path: str) -> tuple[int, str]:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", headers={"Authorization": f"Bearer {MONITORING_TOKEN}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as answer:  # noqa: S310 (http, our node)
                return answer.status, ""
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode(errors="replace")[:300]
        except OSError:
            return 0, "no answer"

    def run(self):
        while not self.stopping.wait(0.5):
            ready, _ = self._get("/healthz/ready")
            work, why = self._get("/healthz/work/")
            self.seen.append((time.monotonic() - self.began, ready, work, why))

    def stop(self) -> list:
        self.stopping.set()
        self.join(timeout=10)
        return self.seen


def fault_run(cluster, run: Run, *, began: float, probe) -> None:
    """FAULT_AFTER_SECONDS into the load, the run's fault (FAULTS), held run.fault_seconds, then undone as
    systemd (or a person) would; the health probe watches throughout."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.db import connections

    def event(text: str) -> None:
        run.events.append(f"{time.monotonic() - began:.1f} s {text}")

    time.sleep(max(0.0, began + FAULT_AFTER_SECONDS - time.monotonic()))
    run.fault_at = time.monotonic() - began
    if run.fault == "fault-primary-restart":
        cluster.primary_restart()
        event("the primary's PostgreSQL killed (SIGKILL to the postmaster) and started again")
        connections.close_all()
    elif run.fault == "fault-redis":
        cluster.groups["redis"].kill()
        event("Redis killed (SIGKILL)")
        time.sleep(run.fault_seconds)
        cluster.redis_start()
        event("Redis started again")
    elif run.fault == "fault-pgbouncer":
        cluster.groups["pgbouncer"].kill()
        event("PgBouncer killed (SIGKILL)")
        time.sleep(1)
        cluster.pgbouncer_start()
        event("PgBouncer started again (1 s later, as systemd would)")
    elif run.fault == "fault-worker-stop":
        cluster.groups["work"].send_signal(signal.SIGSTOP)
        event(f"the standing worker frozen (SIGSTOP) for {run.fault_seconds:.0f} s")
        time.sleep(run.fault_seconds)
        cluster.groups["work"].send_signal(signal.SIGCONT)
        event("the standing worker woken (SIGCONT)")
    run.fault_end = time.monotonic() - began


def fault_figures(run: Run) -> dict:
    """From the health probe: when /healthz/work/ first failed after the fault began (the frozen
    worker noticed), and when both checks were last seen failing (recovered just after)."""
    after = [(at, ready, work) for at, ready, work, _why in run.health if at >= run.fault_at]
    work_failed = next((at for at, _ready, work in after if work != 200), None)
    last_bad = max((at for at, ready, work in after if ready != 200 or work != 200), default=None)
    return {
        "health_detect_seconds": None if work_failed is None else work_failed - run.fault_at,
        "recovery_seconds": 0.0 if last_bad is None else max(0.0, last_bad + 0.5 - run.fault_end),
        "health_samples": len(run.health),
    }


# Payouts committed as submitted whose answer is not applied yet: a batch between its claim and
# its answers; with whether the bank booked it already (its answer is then what the kill loses).
HELD_QUERY = """
    SELECT p.id, EXISTS (SELECT 1 FROM payouts_sandboxbankpayment s WHERE s.end_to_end_id = p.end_to_end_id)
      FROM payouts_payout p WHERE p.status = 'submitted'
"""
# The run's approved people only: their payouts are the standing worker's batches (the claimants'
# go through the task cluster, killed just before).
HELD_OF_PEOPLE = (
    " AND p.participant_id IN (SELECT participant_id FROM verification_identity WHERE id = ANY(%s))"
)


def batch_watch(url: str, *, identities: list, until: float, pid: int) -> tuple[list[int], float, float]:
    """Wait (polling the primary every few ms, until `until` at most) for the standing worker
    (process `pid`) to hold a batch: payouts claimed as submitted and not yet answered, preferably
    ones the bank has already booked. The ids seen (empty when none was seen in time), and the
    worker's CPU seconds and its sender threads' at the last poll (cheap reads of /proc)."""
    seen, half = [], time.monotonic() + (until - time.monotonic()) / 2
    cpu = threads = 0.0
    with psycopg.connect(url, autocommit=True, application_name="bench-chaos") as conn:
        while time.monotonic() < until:
            cpu = (web._stat(str(pid)) or ("", 0, cpu))[2]
            threads = payout.sender_threads_cpu(pid) or threads
            rows = conn.execute(HELD_QUERY + HELD_OF_PEOPLE, [identities]).fetchall()
            if any(booked for _id, booked in rows) or (rows and time.monotonic() > half):
                return [pk for pk, _booked in rows], cpu, threads
            seen = seen or [pk for pk, _booked in rows]
            time.sleep(0.002)
    return seen, cpu, threads


def batch_held(url: str, caught: list[int]) -> dict:
    """Of the payouts seen held, those still without their answer once the worker is dead:
    payout id -> whether the bank had booked it."""
    if not caught:
        return {}
    with psycopg.connect(url, autocommit=True, application_name="bench-chaos") as conn:
        rows = conn.execute(HELD_QUERY + " AND p.id = ANY(%s)", [caught]).fetchall()
    return dict(rows)


def proofs(
    *, people: list, accepted_deliveries: int, stored_deliveries: int, drain_until: float, held=None
) -> dict:
    """Nothing lost or doubled: every approved claim there, each paid once and settled, no
    EndToEndId sent twice, no payout sent again after the bank had it (its Idempotency-Key would
    hide the copy from the count before), every payout a killed worker held (`held`: payout id ->
    the bank had it) settled, every accepted webhook stored and processed, the ledger and the bank
    agree. Waits (until drain_until) for the sweeps to finish what the killed workers held."""
    held = held or {}
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.utils.module_loading import import_string

    # By the names the schedule and the settings store (they stay where the code moves).
    statements_fetch = import_string("payouts.reconciliation.tasks.bank_statements_fetch_task")
    external_checks = [import_string(path) for path in settings.LEDGER_EXTERNAL_CHECKS]

    def counts() -> dict:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(DISTINCT participant_id) FROM verification_actionclaim "
                "WHERE participant_id = ANY(%s) AND status = 'approved'",
                [people],
            )
            claims = cursor.fetchone()[0]
            cursor.execute(
                "SELECT count(*), count(*) FILTER (WHERE status = 'settled'), count(DISTINCT participant_id) "
                "FROM payouts_payout WHERE participant_id = ANY(%s)",
                [people],
            )
            payouts, settled, paid_people = cursor.fetchone()
            cursor.execute(
                "SELECT count(*) FROM (SELECT end_to_end_id FROM payouts_sandboxbankpayment "
                "GROUP BY 1 HAVING count(*) > 1) twice"
            )
            sent_twice = cursor.fetchone()[0]
            # A payout reopened to be sent again (payout_status_check found nothing at the bank)
            # although the bank had booked it before: a resubmission where a query was owed.
            cursor.execute(
                "SELECT count(DISTINCT e.payout_id) FROM payouts_payoutevent e "
                "JOIN payouts_payout p ON p.id = e.payout_id "
                "JOIN payouts_sandboxbankpayment s ON s.end_to_end_id = p.end_to_end_id "
                "WHERE e.from_status IN ('submitted', 'unknown') AND e.to_status = 'payee_verified' "
                "AND s.received_at < e.at"
            )
            sent_again = cursor.fetchone()[0]
            # Those the bank had when their worker died: settled by the answer asked for (or its
            # webhook), never sent a second time.
            cursor.execute(
                "SELECT count(*) FROM payouts_payout "
                "WHERE id = ANY(%s) AND status = 'settled' AND submissions = 1",
                [[pk for pk, booked in held.items() if booked]],
            )
            held_booked_settled = cursor.fetchone()[0]
            cursor.execute(
                "SELECT count(*) FROM payouts_payout WHERE id = ANY(%s) AND status = 'settled'", [list(held)]
            )
            held_settled = cursor.fetchone()[0]
            cursor.execute(
                "SELECT count(*) FROM verification_providerevent "
                "WHERE provider = 'whatsapp' AND processed_at IS NULL"
            )
            unprocessed = cursor.fetchone()[0]
        return {
            "approved people": len(people),
            "approved claims found": claims,
            "payouts": payouts,
            "people paid": paid_people,
            "payouts settled": settled,
            "EndToEndIds sent twice": sent_twice,
            "payouts sent again after the bank had them": sent_again,
            "payouts held by a killed worker": len(held),
            "of them settled": held_settled,
            "held and already at the bank": sum(held.values()),
            "of them settled, not sent again": held_booked_settled,
            "webhooks answered 200": accepted_deliveries,
            "webhooks stored": stored_deliveries,
            "webhooks not yet processed": unprocessed,
        }

    found = counts()
    while time.time() < drain_until and (
        found["payouts settled"] < len(people)
        or found["of them settled"] < len(held)
        or found["webhooks not yet processed"]
    ):
        time.sleep(2)
        found = counts()
    statements_fetch()  # the bank's newest statements, as the minute's schedule would fetch them
    try:
        call_command("ledger_check", stdout=open(os.devnull, "w"), stderr=open(os.devnull, "w"))  # noqa: SIM115
        found["ledger_check"] = "clean"
    except Exception as error:  # CommandError: drift found; anything else is a failed check too
        found["ledger_check"] = f"FAILED: {error}"
    found["bank drift problems"] = sum(len(check()) for check in external_checks)
    return found


def proof_failures(found: dict) -> list[str]:
    """What the proofs found wrong (empty when nothing was lost or doubled)."""
    wrong = []
    people = found["approved people"]
    if found["approved claims found"] != people:
        wrong.append(f"{people - found['approved claims found']} approved claims missing")
    if found["payouts"] != people or found["people paid"] != people:
        wrong.append(f"{found['payouts']} payouts for {people} approved people ({found['people paid']} paid)")
    if found["payouts settled"] != people:
        wrong.append(f"{people - found['payouts settled']} payouts not settled")
    if found["EndToEndIds sent twice"]:
        wrong.append(f"{found['EndToEndIds sent twice']} EndToEndIds reached the bank twice")
    if found["payouts sent again after the bank had them"]:
        wrong.append(
            f"{found['payouts sent again after the bank had them']} payouts sent again after the bank "
            "had them (queried was owed)"
        )
    if found["of them settled"] < found["payouts held by a killed worker"]:
        wrong.append(
            f"{found['payouts held by a killed worker'] - found['of them settled']} payouts a killed worker "
            "held not settled"
        )
    if found["of them settled, not sent again"] < found["held and already at the bank"]:
        wrong.append(
            f"{found['held and already at the bank'] - found['of them settled, not sent again']} payouts "
            "already at the bank when their worker died not settled, or sent again"
        )
    if found["webhooks stored"] < found["webhooks answered 200"]:
        wrong.append(
            f"{found['webhooks answered 200'] - found['webhooks stored']} accepted webhooks not stored"
        )
    if found["webhooks not yet processed"]:
        wrong.append(f"{found['webhooks not yet processed']} stored webhooks never processed")
    if found["ledger_check"] != "clean":
        wrong.append(f"ledger_check {found['ledger_check']}")
    if found["bank drift problems"]:
        wrong.append(f"{found['bank drift problems']} bank drift problems")
    return wrong


GROUP_NAMES = {
    "work": "standing worker (payout batches, webhooks, bank details)",
    "qcluster": "task cluster",
}


def payout_p99(run: Run) -> float:
    """payout.p99_with_missing's: a payout that never reached the bank counts at infinity."""
    return percentile(run.latency_ms + [float("inf")] * (run.approved - run.submitted), 0.99)


def run_text(run: Run, note) -> None:
    for kind in ("landing", "claim", "webhook", "dashboard"):
        note(
            f"scale {run.label}: {kind} {run.rps(kind):.0f} req/s, p99 {run.p99(kind):.0f} ms "
            f"(per node: "
            + ", ".join(
                f"{n}: {load.requests} in {load.seconds:.0f} s, p99 {load.p99_ms:.0f} ms, "
                f"errors {load.errors}"
                for (k, n), load in sorted(run.loads.items())
                if k == kind
            )
            + ")"
        )
    approvals = run.approvals
    rate = len(approvals.call_ms) / max(approvals.ended - approvals.started, 1e-9)
    note(
        f"scale {run.label}: rewards {len(approvals.call_ms)} approvals at {rate:.1f}/s "
        f"(a call p99 {percentile(approvals.call_ms, 0.99):.0f} ms); payouts {run.submitted} of "
        f"{run.approved} at the bank, approval -> bank (as the payout part measures it) p50 "
        f"{percentile(run.latency_ms, 0.5):.0f} ms, p99 {payout_p99(run):.0f} ms (of which approval -> "
        f"payout made p50 {percentile(run.to_payout_ms, 0.5):.0f} / p99 "
        f"{percentile(run.to_payout_ms, 0.99):.0f} ms); webhooks stored {run.stored_events}; "
        f"the warm-up's payouts at the bank in {approvals.warmup_seconds:.1f} s"
        + (f" (not approved at first: {approvals.warmup_problems})" if approvals.warmup_problems else "")
    )
    requests = max(run.requests() + run.approved, 1)
    parts = ", ".join(
        f"{GROUP_NAMES.get(name, name)} {seconds:.1f} s ({seconds * 1000 / requests:.1f} ms)"
        for name, seconds in sorted(run.cpu.items())
    )
    note(f"scale {run.label}: CPU over {run.seconds:.0f} s (per request or approval): {parts}")
    approval_ms = (
        (approvals.cpu_seconds + approvals.backend_cpu_seconds) * 1000 / max(len(approvals.call_ms), 1)
    )
    note(
        f"scale {run.label}: apart, the approving process (the rewards themselves) "
        f"{approvals.cpu_seconds:.1f} s and its PostgreSQL backend {approvals.backend_cpu_seconds:.1f} s "
        f"(within the primary's), {approval_ms:.1f} ms an approval"
    )
    note(
        f"scale {run.label}: PostgreSQL by total time: "
        + "; ".join(f"{total:.0f} ms in {calls} calls: {query}" for calls, total, query in run.statements[:4])
    )
    waited = sum(run.waits.values())
    note(
        f"scale {run.label}: lock waits in {run.samples} samples (every {SAMPLE_SECONDS * 1000:.0f} ms): "
        f"{waited} waiting backends seen"
        + (
            ": "
            + "; ".join(
                f"{count}x {event} on {relation or '-'} ({waiter} behind {holder}): {query}"
                for (event, relation, query, waiter, holder), count in run.waits.most_common(5)
            )
            if waited
            else ""
        )
    )
    if run.lag_ms:
        note(
            f"scale {run.label}: the replica's replay lag p50 {percentile(run.lag_ms, 0.5):.1f} ms, "
            f"max {max(run.lag_ms):.1f} ms ({len(run.lag_ms)} samples)"
        )
    for text in run.events:
        note(f"scale {run.label}: chaos at {text}")


def wait_kinds(run: Run) -> Counter:
    """Lock-wait samples by what was waited on: the hot rows the design accepts (the campaign
    budget), one person's own rows (their requests meeting each other or the worker processing
    them), and anything else, which would be a lock many people share; and whether the holder ran
    on another process group than the waiter (another node, or a worker)."""
    kinds = Counter()
    for (_event, relation, query, waiter, holders), count in run.waits.items():
        text = f"{relation} {query}"
        if any(hot in text for hot in EXPECTED_HOT):
            kind = "hot"
        elif any(own in text for own in PER_PERSON):
            kind = "person"
        else:
            kind = "other"
        across = {_node(h) for h in holders.split(",")} != {_node(waiter)}
        kinds[(kind, "across" if across else "within")] += count
    return kinds


def measure(args, note) -> dict:
    runs = [
        Run("1-node", 1, "direct"),
        Run("2-nodes", 2, "direct"),
        Run("1-node-django-pool", 1, "django"),
        Run("1-node-pgbouncer", 1, "pgbouncer"),
        Run("chaos", 2, "direct"),
        Run("failover", 2, "direct"),
    ]
    if args.scale_runs:
        runs = [run for run in runs if run.label in args.scale_runs.split(",")]
        # The faults, one run each, only when named (each lasts its fault and more).
        for name, hold in FAULTS.items():
            if name in args.scale_runs.split(","):
                pooling = "pgbouncer" if name == "fault-pgbouncer" else "direct"
                runs.append(Run(name, 2, pooling, fault=name, fault_seconds=hold))
    count = max(1, round(args.scale_rate * args.scale_seconds))
    warm = payout.WARMUP_PER_WORKER
    home = web.ROOT / "tmp" / "bench-cluster"

    stale_down(home)
    if not ha_available():
        for run in runs:
            if run.label == "failover":
                run.skipped = "Patroni and etcd are not installed (apt-get install patroni etcd-server)"
                note(f"scale failover: skipped: {run.skipped}")
        runs = [run for run in runs if not run.skipped]
    secret_key = "bench-scale-" + os.urandom(8).hex()
    cluster = Cluster(
        home=home,
        nodes=2,
        database=DATABASE,
        env=cluster_env(secret_key=secret_key),
        web_workers=args.scale_web_workers,
    )
    done = {}
    try:
        cluster.destroy()
        cluster.up(web=False, workers=False)
        os.environ["SECRET_KEY"] = secret_key
        clients, plan, owner_cookie = setup(
            cluster,
            people=args.scale_claimants,
            runs={run.label: (warm, count) for run in runs},
            note=note,
        )
        tokens = []
        with tempfile.TemporaryDirectory(prefix="joyback-scale-") as tmp:
            for run in runs:
                cluster.pooling = run.pooling
                if run.pooling == "pgbouncer" and "pgbouncer" not in cluster.groups:
                    cluster.pgbouncer_start()
                for node in range(1, run.nodes + 1):
                    cluster.web_start(node)
                for node in range(1, run.nodes + 1):
                    cluster.web_ready(node)
                cluster.workers_start()
                try:
                    done[run.label] = one_run(
                        cluster,
                        run,
                        plan=plan,
                        clients=clients,
                        tokens=tokens,
                        owner_cookie=owner_cookie,
                        tmp=Path(tmp),
                        args=args,
                        note=note,
                        chaos=run.label == "chaos",
                        failover=run.label == "failover",
                    )
                finally:
                    for name in [
                        n for n in cluster.groups if n.startswith("web") or n in ("qcluster", "work")
                    ]:
                        cluster.groups.pop(name).stop()
                run_text(run, note)
    except ClusterError as error:
        raise BenchSetupError(f"the cluster: {error}") from error
    finally:
        # deferred: the bench sets Django up (its settings, per process) before importing apps
        from django.apps import apps

        if apps.ready:
            # deferred: the bench sets Django up (its settings, per process) before importing apps
            from django.db import connections

            connections.close_all()
        cluster.down()
    return done


def lines(done: dict, *, note, line) -> list[str]:
    out = []
    one, two = done.get("1-node"), done.get("2-nodes")
    if one and two:
        out.append(
            line("scale_2nodes_requests", two.rps(), "req/s", "scale_1node_requests", one.rps(), "req/s")
        )
    for name, run in (("1node", one), ("2nodes", two)):
        if run is None:
            continue
        for kind in ("landing", "claim", "webhook", "dashboard"):
            out.append(line(f"scale_{name}_{kind}_p99", run.p99(kind), "ms", "target", P99_TARGET_MS, "ms"))
        out.append(
            line(
                f"scale_{name}_payout_p99",
                payout_p99(run),
                "ms",
                "target",
                PAYOUT_P99_TARGET_MS,
                "ms",
            )
        )
    for label, name in (("1-node-django-pool", "django_pool"), ("1-node-pgbouncer", "pgbouncer")):
        if label in done and one:
            run = done[label]
            out.append(
                line(f"scale_{name}_requests", run.rps(), "req/s", "scale_1node_requests", one.rps(), "req/s")
            )
    for label, run in done.items():
        kinds = wait_kinds(run)
        note(
            f"scale {label}: lock-wait samples by what was waited on (holder in another process group / "
            "the same): "
            + ", ".join(
                f"{text} {kinds[(kind, 'across')]} / {kinds[(kind, 'within')]}"
                for kind, text in (
                    ("hot", "the campaign budget, campaign and rule rows (accepted)"),
                    ("person", "one person's own rows"),
                    ("other", "anything else"),
                )
            )
        )
        if label == "2-nodes":
            other = kinds[("other", "across")] + kinds[("other", "within")]
            out.append(f"bench scale_shared_lock_waits {other} samples vs target 0 samples")
    if "chaos" in done:
        chaos = done["chaos"]
        found = chaos.proofs
        note("chaos proofs: " + ", ".join(f"{key} {value}" for key, value in found.items()))
        wrong = proof_failures(found)
        if not chaos.held:
            wrong.append(
                "the standing worker held no payout batch when it was killed: that case went unproven"
            )
        note("chaos: " + ("nothing lost or doubled" if not wrong else "; ".join(wrong)))
        out.append(f"bench chaos_lost_or_doubled {len(wrong)} problems vs target 0 problems")
    if "failover" in done:
        run = done["failover"]
        found = run.proofs
        note("failover proofs: " + ", ".join(f"{key} {value}" for key, value in found.items()))
        wrong = proof_failures(found)
        note(
            "failover: "
            + ("nothing acknowledged lost, nothing paid twice" if not wrong else "; ".join(wrong))
        )
        out.append(
            f"bench failover_outage_seconds {run.outage_seconds:.1f} s "
            f"vs target {FAILOVER_TARGET_SECONDS:.0f} s"
        )
        out.append(
            f"bench failover_client_errors {run.errors() + run.approval_errors()} errors "
            f"({run.errors()} HTTP of {run.requests()} requests, {run.approval_errors()} approvals of "
            f"{len(run.approvals.call_ms)})"
        )
        out.append(f"bench failover_lost_or_doubled {len(wrong)} problems vs target 0 problems")
    for label, run in done.items():
        if not run.fault:
            continue
        name = label.removeprefix("fault-").replace("-", "_")
        found, figures = run.proofs, fault_figures(run)
        wrong = proof_failures(found)
        note(f"{label} proofs: " + ", ".join(f"{key} {value}" for key, value in found.items()))
        note(
            f"{label}: "
            + ("nothing lost, doubled or stuck" if not wrong else "; ".join(wrong))
            + "; health: "
            + ", ".join(f"{at:.1f} s ready {ready} work {work}" for at, ready, work, _why in run.health[::4])
        )
        out.append(
            f"bench fault_{name}_client_errors {run.errors() + run.approval_errors()} errors "
            f"({run.errors()} HTTP of {run.requests()} requests, {run.approval_errors()} approvals)"
        )
        out.append(f"bench fault_{name}_recovery_seconds {figures['recovery_seconds']:.1f} s")
        if name == "worker_stop":
            detect = figures["health_detect_seconds"]
            out.append(
                f"bench fault_worker_stop_health_detect_seconds "
                f"{'never' if detect is None else f'{detect:.1f}'} s vs target 30 s"
            )
        out.append(f"bench fault_{name}_lost_or_doubled {len(wrong)} problems vs target 0 problems")
    return out
