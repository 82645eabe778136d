"""The Cashback API under load: POST /api/v1/events against a hello world, one server.

The same gunicorn (tests.bench.settings) serves /bench/hello/ and the API; wrk loads one URL at a
time with the same connections, threads and durations (tests/bench/api.lua):

- django_hello: GET /bench/hello/, before and after; the reference is the mean of the two.
- api_events: every request a new purchase (its own order id, customer and Idempotency-Key) of
  40.00 EUR on one live cashback campaign: authenticate the key (cached), validate, and in one
  statement store the answer under the Idempotency-Key and the event, which the standing worker
  claims (none runs here, so the claims wait). Expects 202.
- api_replay: one Idempotency-Key and body, answered once before the run; every request is a
  replay of that first answer (authenticate, find the key, send the stored body). Expects 202.
- At --http-workers connections too (one per gunicorn worker, so no request queues behind
  another), "#" lines: the hello world's and the replay's p99 as one client sees them when the
  server is not saturated. At 16 connections on a 2-CPU machine every p99 is mostly queueing:
  the hello world's own is the floor of what this server setup can answer.

The per-key rate limit is lifted for the run (API_REQUESTS_PER_MINUTE); everything else is the
product's settings (no REDIS_URL: LocMemCache, the database as broker, no worker running).
"""

import http.client
import json
import tempfile
import time
from pathlib import Path

from tests.bench import web
from tests.bench.server import BenchSetupError, Server

PATH = "/api/v1/events"
LUA = Path(__file__).with_name("api.lua")
EVENTS_TARGET_RATIO = 0.3
EVENTS_P99_TARGET_MS = 50.0
REPLAY_P99_TARGET_MS = 10.0


def data_setup() -> str:
    """A brand with a live, funded cashback campaign (5 %, at most 5 EUR, 14 days) and an API key."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.contrib.auth import get_user_model
    from django.db import connections

    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from campaigns.services.brands import brand_create
    from campaigns.services.campaigns import campaign_create, campaign_transition
    from campaigns.services.funding import campaign_fund
    from joyback.api.keys import api_key_create
    from tests.conftest import fund, verified

    owner = get_user_model().objects.create_user(email="api@bench.localhost", password="bench-owner-pw")
    brand = brand_create(name="Bench Shop", slug="bench-shop", owner=owner, currency="EUR")
    verified(brand)  # funding and payouts are open to verified brands only
    budget = 10_000_000_00
    fund(brand, budget, "EUR", reference="BENCH-API")
    campaign = campaign_create(
        brand=brand, name="Bench Cashback", package="cashback", currency="EUR", countries=["DE"], languages=[]
    )
    campaign.rules.filter(trigger="purchase").update(cashback_basis_points=500, return_window_days=14)
    campaign_fund(campaign=campaign, amount=budget)
    campaign_transition(campaign=campaign, to="live")
    secret = api_key_create(brand_id=brand.pk, name="bench", scopes=["events"]).secret
    connections.close_all()
    return secret


def post(port: int, body: bytes, *, secret: str, key: str) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        headers = {
            "Content-Type": "application/json",
            "Authorization": f"Bearer {secret}",
            "Idempotency-Key": key,
        }
        connection.request("POST", PATH, body=body, headers=headers)
        answer = connection.getresponse()
        answer.read()
        return answer.status
    finally:
        connection.close()


def measure(server: Server, bench_db: str, args, note) -> dict:
    """Serve and load hello / events / replay / hello; a dict of web.Load per run."""
    web.database_prepare(server, bench_db)
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.conf import settings
    from django.db import connections

    began = time.monotonic()
    secret = data_setup()
    note(f"api setup: a live funded cashback campaign and an API key, {time.monotonic() - began:.1f} s")
    env = web.server_env(database_url=server.url_for(bench_db), secret_key=settings.SECRET_KEY)
    env.pop("REDIS_URL", None)
    env["API_REQUESTS_PER_MINUTE"] = "1000000000"
    loads = {}
    connections_ = args.http_connections
    with (
        tempfile.TemporaryDirectory(prefix="joyback-api-") as tmp,
        web.Gunicorn(workers=args.http_workers, worker_class="sync", env=env, log_dir=Path(tmp)) as gunicorn,
    ):

        def run(name: str, path: str, expected: int, mode: str = "", connections: int = 0) -> None:
            def wrk(seconds: float, tag: str) -> web.Load:
                return web.wrk_run(
                    gunicorn.base + path,
                    expected=expected,
                    connections=connections or connections_,
                    seconds=seconds,
                    clients=f"{secret} {mode} {tag}" if mode else None,
                    script=LUA if mode else web.LUA,
                )

            warm = wrk(args.http_warmup, f"{name}-warm")
            before = web.Cpu.now(gunicorn.process.pid)
            load = wrk(args.http_seconds, name)
            cpu = before.per_request(web.Cpu.now(gunicorn.process.pid), load.requests)
            web.loads_check(name, expected=expected, warm=warm, load=load, gunicorn=gunicorn)
            loads[name] = load
            note(f"api {name}: {web.load_text(load, expected=expected)}; {cpu}")

        run("django_hello", "/bench/hello/", 200)
        run("api_events", PATH, 202, "fresh")
        body = json.dumps(
            {
                "type": "purchase",
                "order_id": "bench-replay",
                "amount": 4000,
                "currency": "EUR",
                "customer": {"email": "replay@bench.example"},
            },
            separators=(",", ":"),
        ).encode()
        status = post(gunicorn.port, body, secret=secret, key="bench-replay")
        if status != 202:
            raise BenchSetupError(f"the first request of the replay run was answered {status}")
        run("api_replay", PATH, 202, "replay")
        run("django_hello_after", "/bench/hello/", 200)
        run("django_hello_unqueued", "/bench/hello/", 200, connections=args.http_workers)
        run("api_replay_unqueued", PATH, 202, "replay", connections=args.http_workers)
    connections.close_all()
    return loads


def lines(loads: dict, *, note, line) -> list[str]:
    before, after = loads["django_hello"], loads["django_hello_after"]
    hello = (before.rps + after.rps) / 2
    events, replay = loads["api_events"], loads["api_replay"]
    ratio = events.rps / hello
    note(
        f"api reference: django_hello {before.rps:.0f} / {after.rps:.0f} req/s before / after, mean "
        f"{hello:.0f} req/s; targets: events >= {EVENTS_TARGET_RATIO:g}x hello: "
        f"{'met' if ratio >= EVENTS_TARGET_RATIO else 'MISSED'} ({ratio:.3g}x); events p99 < "
        f"{EVENTS_P99_TARGET_MS:g} ms: {'met' if events.p99_ms < EVENTS_P99_TARGET_MS else 'MISSED'} "
        f"({events.p99_ms:.1f} ms); replay p99 < {REPLAY_P99_TARGET_MS:g} ms: "
        f"{'met' if replay.p99_ms < REPLAY_P99_TARGET_MS else 'MISSED'} ({replay.p99_ms:.1f} ms)"
    )
    unqueued_hello, unqueued_replay = loads["django_hello_unqueued"], loads["api_replay_unqueued"]
    note(
        f"api at one connection per gunicorn worker (none queues behind another): replay p99 "
        f"{unqueued_replay.p99_ms:.1f} ms ({unqueued_replay.rps:.0f} req/s), hello world p99 "
        f"{unqueued_hello.p99_ms:.1f} ms ({unqueued_hello.rps:.0f} req/s); at 16 connections the replay's "
        f"p99 {replay.p99_ms:.1f} ms against the hello world's {before.p99_ms:.1f} / {after.p99_ms:.1f} ms"
    )
    return [
        line("api_events", events.rps, "req/s", "django_hello", hello, "req/s"),
        line("api_events_p99", events.p99_ms, "ms", "target", EVENTS_P99_TARGET_MS, "ms"),
        line("api_replay_p99", replay.p99_ms, "ms", "target", REPLAY_P99_TARGET_MS, "ms"),
    ]
