"""Approval -> PSP submission: a reward approved, its payout made and sent to the (sandbox) bank.

The issue's target: "Approval -> PSP submission in the sandbox at 50 approvals/s: p99 < 1 s", and
the CPU one payout costs from approval to bank <= 10 ms, the sandbox bank's share apart.

The path measured is the product's own, end to end, with nothing called directly:

1. an approval: verification.services.rewards.action_reward() for a WhatsApp opt-in (an instant action:
   the reward is posted, budget -> the person's payable, in one durable transaction), which marks
   the person due for a payout in that transaction (Participant.payout_due_at; no task is queued);
2. the standing worker (`manage.py work`, its own process, SANDBOX on) claims the people due in
   batches on each pass (payouts.pipeline): their payouts made, posted to the ledger in one batch
   and claimed as submitted in one transaction, then POSTed concurrently to Adyen's Transfers API
   (payouts/providers/adyen.py: POST /btl/v4/transfers with its Idempotency-Key), which in the
   sandbox is the in-app bank reached through the in-process loopback transport, in the worker's
   sender threads. The bank books it (SandboxBankPayment.received_at): that is the submission
   time. The answers (settled at once for these accounts) are applied in one more transaction,
   and the person's notification is sent. The task cluster (`manage.py qcluster`) runs beside it,
   as in production, with nothing of the payouts' path on it.

The latency of one approval is received_at of the person's payment (joined through
Payout.end_to_end_id) minus the moment action_reward() returned in the approving process, i.e.
after the approval committed; both clocks are this machine's wall clock.

Data: one live whatsapp_reward campaign, funded, made through the services; each person a
participant with a verified WhatsApp identity and current SEPA payee details (their own valid
IBAN, their own email; shared details are a fraud signal) given before the approval, as in the
product, where the bank details are entered once and later rewards are paid to them. Their
Verification of Payee is already done (payee_vop_check through the PSP adapter at setup): the
product asks the bank when the details are entered (payee_onboard, enqueued by the form), not
when a reward is approved, so at approval time it is behind the person. A payout whose VoP is
missing does the check inline (payouts.vop.payout_payee_verify); that is not the path here.

Approvals come from --payout-approvers (2) spawned processes at once (each its own interpreter
and connection, as web workers would be, taking turns in the slots so that together they keep the
pace: one process alone tops out below 50 a second), paced at --payout-rate a second for
--payout-seconds, then again at --payout-high-rate (a "#" line); a few untimed approvals first let
the workers connect. Each note says the rate achieved, which is what the results are for.

The standing worker gathers people due into batches as in production (PAYOUT_GATHER_MS, 200 ms
unless the environment sets it; PAYOUT_GATHER_MS=0 in the environment gives the pipeline without
gathering, for a before/after on one checkout).

The notes give the CPU one payout costs, counted from the first timed approval until the last
one's settlement and notification are done: the standing worker and the task cluster (their
processes) with their PostgreSQL backends is the payout's cost; the sandbox bank's share (the
worker's sender threads, where the in-process bank answers, and the bank's own database
connections, named joyback-sandbox-bank) and the approving process (the approval itself, with its
backend) are printed apart. Every approved person must end with one payout and the bank with one
order per payout.
"""

import logging
import multiprocessing
import os
import queue as queues
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.bench import web
from tests.bench.server import BenchSetupError, Server, percentile

P99_TARGET_MS = 1000.0
CPU_TARGET_MS = 10.0
SEND_THREADS = 8
GATHER_MS = "200"  # PAYOUT_GATHER_MS's production default, unless the environment says otherwise
# See reward.py: the campaign-velocity fraud signal (1000 claims a minute on one campaign by
# default) would send the run's approvals to the review queue; 50 a second is 3000 a minute.
VELOCITY_LIMIT = 10**9
WARMUP_PER_WORKER = 3
READY_TIMEOUT = 90.0
DRAIN_SECONDS = 30.0


@dataclass(frozen=True)
class Setup:
    campaign_id: int
    rule_id: int
    reward: int
    people: dict  # run label -> (warm-up identity ids, timed identity ids)


@dataclass
class Approvals:
    started: float = 0.0  # time.time()
    ended: float = 0.0
    approved_at: dict = field(default_factory=dict)  # participant id -> time.time() after commit
    call_ms: list = field(default_factory=list)
    late_ms: list = field(default_factory=list)  # how far behind its slot each call started
    not_approved: list = field(default_factory=list)
    warmup_problems: list = field(default_factory=list)  # the warm-up's, apart from the timed run's
    warmup_seconds: float = 0.0
    cpu_seconds: float = 0.0  # this process, over the timed approvals
    backend_cpu_seconds: float = 0.0  # its PostgreSQL backend, over the timed approvals


def tree_cpu(root: int) -> float:
    """CPU seconds used so far by a process and all its descendants (the cluster's sentinel,
    pusher, monitor and workers), including workers that have ended: django-q2 replaces a worker
    after --recycle tasks, and an ended one's CPU is in its parent's count of waited-for children."""
    parents, used = {}, {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()
        ticks = sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
        parents[int(entry.name)], used[int(entry.name)] = int(fields[1]), ticks / web.TICK
    total = 0.0
    for pid, seconds in used.items():
        ancestor = pid
        while ancestor and ancestor != root:
            ancestor = parents.get(ancestor, 0)
        if ancestor == root:
            total += seconds
    return total


BANK_CONNECTION = "joyback-sandbox-bank"  # payouts.pipeline names the sender threads' connections
APPROVER_CONNECTION = "bench-approver"


def backends_cpu(dbname: str) -> dict:
    """pid -> (application name, CPU seconds) of every PostgreSQL backend connected to dbname now."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid, application_name FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            [dbname],
        )
        pids = cursor.fetchall()
    found = {}
    for pid, name in pids:
        if stat := web._stat(str(pid)):
            found[pid] = (name, stat[2])
    return found


def backends_spent(before: dict, after: dict) -> dict:
    """CPU seconds the backends used between two backends_cpu() readings, by whose they are."""
    spent = {"bank": 0.0, "approver": 0.0, "payouts": 0.0}
    for pid, (name, used) in after.items():
        who = {BANK_CONNECTION: "bank", APPROVER_CONNECTION: "approver"}.get(name, "payouts")
        spent[who] += used - before.get(pid, (name, 0.0))[1]
    return spent


SENDER_THREAD = "payout-send"  # payouts.pipeline.SENDER_NAME, as the kernel shows it


def sender_threads_cpu(pid: int) -> float:
    """CPU seconds of a process's payout sender threads (where the sandbox bank answers)."""
    total = 0.0
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            text = (task / "stat").read_text()
        except OSError:
            continue
        if text[text.index("(") + 1 : text.rindex(")")] != SENDER_THREAD:
            continue
        fields = text[text.rindex(")") + 2 :].split()
        total += (int(fields[11]) + int(fields[12])) / web.TICK
    return total


def cpu_pressure() -> str:
    """The kernel's CPU pressure (share of time runnable tasks waited for a CPU), if it tells."""
    try:
        fields = dict(part.split("=") for part in Path("/proc/pressure/cpu").read_text().split()[1:4])
    except (OSError, ValueError):
        return "not available"
    return f"{fields.get('avg10', '?')}% over 10 s, {fields.get('avg60', '?')}% over 60 s"


def bank_account(number: int):
    """Person `number`'s own IBAN, never one whose last digits make the sandbox bank reject,
    return, delay or question it (payouts.sandbox.bank's magic suffixes)."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from payouts.rails import iban_check
    from payouts.sandbox.bank import CHAOS_SUFFIX, MAGIC_SUFFIXES, MAGIC_VOP_SUFFIXES

    offset = number
    while True:
        account = iban_check(web.iban(offset))
        if account.iban[-4:] not in {*MAGIC_SUFFIXES, *MAGIC_VOP_SUFFIXES, CHAOS_SUFFIX}:
            return account
        offset += 100_000


def setup(*, runs: dict) -> Setup:
    """The campaign and, per run label, (warm-up, timed) people ready to be approved; untimed."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.contrib.auth import get_user_model
    from django.db import connection, connections

    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from campaigns.services.brands import brand_create
    from campaigns.services.campaigns import campaign_create, campaign_transition
    from campaigns.services.funding import campaign_fund
    from payouts.forms import CONSENT_VERSION
    from payouts.models.payees import VopResult
    from payouts.payees.services import payee_account_save
    from payouts.vop import payee_vop_check
    from tests.conftest import fund, verified
    from verification.services.participants import identity_attach, participant_create

    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per VoP request otherwise
    owner = get_user_model().objects.create_user(
        email="payout-owner@bench.localhost", password="bench-owner-pw"
    )
    brand = brand_create(name="Bench Payout Brand", slug="bench-payout-brand", owner=owner, currency="EUR")
    verified(brand)  # funding and payouts are open to verified brands only
    total = sum(warm + timed for warm, timed in runs.values())
    budget = 100 * total * 2_00
    fund(brand, budget, "EUR", reference="BENCH-PAYOUT")
    campaign = campaign_create(
        brand=brand,
        name="Bench Payday Club",
        slug="bench-payout",
        package="whatsapp_reward",
        currency="EUR",
        countries=["DE"],
        languages=["en"],
        headline="Join our WhatsApp club, get paid",
    )
    campaign_fund(campaign=campaign, amount=budget)
    campaign = campaign_transition(campaign=campaign, to="live")
    rule = campaign.rules.get(trigger="whatsapp_optin")
    number = 0
    people = {}
    for label, (warm, timed) in runs.items():
        ids = []
        for _ in range(warm + timed):
            person = participant_create(brand=brand)
            identity = identity_attach(
                participant=person,
                provider="whatsapp",
                subject=f"49170{number:08d}",
                display_name=f"Bench Payee {number}",
            )
            payee = payee_account_save(
                participant=person,
                name=f"Bench Payee {number}",
                email=f"payee-{number}@bench.localhost",
                phone="",
                bank_account=bank_account(number),
                currency="EUR",
                consent_version=CONSENT_VERSION,
                onboard=False,  # the VoP below is what onboarding does; nothing is owed yet
            )
            check = payee_vop_check(payee=payee)
            if check is None or check.result != VopResult.MATCH:
                raise BenchSetupError(f"the sandbox bank's VoP answered {check and check.result} for a payee")
            ids.append(identity.pk)
            number += 1
        people[label] = (tuple(ids[:warm]), tuple(ids[warm:]))
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    connections.close_all()
    return Setup(campaign_id=campaign.pk, rule_id=rule.pk, reward=rule.reward_amount, people=people)


def submitted_at(participant_ids) -> dict:
    """participant id -> (payout created_at, the bank's received_at) as epoch seconds, for those
    whose payment the sandbox bank has booked (the first booking, were there ever two)."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT p.participant_id, extract(epoch FROM min(p.created_at)), "
            "extract(epoch FROM min(s.received_at)) "
            "FROM payouts_payout p JOIN payouts_sandboxbankpayment s ON s.end_to_end_id = p.end_to_end_id "
            "WHERE p.participant_id = ANY(%s) GROUP BY p.participant_id",
            [list(participant_ids)],
        )
        return {pid: (float(created), float(received)) for pid, created, received in cursor.fetchall()}


def approvals_run(
    *, rule_id, warmup_ids, timed_ids, rate: float, timed_start=None, share=(0, 1), together=None
) -> Approvals:
    """Approve the warm-up people, wait for their payments to reach the bank, then approve the
    timed people at a steady rate, each call in its slot (late calls go at once, never bunched).

    share (index, of): this process is one of `of` approving at once (as web workers are); it
    takes every of-th person from `index` on, in the slots between the others' (`together`, a
    barrier, starts their clocks at once)."""
    index, of = share
    warmup_ids, timed_ids = warmup_ids[index::of], timed_ids[index::of]
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.db import DatabaseError, connection

    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from verification.models import ActionRule, ClaimStatus, Identity
    from verification.services.refusals import ClaimRefused
    from verification.services.rewards import ClaimContext, action_reward

    with connection.cursor() as cursor:  # its backend's CPU is the approval's, printed apart
        cursor.execute(f"SET application_name = '{APPROVER_CONNECTION}'")
        cursor.execute("SELECT pg_backend_pid()")
        backend = str(cursor.fetchone()[0])
    rule = ActionRule.objects.select_related("campaign").get(pk=rule_id)
    by_id = Identity.objects.select_related("participant").in_bulk([*warmup_ids, *timed_ids])
    report = Approvals()

    def approve(identity) -> str:
        try:
            claim = action_reward(rule=rule, identity=identity, context=ClaimContext())
        except ClaimRefused as refusal:
            return f"refused: {refusal.code}"
        except DatabaseError as error:
            # The primary lost (the scale part's failover): not acknowledged, so not counted as
            # approved; the next call connects to whichever server is the primary by then.
            try:
                connection.close()
            except DatabaseError:
                connection.connection = None
            return f"database: {type(error).__name__}"
        if claim.status != ClaimStatus.APPROVED:
            return f"{claim.status}: {claim.reason}"
        return ""

    def warm(identity) -> str:
        # The warm-up is asked again while the database does not answer (a cluster still settling
        # after the previous run's faults): the timed run starts on a cluster that takes writes.
        deadline = time.monotonic() + READY_TIMEOUT
        while (problem := approve(identity)).startswith("database: ") and time.monotonic() < deadline:
            time.sleep(0.5)
        return problem

    began = time.monotonic()
    warm_people = []
    for identity_id in warmup_ids:
        problem = warm(by_id[identity_id])
        if problem:
            report.warmup_problems.append(problem)
        else:
            warm_people.append(by_id[identity_id].participant_id)
    if not warm_people:
        raise BenchSetupError(f"no warm-up approval went through: {report.warmup_problems}")
    # Those approved reach the bank: the workers run (a person not approved is never paid).
    while len(submitted_at(warm_people)) < len(warm_people):
        if time.monotonic() - began > READY_TIMEOUT:
            raise BenchSetupError(
                f"the workers sent {len(submitted_at(warm_people))} of {len(warm_people)} warm-up "
                f"payouts to the bank in {READY_TIMEOUT:.0f} s"
                + (f"; not approved: {report.warmup_problems}" if report.warmup_problems else "")
            )
        time.sleep(0.2)
    report.warmup_seconds = time.monotonic() - began
    time.sleep(1)  # the warm-up's follow-up tasks (notifications) out of the way

    if together is not None:
        together.wait(timeout=READY_TIMEOUT)
    if timed_start is not None and index == 0:
        timed_start.set()  # the parent reads the CPU counters now
    report.started = time.time()
    start = time.monotonic()
    cpu = time.process_time()
    backend_cpu = (web._stat(backend) or ("", 0, 0.0))[2]
    for number, identity_id in enumerate(timed_ids):
        slot = start + (index + number * of) / rate
        wait = slot - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        called = time.monotonic()
        report.late_ms.append(max(0.0, (called - slot) * 1000))
        problem = approve(by_id[identity_id])
        done = time.time()
        report.call_ms.append((time.monotonic() - called) * 1000)
        if problem:
            report.not_approved.append(problem)
        else:
            report.approved_at[by_id[identity_id].participant_id] = done
    report.ended = time.time()
    report.cpu_seconds = time.process_time() - cpu
    report.backend_cpu_seconds = (web._stat(backend) or ("", 0, 0.0))[2] - backend_cpu
    return report


def approvals_merge(reports: list[Approvals]) -> Approvals:
    """The approving processes' reports as one: their timed runs overlap, so from the first start
    to the last end, with their CPU added up."""
    merged = Approvals(
        started=min(r.started for r in reports),
        ended=max(r.ended for r in reports),
        warmup_seconds=max(r.warmup_seconds for r in reports),
        cpu_seconds=sum(r.cpu_seconds for r in reports),
        backend_cpu_seconds=sum(r.backend_cpu_seconds for r in reports),
    )
    for r in reports:
        merged.approved_at.update(r.approved_at)
        merged.call_ms += r.call_ms
        merged.late_ms += r.late_ms
        merged.not_approved += r.not_approved
        merged.warmup_problems += r.warmup_problems
    return merged


def approver_main(
    env: dict, rule_id, warmup_ids, timed_ids, rate, timed_start, results, share, together
) -> None:
    """Entry point of a spawned approving process."""
    try:
        os.environ.update({key: value for key, value in env.items() if value is not None})
        for key in [key for key, value in env.items() if value is None]:
            os.environ.pop(key, None)
        # deferred: the bench sets Django up (its settings, per process) before importing apps
        from tests.bench import ledger

        ledger.django_setup()
        report = approvals_run(
            rule_id=rule_id,
            warmup_ids=warmup_ids,
            timed_ids=timed_ids,
            rate=rate,
            timed_start=timed_start,
            share=share,
            together=together,
        )
        # deferred: the bench sets Django up (its settings, per process) before importing apps
        from django.db import connections

        connections.close_all()
        results.put(report)
    except BaseException as error:
        results.put(error)
        raise


class Cluster:
    """`manage.py qcluster` and the standing worker `manage.py work`, as `make run` starts them, for
    the `with` block only (stopped also on failure)."""

    def __init__(self, *, env: dict, log: Path):
        self.env, self.log = env, log
        self.process = self.worker = self.output = None

    def _start(self, *command):
        return subprocess.Popen(
            [sys.executable, "manage.py", *command],
            cwd=web.ROOT,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=self.output,
            stderr=self.output,
            start_new_session=True,  # its workers are its children: stopped with it, not with us
        )

    def __enter__(self):
        self.output = self.log.open("a")
        self.process = self._start("qcluster")
        self.worker = self._start("work")
        time.sleep(1)
        for process in (self.process, self.worker):
            if process.poll() is not None:
                self.stop()
                raise BenchSetupError(f"{process.args[2]} exited with {process.returncode}:\n{self.tail()}")
        return self

    def __exit__(self, *exc):
        self.stop()

    def running(self) -> bool:
        return all(process.poll() is None for process in (self.process, self.worker))

    def cpu(self) -> tuple[float, float]:
        """(CPU seconds of both process trees, of which the standing worker's sender threads)."""
        return tree_cpu(self.process.pid) + tree_cpu(self.worker.pid), sender_threads_cpu(self.worker.pid)

    def stop(self) -> None:
        for process in (self.worker, self.process):
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)  # the sentinel stops its workers, pusher, monitor
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait(timeout=10)
        if self.output is not None:
            self.output.close()
            self.output = None

    def tail(self, chars: int = 3000) -> str:
        try:
            return self.log.read_text()[-chars:]
        except OSError:
            return "(no worker log)"


def all_done(people) -> bool:
    """Every payout of these people settled and every notification of theirs sent: the work an
    approval causes is over."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FILTER (WHERE p.status <> 'settled'), "
            "(SELECT count(*) FROM payouts_notification n JOIN payouts_payout q ON q.id = n.payout_id "
            " WHERE q.participant_id = ANY(%s) AND n.sent_at IS NULL) "
            "FROM payouts_payout p WHERE p.participant_id = ANY(%s)",
            [people, people],
        )
        moving, unsent = cursor.fetchone()
    return not moving and not unsent


def one_run(
    plan: Setup, label: str, *, rate: float, env: dict, approver_env: dict, args, tmp: Path, bench_db: str
) -> dict:
    """Cluster up, approvals paced from a spawned process, the queue drained; the measurements."""
    warmup_ids, timed_ids = plan.people[label]
    timed_ids = timed_ids[: max(1, round(rate * args.payout_seconds))]
    context = multiprocessing.get_context("spawn")
    approvers = max(1, args.payout_approvers)
    results, timed_start, together = context.Queue(), context.Event(), context.Barrier(approvers)
    cpu_before = None
    reports = []
    with Cluster(env=env, log=tmp / f"qcluster-{label}.log") as cluster:
        processes = [
            context.Process(
                target=approver_main,
                args=(
                    approver_env,
                    plan.rule_id,
                    warmup_ids,
                    timed_ids,
                    rate,
                    timed_start,
                    results,
                    (index, approvers),
                    together,
                ),
                name=f"bench-payout-{label}-{index}",
            )
            for index in range(approvers)
        ]
        for process in processes:
            process.start()
        # A loaded machine may not keep the pace: room for two approvals a second at least.
        deadline = time.monotonic() + READY_TIMEOUT + args.payout_seconds * 3 + len(timed_ids) / 2 + 120
        try:
            while len(reports) < approvers:
                if cpu_before is None and timed_start.is_set():
                    cpu_before = (cluster.cpu(), backends_cpu(bench_db))
                try:
                    reports.append(results.get(timeout=0.05 if cpu_before is None else 1))
                    if isinstance(reports[-1], BaseException):
                        break
                except queues.Empty:
                    for process in processes:
                        if process.exitcode not in (None, 0):
                            raise BenchSetupError(f"{process.name} exited with {process.exitcode}") from None
                    if not cluster.running():
                        raise BenchSetupError(f"a worker stopped during the run:\n{cluster.tail()}") from None
                    if time.monotonic() > deadline:
                        raise BenchSetupError("the approving processes did not report back in time") from None
        finally:
            for process in processes:
                process.join(timeout=10)
                if process.is_alive():
                    process.terminate()
        report = next((r for r in reports if isinstance(r, BaseException)), None) or approvals_merge(reports)
        if isinstance(report, BaseException):
            raise BenchSetupError(f"the {label} approvals failed: {report!r}\n{cluster.tail()}")
        if cpu_before is None:
            raise BenchSetupError(f"{label}: the approvals ended before the CPU counters were read")
        problems = report.warmup_problems + report.not_approved
        if problems:
            raise BenchSetupError(
                f"{label}: {len(problems)} approvals were not approved at once, e.g. "
                f"{problems[0]} (every person is new and the budget covers them all)"
            )
        # Drain: what reaches the bank within DRAIN_SECONDS of the last approval counts; a payout
        # still on its way then is counted as not submitted.
        people = list(report.approved_at)
        while time.time() < report.ended + DRAIN_SECONDS and len(submitted_at(people)) < len(people):
            time.sleep(0.5)
        found = submitted_at(people)
        # The CPU an approval costs includes what follows the submission (the settlement, the
        # person's notification): counted once all of it is done, or at the drain's end.
        finished = all_done(people)
        while not finished and time.time() < report.ended + DRAIN_SECONDS:
            time.sleep(0.2)
            finished = all_done(people)
        backends = backends_spent(cpu_before[1], backends_cpu(bench_db))
        workers, senders = cluster.cpu()
        workers_seconds = workers - cpu_before[0][0]
        senders_seconds = senders - cpu_before[0][1]
        log_tail = cluster.tail(1500)
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT status, count(*) FROM payouts_payout WHERE participant_id = ANY(%s) GROUP BY status",
            [people],
        )
        statuses = dict(cursor.fetchall())
        # Exactly once, whatever the workers raced: one payout per person, one order per payout.
        cursor.execute(
            "SELECT (SELECT count(*) FROM (SELECT participant_id FROM payouts_payout "
            "  WHERE participant_id = ANY(%s) GROUP BY 1 HAVING count(*) > 1) twice), "
            "(SELECT count(*) FROM (SELECT end_to_end_id FROM payouts_sandboxbankpayment "
            "  GROUP BY 1 HAVING count(*) > 1) again)",
            [people],
        )
        paid_twice, sent_twice = cursor.fetchone()
    if paid_twice or sent_twice:
        raise BenchSetupError(
            f"{label}: {paid_twice} people got more than one payout, {sent_twice} payouts reached the bank "
            "more than once"
        )
    return {
        "rate": rate,
        "report": report,
        "latency_ms": [(found[p][1] - report.approved_at[p]) * 1000 for p in people if p in found],
        "to_payout_ms": [(found[p][0] - report.approved_at[p]) * 1000 for p in people if p in found],
        "to_bank_ms": [(found[p][1] - found[p][0]) * 1000 for p in people if p in found],
        "approved": len(people),
        "submitted": len(found),
        "statuses": statuses,
        "log_tail": log_tail,
        "finished": finished,
        "cpu_ms": {
            name: seconds * 1000 / max(len(people), 1)
            for name, seconds in {
                "workers": workers_seconds - senders_seconds,
                "postgres": backends["payouts"],
                "bank": senders_seconds,
                "bank_postgres": backends["bank"],
                "approver": report.cpu_seconds,
                "approver_postgres": report.backend_cpu_seconds,
            }.items()
        },
    }


def backlog_run(plan: Setup, *, env: dict, tmp: Path, bench_db: str) -> dict:
    """The pipeline's own cost per payout once batches fill: the "backlog" people approved and their
    marks cleared (untimed, in this process), the workers started and idle, then all of them marked
    due at once (a burst, as a viral minute brings) and paid; CPU from the marks to the last settlement."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.conf import settings
    from django.db import connection

    # deferred: the bench sets Django up (its settings, per process) before importing apps
    import verification.services.rewards as approvals
    from verification.models import ActionRule, Identity

    _warm, ids = plan.people["backlog"]
    rule = ActionRule.objects.select_related("campaign").get(pk=plan.rule_id)
    people = []
    limit = settings.FRAUD_CAMPAIGN_CLAIMS_PER_MINUTE
    settings.FRAUD_CAMPAIGN_CLAIMS_PER_MINUTE = VELOCITY_LIMIT  # as for the approving process
    try:
        for identity in Identity.objects.select_related("participant").filter(pk__in=ids):
            approvals.action_reward(rule=rule, identity=identity)
            people.append(identity.participant_id)
    finally:
        settings.FRAUD_CAMPAIGN_CLAIMS_PER_MINUTE = limit
    with connection.cursor() as cursor:  # an approval marks its person due with its claim: unmarked
        cursor.execute(
            "UPDATE verification_participant SET payout_due_at = NULL WHERE id = ANY(%s)", [people]
        )
    with Cluster(env=env, log=tmp / "workers-backlog.log") as cluster:
        time.sleep(3)  # started and idle
        before = (cluster.cpu(), backends_cpu(bench_db))
        began = time.monotonic()
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE verification_participant SET payout_due_at = now() WHERE id = ANY(%s)", [people]
            )

        def paid() -> bool:  # every one at the bank, settled and told (all_done alone: none made yet)
            return len(submitted_at(people)) == len(people) and all_done(people)

        finished = paid()
        while not finished and time.monotonic() - began < DRAIN_SECONDS * 4:
            time.sleep(0.2)
            finished = paid()
        seconds = time.monotonic() - began
        backends = backends_spent(before[1], backends_cpu(bench_db))
        workers, senders = cluster.cpu()
    each = max(len(people), 1)
    return {
        "payouts": len(people),
        "seconds": seconds,
        "finished": finished,
        "workers_ms": (workers - before[0][0] - (senders - before[0][1])) * 1000 / each,
        "postgres_ms": backends["payouts"] * 1000 / each,
        "bank_ms": (senders - before[0][1] + backends["bank"]) * 1000 / each,
    }


def environments(server: Server, bench_db: str, args) -> tuple[dict, dict]:
    """The workers' environment (as in production: sender threads, gathering, no Redis) and the
    approving processes'."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.conf import settings

    env = web.server_env(database_url=server.url_for(bench_db), secret_key=settings.SECRET_KEY)
    env.update(SANDBOX="1", Q_WORKERS=str(args.payout_workers), PAYOUT_SEPA_MODE="instant")
    env.update(PAYOUT_SEND_THREADS=str(SEND_THREADS))  # as in production (JOYBACK_ENV=test sends in turn)
    env.setdefault("PAYOUT_GATHER_MS", GATHER_MS)  # as in production (JOYBACK_ENV=test gathers none)
    env.pop("REDIS_URL", None)  # no broker on the payouts' path: the database's due index is the signal
    approver_env = {
        "DJANGO_SETTINGS_MODULE": env["DJANGO_SETTINGS_MODULE"],
        "DATABASE_URL": env["DATABASE_URL"],
        "JOYBACK_ENV": "test",
        "Q_SYNC": "0",
        "SANDBOX": "1",
        "LOG_LEVEL": "WARNING",
        "EMAIL_BACKEND": env["EMAIL_BACKEND"],
        "FRAUD_CAMPAIGN_CLAIMS_PER_MINUTE": str(VELOCITY_LIMIT),
        "REDIS_URL": None,
    }
    return env, approver_env


def sustained_run(server: Server, bench_db: str, args, note, *, rate: float, seconds: float) -> dict:
    """Approvals at `rate` a second for `seconds` through the whole product (tests/bench/payout.py's
    run: approving processes, the standing worker's batches, the sandbox bank), in a fresh bench
    database: the rate the approvals reached, approval -> bank, and the approvals' CPU."""
    web.database_prepare(server, bench_db)
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.db import connections

    count = max(1, round(rate * seconds))
    plan = setup(runs={"sustained": (WARMUP_PER_WORKER * args.payout_workers, count)})
    env, approver_env = environments(server, bench_db, args)
    try:
        with tempfile.TemporaryDirectory(prefix="joyback-reward-") as tmp:
            run = one_run(
                plan,
                "sustained",
                rate=rate,
                env=env,
                approver_env=approver_env,
                args=argparse_with(args, payout_seconds=seconds),
                tmp=Path(tmp),
                bench_db=bench_db,
            )
    finally:
        connections.close_all()
    report = run["report"]
    reached = len(report.call_ms) / max(report.ended - report.started, 1e-9)
    cpu = run["cpu_ms"]
    return {
        "rate": rate,
        "reached": reached,
        "approved": run["approved"],
        "submitted": run["submitted"],
        "p99_ms": p99_with_missing(run),
        "p50_ms": percentile(run["latency_ms"], 0.5) if run["latency_ms"] else float("inf"),
        "call_p99_ms": percentile(report.call_ms, 0.99),
        "late_p99_ms": percentile(report.late_ms, 0.99),
        "approval_cpu_ms": cpu["approver"] + cpu["approver_postgres"],
        "payout_cpu_ms": cpu["workers"] + cpu["postgres"],
        "bank_cpu_ms": cpu["bank"] + cpu["bank_postgres"],
        "finished": run["finished"],
        "statuses": run["statuses"],
    }


def argparse_with(args, **changes):
    """A copy of the bench's arguments with some changed."""
    copy = type(args)(**vars(args))
    for name, value in changes.items():
        setattr(copy, name, value)
    return copy


def measure(server: Server, bench_db: str, args, note) -> dict:
    """Set up; a run at --payout-rate, then one at --payout-high-rate; results by label."""
    web.database_prepare(server, bench_db)
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.db import connections

    rates = {"target": args.payout_rate}
    if args.payout_high_rate:
        rates["high"] = args.payout_high_rate
    warm = WARMUP_PER_WORKER * args.payout_workers
    counts = {label: max(1, round(rate * args.payout_seconds)) for label, rate in rates.items()}
    began = time.monotonic()
    runs = {label: (warm, count) for label, count in counts.items()}
    if args.payout_backlog:
        runs["backlog"] = (0, args.payout_backlog)
    plan = setup(runs=runs)
    note(
        f"payout setup: a live whatsapp_reward campaign ({plan.reward / 100:.2f} EUR an opt-in), "
        f"{sum(warm + count for warm, count in runs.values())} people each with a verified WhatsApp "
        f"identity, their own SEPA IBAN and email, and a VoP already answered MTCH, "
        f"{time.monotonic() - began:.1f} s"
    )
    env, approver_env = environments(server, bench_db, args)
    results = {}
    try:
        with tempfile.TemporaryDirectory(prefix="joyback-payout-") as tmp:
            for label, rate in rates.items():
                results[label] = run = one_run(
                    plan,
                    label,
                    rate=rate,
                    env=env,
                    approver_env=approver_env,
                    args=args,
                    tmp=Path(tmp),
                    bench_db=bench_db,
                )
                report = run["report"]
                achieved = len(report.call_ms) / max(report.ended - report.started, 1e-9)
                latencies = run["latency_ms"]
                note(
                    f"payout {rate:g}/s: {run['approved']} approvals in "
                    f"{report.ended - report.started:.1f} s "
                    f"({achieved:.1f}/s; an approval p50 {percentile(report.call_ms, 0.5):.1f} ms, "
                    f"p99 {percentile(report.call_ms, 0.99):.1f} ms; calls late for their slot p99 "
                    f"{percentile(report.late_ms, 0.99):.0f} ms); workers ready after "
                    f"{report.warmup_seconds:.1f} s of warm-up; {run['submitted']} submitted to the bank "
                    f"within {DRAIN_SECONDS:g} s of the last approval; payouts by status {run['statuses']}"
                )
                if latencies:
                    note(
                        f"payout {rate:g}/s: approval -> bank p50 {percentile(latencies, 0.5):.0f} ms, "
                        f"p90 {percentile(latencies, 0.9):.0f} ms, p99 {percentile(latencies, 0.99):.0f} "
                        f"ms, max {max(latencies):.0f} ms; of which approval -> payout made p50 "
                        f"{percentile(run['to_payout_ms'], 0.5):.0f} / p99 "
                        f"{percentile(run['to_payout_ms'], 0.99):.0f} ms, payout made -> bank p50 "
                        f"{percentile(run['to_bank_ms'], 0.5):.0f} / p99 "
                        f"{percentile(run['to_bank_ms'], 0.99):.0f} ms"
                    )
                cpu = run["cpu_ms"]
                payout_ms = cpu["workers"] + cpu["postgres"]
                bank_ms = cpu["bank"] + cpu["bank_postgres"]
                approval_ms = cpu["approver"] + cpu["approver_postgres"]
                run["payout_cpu_ms"] = payout_ms
                note(
                    f"payout {rate:g}/s: CPU per payout, approval committed -> bank and settled, "
                    f"{payout_ms:.1f} ms: standing worker and task cluster {cpu['workers']:.1f} ms, their "
                    f"PostgreSQL backends {cpu['postgres']:.1f} ms; apart: the sandbox bank {bank_ms:.1f} ms "
                    f"(the worker's sender threads {cpu['bank']:.1f} ms, its database connections "
                    f"{cpu['bank_postgres']:.1f} ms), the approval itself {approval_ms:.1f} ms (approving "
                    f"process {cpu['approver']:.1f} ms, its backend {cpu['approver_postgres']:.1f} ms); "
                    f"all of it {payout_ms + bank_ms + approval_ms:.1f} ms ({payout_ms + bank_ms:.1f} ms "
                    f"without the approval), at {rate:g}/s "
                    f"{(payout_ms + bank_ms + approval_ms) * rate / 1000:.2f} of this machine's "
                    f"{os.cpu_count()} CPUs"
                    + ("" if run["finished"] else " (counted before all the work was done: too low)")
                    + f"; load average {os.getloadavg()[0]:.2f}; CPU pressure (runnable tasks waiting "
                    f"for a CPU) {cpu_pressure()}"
                )
                if run["submitted"] < run["approved"]:
                    note(f"payout {rate:g}/s: worker log tail: {run['log_tail'][-600:]!r}")
            if args.payout_backlog:
                backlog = backlog_run(plan, env=env, tmp=Path(tmp), bench_db=bench_db)
                own = backlog["workers_ms"] + backlog["postgres_ms"]
                paid_rate = backlog["payouts"] / max(backlog["seconds"], 1e-9)
                note(
                    f"payout backlog: {backlog['payouts']} approved rewards marked due at once, paid in "
                    f"{backlog['seconds']:.1f} s ({paid_rate:.0f}/s) in batches of up to "
                    f"PAYOUT_BATCH_SIZE: CPU per payout {own:.1f} ms (standing worker and task cluster "
                    f"{backlog['workers_ms']:.1f} ms, their PostgreSQL backends "
                    f"{backlog['postgres_ms']:.1f} ms); apart: the sandbox bank {backlog['bank_ms']:.1f} ms"
                    + ("" if backlog["finished"] else " (counted before all the work was done: too low)")
                    + f"; load average {os.getloadavg()[0]:.2f}"
                )
                results["backlog"] = dict(backlog, cpu_ms=own)
    finally:
        connections.close_all()
    return results


def p99_with_missing(run: dict) -> float:
    # A payout that never reached the bank is slower than any that did: it counts at infinity.
    missing = run["approved"] - run["submitted"]
    return percentile(run["latency_ms"] + [float("inf")] * missing, 0.99)


def lines(results: dict, *, note, line, args) -> list[str]:
    """The bench lines of the --payout-rate run (p99 against 1 s, CPU per payout against 10 ms);
    the --payout-high-rate run's as "#" lines."""
    out = []
    backlog = results.pop("backlog", None)
    if backlog is not None:
        verdict = "met" if backlog["cpu_ms"] <= CPU_TARGET_MS else "MISSED"
        note(
            f"targets: payout CPU per payout with full batches (a backlog of {backlog['payouts']}) <= "
            f"{CPU_TARGET_MS:g} ms: {verdict} ({backlog['cpu_ms']:.1f} ms)"
        )
        note(line("payout_cpu_per_payout_batched", backlog["cpu_ms"], "ms", "target", CPU_TARGET_MS, "ms"))
    for label, run in results.items():
        latencies = run["latency_ms"]
        p99 = p99_with_missing(run)
        verdict = "met" if p99 < P99_TARGET_MS else "MISSED"
        cpu_verdict = "met" if run["payout_cpu_ms"] <= CPU_TARGET_MS else "MISSED"
        note(
            f"targets: payout (the standing worker's batches) approval -> PSP submission p99 < "
            f"{P99_TARGET_MS:g} ms at {run['rate']:g} approvals/s: {verdict} ({p99:.0f} ms; p50 "
            f"{percentile(latencies, 0.5):.0f} ms; {run['submitted']} of {run['approved']} submitted); "
            f"CPU per payout <= {CPU_TARGET_MS:g} ms: {cpu_verdict} ({run['payout_cpu_ms']:.1f} ms)"
        )
        texts = [
            line("payout_approval_to_submission_p99", p99, "ms", "target", P99_TARGET_MS, "ms"),
            line("payout_cpu_per_payout", run["payout_cpu_ms"], "ms", "target", CPU_TARGET_MS, "ms"),
        ]
        if label == "target":
            out += texts
        else:
            for text in texts:
                note(f"at {run['rate']:g} approvals/s: {text}")
    return out
