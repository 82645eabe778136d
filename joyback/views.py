from django.http import JsonResponse
from django.shortcuts import redirect, render

from joyback.health import readiness
from joyback.queue import standing_work_health


def home(request):
    if request.user.is_authenticated:
        return redirect("brand_home")
    return render(request, "home.html")


def healthz_live(request):
    """The process answers: nothing else is asked, so a database or Redis outage never gets the
    web processes restarted (they recover by themselves when it ends)."""
    return JsonResponse({"status": "ok"})


def healthz_ready(request):
    """Whether this process can serve: the database, Redis, the payment provider and the standing
    worker's backlog, each named with what is wrong. 503 while any is down; Redis down alone is
    "degraded" and still 200, as pages, sign-in and the API answer from the database meanwhile."""
    checks = readiness()
    down = [check.name for check in checks if not check.ok]
    if not down:
        status, code = "ok", 200
    elif down == ["redis"]:
        status, code = "degraded", 200
    else:
        status, code = "failing", 503
    body = {
        "status": status,
        "down": down,
        "checks": {check.name: {"ok": check.ok, "detail": check.detail} for check in checks},
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
