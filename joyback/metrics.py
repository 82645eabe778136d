"""GET /metrics for Prometheus: the request metrics every process counts, and the business numbers
an operator pages on, read from the database at scrape time (so every process and machine agrees).

Each app serves its own numbers through settings.METRICS_SOURCES (dotted paths to functions that
yield prometheus_client metric families): this module imports none of the apps. Reading them needs
`Authorization: Bearer <METRICS_TOKEN>` or a signed-in staff user.
"""

import hmac
import os

from django.conf import settings
from django.db.models import Count
from django.http import HttpResponse
from django.utils import timezone
from django.utils.module_loading import import_string
from django_q.models import Failure
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.multiprocess import MultiProcessCollector

from joyback.mfa import mfa_enabled
from joyback.queue import standing_work_health


class _Business:
    def collect(self):
        for source in settings.METRICS_SOURCES:
            yield from import_string(source)()


def metrics_reader(request) -> bool:
    """A monitoring system with METRICS_TOKEN, or staff with their second factor: those who may read
    the platform's numbers and health in detail."""
    token = settings.METRICS_TOKEN
    given = request.headers.get("Authorization", "")
    if token and hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
        return True
    user = getattr(request, "user", None)
    # Staff read it only with their second factor set up, as every admin page (payout counts, drift).
    return bool(user and user.is_active and user.is_staff and mfa_enabled(user))


def _process_registry():
    # Under gunicorn with PROMETHEUS_MULTIPROC_DIR every worker writes its counters to files there;
    # one scrape then sums them all instead of reading whichever worker answered.
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
        return registry
    return REGISTRY


def metrics(request):
    if not metrics_reader(request):
        response = HttpResponse("Metrics need a bearer token or a staff sign-in.\n", status=401)
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    business = CollectorRegistry(auto_describe=False)
    business.register(_Business())
    body = generate_latest(_process_registry()) + generate_latest(business)
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)


def gauge(name: str, documentation: str, labels: list[str], rows) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, documentation, labels=labels)
    for *values, number in rows:
        family.add_metric([str(v) for v in values], number)
    return family


def age_seconds(oldest, now=None) -> float:
    return 0.0 if oldest is None else max(0.0, ((now or timezone.now()) - oldest).total_seconds())


def standing_work_metrics():
    """Webhook and API intake still to process: what the standing worker has not done yet."""
    health = standing_work_health()
    yield gauge(
        "joyback_standing_work_waiting",
        "Stored webhook events, bank details and API events waiting for the standing worker",
        ["kind"],
        [(h.name, h.waiting) for h in health],
    )
    yield gauge(
        "joyback_standing_work_oldest_seconds",
        "How long the oldest waiting row has waited",
        ["kind"],
        [(h.name, h.oldest_waiting_seconds or 0) for h in health],
    )
    yield gauge(
        "joyback_standing_work_given_up",
        "Rows the standing worker gave up on after its attempts (the admin's Try again)",
        ["kind"],
        [(h.name, h.given_up) for h in health],
    )


def failed_tasks_metrics():
    rows = Failure.objects.values_list("func").annotate(n=Count("pk")).order_by()
    yield gauge("joyback_tasks_failed", "Queued tasks that failed (kept by django-q2)", ["func"], rows)
