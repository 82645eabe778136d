import sys

from django.conf import settings
from django.core.cache import cache
from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.utils.html import escape
from django.utils.module_loading import import_string
from django.utils.translation import gettext as _
from django_q.conf import Conf

from joyback.api.exceptions import api_unavailable
from joyback.health import monitoring, readiness
from joyback.heartbeats import workers_problems, workers_state
from joyback.metrics import metrics_reader
from joyback.queue import standing_work_health


def home(request):
    if request.user.is_authenticated:
        return redirect("brand_home")
    return render(request, "home.html")


def favicon(request):
    return HttpResponsePermanentRedirect(static("favicon.svg"))


def healthz_live(request):
    """The process answers: nothing else is asked, so a database or Redis outage never gets the
    web processes restarted (they recover by themselves when it ends)."""
    return JsonResponse({"status": "ok"})


def healthz_ready(request):
    """For the load balancer: whether this process can serve (its database and Redis), each named
    with what is wrong. 503 while the database is down; Redis down alone is "degraded" and still
    200, as pages, sign-in and the API answer from the database meanwhile. Nothing about money or
    providers: it is the same on every node, so failing here would take them all out of rotation
    and mend nothing (the uptime monitor's /healthz/ tells a person). The details (errors naming
    hosts, the replica's lag) only for a monitoring token or staff: a load balancer needs the code."""
    return _health_answer(
        readiness(), bank=[], show_details=metrics_reader(request), degraded_by={"redis", "replica"}
    )


def healthz(request):
    """For the uptime monitor: readiness, the payment provider, the standing worker's backlog, and
    the ledger's bank and provider balance against theirs; an open alert (a drift, a broken statement
    chain) is a 503 until staff clear it. Only the monitor's token or staff see what is wrong: the
    amounts are the platform's money, and that it disagrees with its bank is for them alone."""
    if not metrics_reader(request):
        # A stranger learns the status alone, from an answer kept a few seconds: each probe calls
        # the payment provider and sums the ledger, which no anonymous loop may make the nodes do.
        status, code = cache.get_or_set(
            "joyback:healthz:status", lambda: _health_status(_health_probe()), HEALTH_STATUS_SECONDS
        )
        response = JsonResponse({"status": status}, status=code)
        if code == 503:
            response["Retry-After"] = "30"
        return response
    checks, bank = _health_probe()
    return _health_answer(checks, bank=bank, show_details=True, degraded_by={"redis"})


# How long a stranger's /healthz/ answer is kept (see healthz).
HEALTH_STATUS_SECONDS = 15


def _health_probe() -> tuple[list, list[str]]:
    checks = monitoring()
    bank = []
    if checks[0].ok:
        for path in settings.HEALTH_CHECKS:
            bank += import_string(path)()
    return checks, bank


def _health_status(probe: tuple[list, list[str]], degraded_by=frozenset({"redis"})) -> tuple[str, int]:
    # A replica down or lagging fails here: a person is told the primary has no standby to fail over to.
    checks, bank = probe
    down = [check.name for check in checks if not check.ok]
    if not down and not bank:
        return "ok", 200
    if set(down) <= degraded_by and not bank:
        return "degraded", 200
    return "failing", 503


def _health_answer(checks, *, bank: list[str], show_details: bool, degraded_by: set) -> JsonResponse:
    down = [check.name for check in checks if not check.ok]
    status, code = _health_status((checks, bank), degraded_by=frozenset(degraded_by))
    if show_details:
        body = {
            "status": status,
            "down": down,
            "checks": {check.name: {"ok": check.ok, "detail": check.detail} for check in checks},
            "bank": bank,
        }
    else:
        body = {
            "status": status,
            "down": down,
            "checks": {check.name: {"ok": check.ok} for check in checks},
            "bank": "failing" if bank else "ok",
        }
    response = JsonResponse(body, status=code)
    if code == 503:
        response["Retry-After"] = "30"
    return response


def healthz_work(request):
    """For the uptime monitor: 503 when the standing worker gave up on rows (listed in the admin,
    where they are tried again), rows wait longer than any running worker would leave them, no
    worker of a kind wrote its heartbeat within WORKER_STALE_SECONDS, or a silent one may still
    hold leased rows (each worker named). Without task workers (Q_SYNC) no worker is expected.
    Workers' names and the backlogs are for a monitoring token or staff; others learn the status."""
    health = standing_work_health()
    workers = workers_state()
    problems = [] if Conf.SYNC else workers_problems(workers)
    failing = any(kind.failing for kind in health) or bool(problems)
    response = JsonResponse(
        _work_body(health, workers, problems, failing)
        if metrics_reader(request)
        else {"status": "failing" if failing else "ok"},
        status=503 if failing else 200,
    )
    if failing:
        response["Retry-After"] = "30"
    return response


def _work_body(health, workers, problems, failing: bool) -> dict:
    return {
        "status": "failing" if failing else "ok",
        "problems": problems,
        "workers": [
            {
                "name": worker.name,
                "kind": worker.kind,
                "alive": worker.alive,
                "seconds_since_beat": worker.seconds_since_beat,
                "holding": worker.holding,
                "stopped": worker.stopped,
            }
            for worker in workers
        ],
        "work": [
            {
                "name": kind.name,
                "waiting": kind.waiting,
                "oldest_waiting_seconds": kind.oldest_waiting_seconds,
                "given_up": kind.given_up,
            }
            for kind in health
        ],
    }


# The seconds a client is asked to wait when the database cannot be reached: about what a restart
# or a failover to the replica takes.
OUTAGE_RETRY_AFTER_SECONDS = 5


def database_outage() -> bool:
    """Whether the exception being handled says the database cannot be reached or was lost (a
    restart, a failover, PgBouncer gone), rather than a fault of the request or the code."""
    error = sys.exc_info()[1]
    return isinstance(error, OperationalError | InterfaceError)


def service_unavailable(request):
    """A 503 with Retry-After instead of a 500 while the database is away: clients and load
    balancers try again, people are told to. A bare page: nothing here may need the database."""
    if request.path.startswith("/api/"):
        return api_unavailable(request, retry_after=OUTAGE_RETRY_AFTER_SECONDS)
    message = escape(_("The service is briefly unavailable; please try again shortly."))
    response = HttpResponse(
        f'<!doctype html><meta charset="utf-8"><title>503</title><h1>503</h1><p>{message}</p>',
        status=503,
    )
    response["Retry-After"] = str(OUTAGE_RETRY_AFTER_SECONDS)
    return response
