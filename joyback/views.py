from django.conf import settings
from django.http import HttpResponsePermanentRedirect, JsonResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.utils.module_loading import import_string

from joyback.health import monitoring, readiness
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
    and mend nothing (the uptime monitor's /healthz/ tells a person)."""
    return _health_answer(readiness(), bank=[], show_details=True)


def healthz(request):
    """For the uptime monitor: readiness, the payment provider, the standing worker's backlog, and
    the ledger's bank and provider balance against theirs; an open alert (a drift, a broken statement
    chain) is a 503 until staff clear it. Only staff see what is wrong: the amounts are the
    platform's money, and an anonymous caller learns the words alone."""
    checks = monitoring()
    bank = []
    if checks[0].ok:
        for path in settings.HEALTH_CHECKS:
            bank += import_string(path)()
    return _health_answer(checks, bank=bank, show_details=request.user.is_staff)


def _health_answer(checks, *, bank: list[str], show_details: bool) -> JsonResponse:
    down = [check.name for check in checks if not check.ok]
    if not down and not bank:
        status, code = "ok", 200
    elif down == ["redis"] and not bank:
        status, code = "degraded", 200
    else:
        status, code = "failing", 503
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
    where they are tried again) or rows wait longer than any running worker would leave them."""
    health = standing_work_health()
    failing = any(kind.failing for kind in health)
    body = {
        "status": "failing" if failing else "ok",
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
    return JsonResponse(body, status=503 if failing else 200)
