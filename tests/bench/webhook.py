"""The signed webhook intake: WhatsApp Cloud API deliveries against a hello world, one server.

POST /v/webhooks/whatsapp/ (verification.views.whatsapp_webhook) verifies X-Hub-Signature-256,
stores each message once by its wamid (ProviderEvent, unique per provider and event id; one
statement, committed before the answer) and answers 200 "ok"; a standing worker (manage.py
work) claims the stored events that are not yet processed, so the queue is the
unprocessed ProviderEvent rows and nothing is enqueued per request. The same
gunicorn (tests.bench.settings, the settings web.py uses) serves /bench/hello/, and wrk loads one
URL at a time with the same connections, threads and durations:

- django_hello: GET /bench/hello/, before and after the deliveries; the reference is their mean.
- webhook_intake: every request a different delivery (its own wamid, sender and opt-in text), in
  Meta's envelope (verification.sandbox.whatsapp.message_envelope), serialised as Meta does and
  signed with the app secret. wrk's Lua has no HMAC, so the deliveries are made and signed here
  before the clock starts and handed to wrk.lua one file per connection ("signed:" mode); the
  warm-up has a pool of its own, so the timed run starts on deliveries never seen. A connection
  that runs through its pool starts it again (those requests are redeliveries); how many requests
  stored a new event is counted in the database and reported.
- webhook_duplicate: the same delivery, already stored, over and over: verify, find it stored,
  answer 200, store nothing (Meta redelivers for days).

The broker is the harness's: Q_SYNC=0 and no REDIS_URL (django_q_ormq). Production sets REDIS_URL;
with --webhook-redis-url (a Redis database that is empty, on 127.0.0.1) the intake runs again on a
second gunicorn with REDIS_URL set, whose settings then put both the task broker and the cache in
Redis. No worker runs: this is the intake alone, and the unprocessed events only grow.
"""

import hashlib
import hmac
import http.client
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import redis

from tests.bench import web
from tests.bench.server import BenchSetupError, Server

PATH = "/v/webhooks/whatsapp/"
OPTIN_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
SETTLE = 0.5  # seconds for the requests in flight when wrk stops to finish before counting


@dataclass(frozen=True)
class Intake:
    """One timed webhook run: wrk's numbers, and what the database and broker show for it."""

    load: web.Load
    stored: int  # new ProviderEvent rows during the timed run
    enqueued: int  # new events waiting for the worker (processed_at IS NULL) during the timed run
    pool: int  # deliveries available to the timed run, over all connections
    cpu: str


def signed_line(*, body: bytes, secret: bytes) -> str:
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest() + "\t" + body.decode()


def deliveries_write(prefix: Path, *, tag: str, total: int, connections: int, secret: str) -> int:
    """`total` distinct signed deliveries in files <prefix>-<n>.tsv, n = 1..connections, dealt
    round-robin; returns how many were written."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from verification.sandbox.whatsapp import message_envelope

    key = secret.encode()
    files = [open(f"{prefix}-{n}.tsv", "w") for n in range(1, connections + 1)]  # noqa: SIM115
    try:
        for number in range(total):
            digest = hashlib.sha256(f"{tag}:{number}".encode()).digest()
            code = "".join(OPTIN_ALPHABET[b % len(OPTIN_ALPHABET)] for b in digest[:6])
            envelope = message_envelope(
                wa_id=f"49151{number:08d}",
                name=f"Bench Person {number}",
                text=f"Hi! My code is JOY-{code}",
                # A real wamid is base64 of ~40 bytes; this one is as long and names its run.
                message_id="wamid." + hashlib.sha256(f"{tag}:{number}".encode()).hexdigest()[:48],
            )
            body = json.dumps(envelope).encode()  # ensure_ascii, as Meta escapes non-ASCII
            files[number % connections].write(signed_line(body=body, secret=key) + "\n")
    finally:
        for file in files:
            file.close()
    return total


def post(port: int, body: bytes, *, secret: str, timeout: float = 10) -> int:
    """One signed delivery to 127.0.0.1:port, as Meta sends it; the status answered."""
    signature = signed_line(body=body, secret=secret.encode()).split("\t", 1)[0]
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(
            "POST",
            PATH,
            body=body,
            headers={"Content-Type": "application/json", "X-Hub-Signature-256": signature},
        )
        answer = connection.getresponse()
        answer.read()
        return answer.status
    finally:
        connection.close()


class Counts:
    """ProviderEvent rows, and those waiting for the worker, read from the database between runs."""

    def __init__(self, redis_client=None):
        self.redis = redis_client

    def now(self) -> tuple[int, int]:
        # deferred: the bench sets Django up (its settings, per process) before importing apps
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*), count(*) FILTER (WHERE processed_at IS NULL) "
                "FROM verification_providerevent WHERE provider = 'whatsapp'"
            )
            events, waiting = cursor.fetchone()
        return events, waiting


def redis_open(url: str):
    """A client for the Redis database at url, which must be on 127.0.0.1 and empty; else a reason."""
    host = urlsplit(url).hostname
    if host not in {"127.0.0.1", "localhost"}:
        return None, f"{url} is not on 127.0.0.1"
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)
        client.ping()
        keys = client.dbsize()
    except Exception as error:  # no Redis there, or the client is missing: the run is skipped
        return None, f"no Redis at {url} ({error.__class__.__name__}: {error})"
    if keys:
        return None, f"the Redis database {url} holds {keys} keys: not ours to use (give an empty one)"
    return client, ""


def intake_runs(gunicorn, *, label: str, tmp: Path, args, note, secret: str, counts: Counts, duplicate: bool):
    """hello, intake, [duplicate], hello on one server; a dict of Load / Intake per run."""
    connections = args.http_connections
    results = {}

    def hello(name: str) -> None:
        common = dict(expected=200, connections=connections)
        warm = web.wrk_run(gunicorn.base + "/bench/hello/", seconds=args.http_warmup, **common)
        before = web.Cpu.now(gunicorn.process.pid)
        load = web.wrk_run(gunicorn.base + "/bench/hello/", seconds=args.http_seconds, **common)
        cpu = before.per_request(web.Cpu.now(gunicorn.process.pid), load.requests)
        web.loads_check(name, expected=200, warm=warm, load=load, gunicorn=gunicorn)
        results[name] = load
        note(f"webhook {label} {name}: {web.load_text(load, expected=200)}; {cpu}")

    def deliveries(name: str, *, warm_pool: Path, timed_pool: Path, pool: int) -> Intake:
        common = dict(expected=200, connections=connections)
        warm = web.wrk_run(
            gunicorn.base + PATH, seconds=args.http_warmup, clients=f"signed:{warm_pool}", **common
        )
        time.sleep(SETTLE)
        events, tasks = counts.now()
        before = web.Cpu.now(gunicorn.process.pid)
        load = web.wrk_run(
            gunicorn.base + PATH, seconds=args.http_seconds, clients=f"signed:{timed_pool}", **common
        )
        cpu = before.per_request(web.Cpu.now(gunicorn.process.pid), load.requests)
        time.sleep(SETTLE)
        events_after, tasks_after = counts.now()
        web.loads_check(name, expected=200, warm=warm, load=load, gunicorn=gunicorn)
        return Intake(
            load=load, stored=events_after - events, enqueued=tasks_after - tasks, pool=pool, cpu=cpu
        )

    hello("django_hello")

    began = time.monotonic()
    warm_total = max(connections, round(args.webhook_deliveries * args.http_warmup / args.http_seconds))
    deliveries_write(
        tmp / f"{label}-warm", tag=f"{label}-warm", total=warm_total, connections=connections, secret=secret
    )
    deliveries_write(
        tmp / f"{label}-timed",
        tag=f"{label}-timed",
        total=args.webhook_deliveries,
        connections=connections,
        secret=secret,
    )
    note(
        f"webhook {label}: {args.webhook_deliveries} distinct signed deliveries for the timed run and "
        f"{warm_total} for the warm-up made in {time.monotonic() - began:.1f} s (not timed)"
    )
    intake = deliveries(
        "webhook_intake",
        warm_pool=tmp / f"{label}-warm",
        timed_pool=tmp / f"{label}-timed",
        pool=args.webhook_deliveries,
    )
    results["webhook_intake"] = intake
    load = intake.load
    note(
        f"webhook {label} webhook_intake: {web.load_text(load, expected=200)}; stored {intake.stored} new "
        f"events, {intake.enqueued} waiting for the worker, for {load.requests} answered requests "
        f"({max(0, load.requests - intake.stored) / max(load.requests, 1):.1%} redeliveries: a connection "
        f"that used up its {intake.pool // connections} deliveries starts them again); {intake.cpu}"
    )
    # Requests still in flight when wrk stops are stored but not counted: at most one a connection.
    # Below half the pool no connection has come round to its first delivery again.
    short = load.requests < intake.pool // 2 and intake.stored < load.requests - connections
    if short or intake.stored > load.requests + connections or intake.enqueued != intake.stored:
        raise BenchSetupError(
            f"webhook_intake ({label}): {load.requests} answered, {intake.stored} stored, "
            f"{intake.enqueued} waiting: the intake did not store each new delivery once for the worker"
        )

    if duplicate:
        # deferred: the bench sets Django up (its settings, per process) before importing apps
        from verification.sandbox.whatsapp import message_envelope

        body = json.dumps(
            message_envelope(
                wa_id="4915100000000",
                name="Bench Again",
                text="Hi! JOY-AGAIN2",
                message_id="wamid.bench-again",
            )
        ).encode()
        status = post(gunicorn.port, body, secret=secret)
        if status != 200:
            raise BenchSetupError(f"the first delivery of the duplicate run was answered {status}")
        line = signed_line(body=body, secret=secret.encode()) + "\n"
        for n in range(1, connections + 1):
            (tmp / f"{label}-again-{n}.tsv").write_text(line)
        again = deliveries(
            "webhook_duplicate", warm_pool=tmp / f"{label}-again", timed_pool=tmp / f"{label}-again", pool=1
        )
        results["webhook_duplicate"] = again
        note(
            f"webhook {label} webhook_duplicate (one stored delivery redelivered on every request): "
            f"{web.load_text(again.load, expected=200)}; stored {again.stored}, waiting {again.enqueued}; "
            f"{again.cpu}"
        )
        if again.stored or again.enqueued:
            raise BenchSetupError(
                f"webhook_duplicate: a redelivery was stored ({again.stored}) or waits ({again.enqueued})"
            )

    hello("django_hello_after")
    return results


def measure(server: Server, bench_db: str, args, note) -> dict:
    """Serve and load the webhook with the ORM broker, then (if it can) with Redis; results by broker."""
    web.database_prepare(server, bench_db)
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.conf import settings
    from django.db import connections

    secret = settings.WHATSAPP_APP_SECRET
    if not secret:
        raise BenchSetupError(
            "WHATSAPP_APP_SECRET is empty in the bench settings: the webhook refuses everything"
        )
    env = web.server_env(database_url=server.url_for(bench_db), secret_key=settings.SECRET_KEY)
    env.pop("REDIS_URL", None)
    env["WHATSAPP_APP_SECRET"] = secret
    brokers = [("orm", env, None)]
    if args.webhook_redis_url:
        client, problem = redis_open(args.webhook_redis_url)
        if client is None:
            note(f"webhook: no Redis run: {problem}")
        else:
            brokers.append(("redis", {**env, "REDIS_URL": args.webhook_redis_url}, client))
    results = {}
    try:
        for label, broker_env, client in brokers:
            note(
                f"webhook {label}: broker "
                + (
                    f"Redis (REDIS_URL={broker_env['REDIS_URL']}, the cache in Redis too), "
                    "as production would run"
                    if client is not None
                    else "the database (django_q_ormq, Q_SYNC=0, no REDIS_URL); production would set "
                    "REDIS_URL and queue in Redis"
                )
            )
            with (
                tempfile.TemporaryDirectory(prefix="joyback-webhook-") as tmp,
                web.Gunicorn(
                    workers=args.http_workers, worker_class="sync", env=broker_env, log_dir=Path(tmp)
                ) as gunicorn,
            ):
                results[label] = intake_runs(
                    gunicorn,
                    label=label,
                    tmp=Path(tmp),
                    args=args,
                    note=note,
                    secret=secret,
                    counts=Counts(client),
                    duplicate=label == "orm",
                )
    finally:
        for _label, _env, client in brokers:
            if client is not None:
                client.flushdb()  # it was empty before the run: only our queue and cache keys are there
                client.close()
        connections.close_all()
    return results


def lines(results: dict, *, note, line, target_ratio: float, p99_target_ms: float) -> list[str]:
    """The bench lines (the ORM broker's run) and the notes comparing the brokers."""
    out = []
    for label, runs in results.items():
        before, after = runs["django_hello"], runs["django_hello_after"]
        hello = (before.rps + after.rps) / 2
        spread = abs(before.rps - after.rps) / hello
        intake = runs["webhook_intake"].load
        ratio = intake.rps / hello
        note(
            f"webhook {label} reference: django_hello {before.rps:.0f} / {after.rps:.0f} req/s "
            "before / after, "
            f"mean {hello:.0f} req/s"
            + (
                f" (WARNING: the runs differ by {spread:.0%}: the machine was not quiet)"
                if spread > 0.2
                else ""
            )
            + f"; targets: intake >= {target_ratio:g}x hello: {'met' if ratio >= target_ratio else 'MISSED'} "
            f"({ratio:.3g}x); p99 < {p99_target_ms:g} ms: "
            f"{'met' if intake.p99_ms < p99_target_ms else 'MISSED'} ({intake.p99_ms:.1f} ms)"
        )
        if "webhook_duplicate" in runs:
            again = runs["webhook_duplicate"].load
            note(
                f"webhook {label} duplicates only: {again.rps:.0f} req/s ({again.rps / hello:.3g}x hello), "
                f"p99 {again.p99_ms:.1f} ms"
            )
        if label == "orm":
            out += [
                line("webhook_intake", intake.rps, "req/s", "django_hello", hello, "req/s"),
                line("webhook_intake_p99", intake.p99_ms, "ms", "target", p99_target_ms, "ms"),
            ]
    return out


def default_redis_url() -> str:
    return os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13")
