from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.utils.module_loading import import_string

from joyback.queue import standing_work_health


def home(request):
    if request.user.is_authenticated:
        return redirect("brand_home")
    return render(request, "home.html")


def healthz(request):
    """For the uptime monitor: the database answers, and the ledger's bank agrees with the bank's
    statements (503 with the drift and open bank alerts when it does not)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    bank = []
    for path in settings.HEALTH_CHECKS:
        bank += import_string(path)()
    if bank:
        return JsonResponse({"status": "failing", "bank": bank}, status=503)
    return JsonResponse({"status": "ok"})


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
