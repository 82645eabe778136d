from django.db import connection
from django.http import HttpResponsePermanentRedirect, JsonResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static

from joyback.queue import standing_work_health


def home(request):
    if request.user.is_authenticated:
        return redirect("brand_home")
    return render(request, "home.html")


def favicon(request):
    return HttpResponsePermanentRedirect(static("favicon.svg"))


def healthz(request):
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
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
