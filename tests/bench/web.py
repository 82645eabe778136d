"""The HTTP side of the benchmarks: the product's public pages against a hello world, one server.

gunicorn serves tests.bench.settings (the product's settings and pages plus /bench/hello/, a view
that only answers "Hello, world") from the <dbname>_bench database; wrk loads one URL at a time
with the same connections, threads and durations, so each page's rate can be read as a fraction
of what the same server does with a request that has no work in it:

- django_hello: GET /bench/hello/ (expects 200), before and after each round of product pages;
  a round's reference is the mean of the two runs around it.
- landing_get: GET /c/<slug>/, the public page of a live, funded campaign (expects 200).
- claim_post: POST /p/c/<slug>/payee/, a person's bank details (expects 302 to the status page), a
  person who has not given them yet in every request.
  Each connection is a different participant with an approved reward, its own participant cookie
  and its CSRF cookie and token, got from the payee form page as a browser would.

Everything but the timed runs (data, cookies, tokens, warm-up) happens before the clock starts.
"""

import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

from schwifty import IBAN

from tests.bench.server import BenchSetupError, Server

WRK = "wrk"
LUA = Path(__file__).with_name("wrk.lua")
ROOT = Path(__file__).resolve().parents[2]
SLUG = "bench-landing"
RESULT_RE = re.compile(r"^wrk-result (.*)$", re.MULTILINE)
TOKEN_RE = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def wrk_missing() -> str:
    """A message saying how to get wrk, or "" when it is installed."""
    if shutil.which(WRK):
        return ""
    return (
        "the HTTP benchmark needs wrk, the load generator: apt-get install wrk "
        "(or run only the ledger part: JOYBACK_ENV=test .venv/bin/python -m tests.bench.run --only ledger)"
    )


@dataclass(frozen=True)
class Load:
    """One wrk run: throughput and latency (wrk times each request from send to last byte)."""

    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    max_ms: float
    bad: int  # answered, but not with the expected status
    bad_statuses: str  # which statuses those were, comma-separated
    socket_errors: int  # connect, read, write errors and timeouts

    @property
    def rps(self) -> float:
        return self.requests / self.seconds

    @property
    def errors(self) -> int:
        return self.bad + self.socket_errors


@dataclass(frozen=True)
class Client:
    """One person's browser: their participant cookie, and the CSRF cookie and token for the form."""

    participant_id: int
    cookie: str  # Cookie header naming the participant, as after their TikTok login
    csrftoken: str = ""
    form_token: str = ""


def free_port() -> int:
    """$BENCH_PORT when set (a machine shared by several people, each given a port), else any free
    port the system gives."""
    if os.environ.get("BENCH_PORT"):
        return int(os.environ["BENCH_PORT"])
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: str) -> tuple[str, int, float] | None:
    """(command name, parent pid, CPU seconds used) of a process, from /proc."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name = text[text.index("(") + 1 : text.rindex(")")]
    fields = text[text.rindex(")") + 2 :].split()
    return name, int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK


@dataclass(frozen=True)
class Cpu:
    """CPU seconds used so far: gunicorn's workers, all of PostgreSQL, wrk (this process's waited-for
    children), and the machine as a whole (busy and total, summed over its CPUs)."""

    workers: float
    postgres: float
    wrk: float
    busy: float
    total: float

    @classmethod
    def now(cls, master_pid: int) -> "Cpu":
        workers = postgres = 0.0
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and (stat := _stat(entry.name)):
                name, parent, used = stat
                if parent == master_pid:
                    workers += used
                elif name.startswith("postgres"):
                    postgres += used
        children = os.times()
        with open("/proc/stat") as machine:
            ticks = [int(n) for n in machine.readline().split()[1:8]]
        idle = ticks[3] + ticks[4]
        return cls(
            workers=workers,
            postgres=postgres,
            wrk=children.children_user + children.children_system,
            busy=(sum(ticks) - idle) / TICK,
            total=sum(ticks) / TICK,
        )

    def per_request(self, later: "Cpu", requests: int) -> str:
        """Where the CPU went between self and later, in ms per request."""
        names = {"workers": "gunicorn workers", "postgres": "PostgreSQL", "wrk": "wrk"}
        spent = {label: getattr(later, name) - getattr(self, name) for name, label in names.items()}
        busy, total = later.busy - self.busy, later.total - self.total
        spent["anything else (interrupts, other processes)"] = busy - sum(spent.values())
        each = max(requests, 1)
        parts = ", ".join(f"{name} {seconds * 1000 / each:.2f} ms" for name, seconds in spent.items())
        return f"CPU per request: {parts}; all CPUs {busy / max(total, 1e-9):.0%} busy"


def database_prepare(server: Server, bench_db: str) -> None:
    """A fresh <dbname>_bench, migrated like production (the ledger runs leave theirs behind)."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.apps import apps

    if apps.ready:  # after the ledger runs: let go of their database before it is made anew
        # deferred: the bench sets Django up (its settings, per process) before importing apps
        from django.db import connections

        connections.close_all()
    # Every part starts from the same freshly migrated database: the first migrates it and keeps a
    # copy, the others start from that copy (a migration run costs more than most smoke runs).
    migrated = migrated_template(bench_db)
    reuse = server.database_exists(migrated)
    server.database_create(bench_db, template=migrated if reuse else "")
    server.checkpoint()
    os.environ["DATABASE_URL"] = server.url_for(bench_db)
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from tests.bench import ledger

    ledger.django_setup()
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from joyback.ledger.services import _shared_accounts
    from joyback.modes import brand_livemode_forget

    # What this process remembered of the last part's database (accounts' ids, brands' modes) names
    # rows of a database that is gone: each part's brand has its own balance account anew.
    _shared_accounts.clear()
    brand_livemode_forget()
    if reuse:
        return
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.core.management import call_command
    from django.db import connections

    call_command("migrate", interactive=False, verbosity=0)
    connections.close_all()
    server.database_create(migrated, template=bench_db)


def migrated_template(bench_db: str) -> str:
    return f"{bench_db}_migrated"


def data_setup(*, people: int) -> list[Client]:
    """A live, funded campaign, and `people` participants each with an approved reward and a cookie."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.contrib.auth import get_user_model
    from django.db import connections

    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from campaigns.services.brands import brand_create
    from campaigns.services.campaigns import campaign_create, campaign_transition
    from campaigns.services.funding import campaign_fund
    from tests.conftest import fund, verified
    from verification.services.participants import identity_attach, participant_create
    from verification.services.rewards import action_reward
    from verification.sessions import COOKIE, participant_cookie_value

    owner = get_user_model().objects.create_user(email="owner@bench.localhost", password="bench-owner-pw")
    brand = brand_create(name="Bench Brand", slug="bench-brand", owner=owner, currency="EUR")
    verified(brand)  # funding and payouts are open to verified brands only
    budget = 1_000_000_00
    fund(brand, budget, "EUR", reference="BENCH-DEPOSIT")
    campaign = campaign_create(
        brand=brand,
        name="Bench Summer Glow",
        slug=SLUG,
        package="all_in_one",
        currency="EUR",
        countries=["DE"],
        languages=["en"],
        headline="Get paid for loving our summer range",
        description="The campaign the HTTP benchmark loads.",
    )
    campaign_fund(campaign=campaign, amount=budget)
    campaign = campaign_transition(campaign=campaign, to="live")
    login = campaign.rules.get(trigger="tiktok_login")
    clients = []
    for number in range(people):
        person = participant_create(brand=brand)
        identity = identity_attach(
            participant=person, provider="tiktok", subject=f"bench-{number}", display_name=f"Bench {number}"
        )
        claim = action_reward(rule=login, identity=identity)
        if claim.status != "approved":
            raise BenchSetupError(f"a bench participant's reward was {claim.status} ({claim.reason})")
        cookie = f"{COOKIE}={participant_cookie_value({brand.pk: person.pk})}"
        clients.append(Client(participant_id=person.pk, cookie=cookie))
    connections.close_all()
    return clients


class Gunicorn:
    """gunicorn on 127.0.0.1 and a free port, for the `with` block only (stopped also on failure)."""

    def __init__(self, *, workers: int, worker_class: str, env: dict, log_dir: Path):
        self.workers, self.worker_class = workers, worker_class
        self.env = env
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = log_dir / "gunicorn.log"
        self.process = self.stderr = None

    def __enter__(self):
        command = [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi:application",
            "--bind",
            f"127.0.0.1:{self.port}",
            "--workers",
            str(self.workers),
            "--worker-class",
            self.worker_class,
            "--log-level",
            "warning",
            "--error-logfile",
            str(self.log),
        ]
        self.stderr = self.log.open("a")  # Django's console logging: warnings and errors only
        self.process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.stderr,
        )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def _wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise BenchSetupError(f"gunicorn exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                if get(self.port, "/bench/hello/", timeout=2)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise BenchSetupError(
            f"gunicorn did not answer on {self.base} within {timeout:.0f} s:\n{self.log_tail()}"
        )

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # the master stops its own workers
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if self.stderr is not None:
            self.stderr.close()

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log.read_text()[-chars:]
        except OSError:
            return "(no gunicorn log)"


def get(port: int, path: str, *, headers=None, timeout: float = 10) -> tuple[int, list, str]:
    """One GET to 127.0.0.1:port: (status, headers, body)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", path, headers=headers or {})
        answer = connection.getresponse()
        return answer.status, answer.getheaders(), answer.read().decode()
    finally:
        connection.close()


def client_tokens(port: int, client: Client) -> Client:
    """GET the payee form as this person's browser would: the CSRF cookie and the form's token."""
    status, headers, page = get(port, f"/p/c/{SLUG}/payee/", headers={"Cookie": client.cookie})
    cookies = SimpleCookie()
    for name, value in headers:
        if name.lower() == "set-cookie":
            cookies.load(value)
    match = TOKEN_RE.search(page)
    if status != 200 or "csrftoken" not in cookies or not match:
        raise BenchSetupError(f"the payee form page answered {status} without a CSRF cookie and token")
    return Client(
        participant_id=client.participant_id,
        cookie=client.cookie,
        csrftoken=cookies["csrftoken"].value,
        form_token=match.group(1),
    )


def iban(number: int) -> str:
    """A valid German IBAN of its own for each person (the first is DE89370400440532013000).

    Each person gives their own bank account and email: details shared between people are a fraud
    signal (payouts.payees.shared_details), which is not what this benchmark loads.
    """
    return str(IBAN.generate("DE", bank_code="37040044", account_code=f"{532013000 + number:010d}"))


# People a claim POST's wrk run sends per connection, per second of the run: one new person per
# request (details a person already gave change only with a code sent to them, payouts.payees.changes,
# so a person's second POST is a 409, not what this line measures), with room for a fast machine.
PEOPLE_PER_CONNECTION_SECOND = 250


def claim_forms_files(
    *,
    template: Client,
    connections: int,
    seconds: float,
    prefix: Path,
    start: int,
    per_second: int = PEOPLE_PER_CONNECTION_SECOND,
) -> str:
    """For one wrk run of claim_post: per connection a file of people who have not given bank details
    yet, each a participant of the bench brand with their own cookie, IBAN and email (the form's CSRF
    cookie and token are the template browser's: they name no person). "forms:<prefix>" for wrk.lua.

    The people are made in one statement; what a claim's reward costs is the reward's benchmark."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.db import connections as db_connections

    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from verification.models import ActionClaim, Identity, Participant
    from verification.sessions import COOKIE, participant_cookie_value

    # A person gives bank details once they have a claim (payouts.sql._SUBMISSION_ACCEPT): each gets
    # a twin of the template person's TikTok login claim, rejected: no money moves for these people.
    claim = ActionClaim.objects.filter(participant_id=template.participant_id).first()
    brand_id = claim.brand_id
    # As long as wrk_run really runs (whole seconds, one at least: the smoke's 0.2 s warm-up is a
    # second), or a fast claim wraps round to people who already gave details (a 409).
    each = per_second * max(1, round(seconds))
    people = Participant.objects.bulk_create(
        Participant(brand_id=brand_id) for _ in range(each * connections)
    )
    identities = Identity.objects.bulk_create(
        Identity(
            brand_id=brand_id,
            participant=person,
            provider="tiktok",
            subject=f"bench-{start}-{n}",
            verified_at=claim.created_at,
        )
        for n, person in enumerate(people)
    )
    ActionClaim.objects.bulk_create(
        ActionClaim(
            campaign_id=claim.campaign_id,
            brand_id=brand_id,
            rule_id=claim.rule_id,
            participant=person,
            identity=identity,
            status="rejected",
            reason="bench",
            amount=claim.amount,
            currency=claim.currency,
            decided_at=claim.created_at,
        )
        for person, identity in zip(people, identities, strict=True)
    )
    for connection_number in range(connections):
        lines = []
        for offset, person in enumerate(people[connection_number * each : (connection_number + 1) * each]):
            number = start + connection_number * each + offset
            cookie = (
                f"{COOKIE}={participant_cookie_value({brand_id: person.pk})}; csrftoken={template.csrftoken}"
            )
            body = urlencode(
                {
                    "csrfmiddlewaretoken": template.form_token,
                    "name": f"Bench Person {number}",
                    "email": f"person{number}@bench.example",
                    "phone": "",
                    "iban": iban(number),
                    "consent": "on",
                }
            )
            lines.append(f"{cookie}\t{body}")
        Path(f"{prefix}-{connection_number + 1}.tsv").write_text("\n".join(lines) + "\n")
    # The tens of thousands of rows just made are the bench's setup, not the claims' work: vacuumed
    # and analysed now, before the clock starts, rather than by autovacuum during the timed run.
    with db_connections["default"].cursor() as cursor:
        tables = (Participant._meta.db_table, Identity._meta.db_table, ActionClaim._meta.db_table)
        cursor.execute(f"VACUUM (ANALYZE) {', '.join(tables)}")
    db_connections.close_all()
    return f"forms:{prefix}"


def wrk_run(
    url: str,
    *,
    expected: int,
    connections: int,
    seconds: float,
    clients: Path | str | None = None,
    script: Path = LUA,
) -> Load:
    """wrk with one thread per connection (so a connection is a client), timeout 10 s.

    clients: a file of per-connection POSTs, or "signed:<prefix>" for signed webhook deliveries
    (see wrk.lua)."""
    command = [
        WRK,
        f"--threads={connections}",
        f"--connections={connections}",
        f"--duration={max(1, round(seconds))}s",
        "--timeout=10s",
        f"--script={script}",
        url,
        "--",
        str(expected),
        *([str(clients)] if clients else []),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=seconds + 60)
    match = RESULT_RE.search(done.stdout)
    if done.returncode != 0 or not match:
        raise BenchSetupError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    fields = dict(item.split("=") for item in match.group(1).split())
    statuses = fields.pop("statuses")
    number = {key: int(value) for key, value in fields.items()}
    return Load(
        requests=number["requests"],
        seconds=number["duration_us"] / 1e6,
        p50_ms=number["p50_us"] / 1000,
        p99_ms=number["p99_us"] / 1000,
        max_ms=number["max_us"] / 1000,
        bad=number["bad"],
        socket_errors=number["connect"] + number["read"] + number["write"] + number["timeout"],
        bad_statuses="" if statuses == "-" else statuses,
    )


def loads_check(name: str, *, expected: int, warm: Load, load: Load, gunicorn: Gunicorn) -> None:
    """Every request of the warm-up and the timed run answered `expected`, or BenchSetupError."""
    if warm.errors or load.errors:
        raise BenchSetupError(
            f"{name}: {warm.errors + load.errors} requests failed or did not answer {expected} "
            f"(warm-up: {warm.bad} answered {warm.bad_statuses or '-'}, {warm.socket_errors} socket "
            f"errors; timed run: {load.bad} answered {load.bad_statuses or '-'}, "
            f"{load.socket_errors} socket errors); gunicorn log:\n{gunicorn.log_tail()}"
        )


def load_text(load: Load, *, expected: int) -> str:
    return (
        f"{load.requests} requests in {load.seconds:.1f} s = {load.rps:.0f} req/s, "
        f"latency p50 {load.p50_ms:.1f} ms, p99 {load.p99_ms:.1f} ms, max {load.max_ms:.1f} ms, "
        f"errors {load.errors} (answers other than {expected}: {load.bad})"
    )


def server_env(*, database_url: str, secret_key: str) -> dict:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "JOYBACK_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="tests.bench.settings",
        JOYBACK_ENV="test",
        DEBUG="0",
        SECRET_KEY=secret_key,
        DATABASE_URL=database_url,
        PAYEE_SUBMISSIONS_PER_MINUTE="1000000",
        EMAIL_BACKEND="django.core.mail.backends.dummy.EmailBackend",
        Q_SYNC="0",  # queued work goes to the broker as in production, not run inline as in tests
        LOG_LEVEL="WARNING",
        PYTHONPATH=str(ROOT),
    )
    return env


def measure(server: Server, bench_db: str, args, note) -> list[dict]:
    """Serve, warm each URL up, then load rounds of hello / landing / claim and a last hello with wrk:
    per round, a dict of Load by run (its hello world before and after are the rounds' shared runs)."""
    database_prepare(server, bench_db)
    began = time.monotonic()
    clients = data_setup(people=args.http_connections)
    note(
        f"http setup: a live funded campaign, {len(clients)} participants each with an approved reward "
        f"and a participant cookie, {time.monotonic() - began:.1f} s"
    )
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.conf import settings
    from django.db import connections

    env = server_env(database_url=server.url_for(bench_db), secret_key=settings.SECRET_KEY)
    note(
        "http server: cache "
        + (f"Redis (REDIS_URL={env['REDIS_URL']})" if env.get("REDIS_URL") else "LocMemCache, one per worker")
        + f", database connections kept {env.get('DB_CONN_MAX_AGE', '60')} s with health checks, "
        "sessions in the database and participants named by a signed cookie (the product's settings)"
    )
    rounds = []
    with (
        tempfile.TemporaryDirectory(prefix="joyback-http-") as tmp,
        Gunicorn(workers=args.http_workers, worker_class="sync", env=env, log_dir=Path(tmp)) as gunicorn,
    ):
        clients = [client_tokens(gunicorn.port, client) for client in clients]
        made = iter(range(len(clients), 10**9, 10**6))  # each run's people get numbers of their own

        def posts(seconds: float) -> str:
            run = next(made)
            return claim_forms_files(
                template=clients[0],
                connections=args.http_connections,
                seconds=seconds,
                prefix=Path(tmp) / f"claims-{run}",
                start=run,
            )

        urls = {
            "django_hello": ("/bench/hello/", 200, None),
            "landing_get": (f"/c/{SLUG}/", 200, None),
            "claim_post": (f"/p/c/{SLUG}/payee/", 302, posts),
        }
        warm = {}
        for name, (path, expected, post_clients) in urls.items():
            people = post_clients(args.http_warmup) if post_clients else None
            common = dict(expected=expected, connections=args.http_connections, clients=people)
            warm[name] = wrk_run(gunicorn.base + path, seconds=args.http_warmup, **common)

        def timed(name: str, label: str) -> Load:
            path, expected, post_clients = urls[name]
            people = post_clients(args.http_round_seconds) if post_clients else None
            common = dict(expected=expected, connections=args.http_connections, clients=people)
            before = Cpu.now(gunicorn.process.pid)
            load = wrk_run(gunicorn.base + path, seconds=args.http_round_seconds, **common)
            cpu = before.per_request(Cpu.now(gunicorn.process.pid), load.requests)
            loads_check(name, expected=expected, warm=warm[name], load=load, gunicorn=gunicorn)
            note(f"http {label}: {load_text(load, expected=expected)}; {cpu}")
            return load

        hello = timed("django_hello", "django_hello 1")
        for number in range(1, args.http_rounds + 1):
            loads = {"django_hello": hello}
            loads["landing_get"] = timed("landing_get", f"landing_get {number}")
            loads["claim_post"] = timed("claim_post", f"claim_post {number}")
            hello = loads["django_hello_after"] = timed("django_hello", f"django_hello {number + 1}")
            rounds.append(loads)
    connections.close_all()
    return rounds
