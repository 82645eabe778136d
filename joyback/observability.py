"""What an operator sees: a request id on every log line (carried into queued tasks and set per
item of standing work), JSON logs, request metrics for Prometheus, and error reports to Sentry.
"""

import json
import logging
import re
import time
import uuid
from contextlib import contextmanager
from contextvars import ContextVar

from prometheus_client import Counter, Histogram

from joyback.redact import HIDDEN, secrets_redact

_request_id: ContextVar[str] = ContextVar("request_id", default="")
# A caller's own id (a load balancer's, a brand's) is kept when it looks like one; anything else
# would let a request write what it likes into our logs.
_ACCEPTED_ID = re.compile(r"[A-Za-z0-9._:-]{8,64}")

REQUESTS = Counter(
    "joyback_http_requests", "HTTP requests answered, by URL name and status", ["method", "route", "status"]
)
LATENCY = Histogram(
    "joyback_http_request_duration_seconds",
    "Time to answer, by URL name",
    ["route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)


def request_id() -> str:
    return _request_id.get()


@contextmanager
def request_id_bound(value: str):
    token = _request_id.set(value)
    try:
        yield value
    finally:
        _request_id.reset(token)


def request_id_middleware(get_response):
    """First in the chain: the id names every log line of the request, is answered as X-Request-ID,
    and is counted into the request metrics under the URL's name (never its raw path, whose ids
    would make a new series per object)."""

    def middleware(request):
        given = request.headers.get("X-Request-ID", "")
        rid = given if _ACCEPTED_ID.fullmatch(given) else uuid.uuid4().hex
        started = time.perf_counter()
        with request_id_bound(rid):
            _sentry_tag(rid)
            response = get_response(request)
        match = getattr(request, "resolver_match", None)
        route = (match.view_name if match else "") or "unmatched"
        REQUESTS.labels(request.method, route, str(response.status_code)).inc()
        LATENCY.labels(route).observe(time.perf_counter() - started)
        response.headers["X-Request-ID"] = rid
        return response

    return middleware


def _sentry_tag(rid: str) -> None:
    import sentry_sdk  # deferred: loaded only when SENTRY_DSN turns error reports on

    if sentry_sdk.get_client().is_active():
        sentry_sdk.get_isolation_scope().set_tag("request_id", rid)


class RequestIdFilter(logging.Filter):
    def filter(self, record):
        record.request_id = _request_id.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: what log collectors parse without a pattern."""

    def format(self, record):
        entry = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S%z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", ""),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


# Queued tasks: the id of the request (or task) that queued one goes along in the task's package
# and is set again in the worker before it runs (django-q2's signals).


def task_request_id_attach(sender, task, **kwargs):
    task["request_id"] = _request_id.get() or f"task-{task.get('id', '')}"


def task_request_id_restore(sender, func, task, **kwargs):
    _request_id.set(task.get("request_id") or f"task-{task.get('id', '')}")


def sentry_init(dsn: str, *, environment: str, traces_sample_rate: float = 0.0, transport=None) -> None:
    """Error reports to Sentry (settings call this when SENTRY_DSN is set). No personal data is
    sent: payee details are encrypted and masked, and request bodies and users stay out."""
    import sentry_sdk  # deferred: loaded only when SENTRY_DSN turns error reports on
    from sentry_sdk.integrations.django import (
        DjangoIntegration,  # deferred: loaded only when SENTRY_DSN turns error reports on
    )

    sentry_sdk.init(
        dsn=dsn,
        environment=environment,
        integrations=[DjangoIntegration()],
        max_request_body_size="never",
        traces_sample_rate=traces_sample_rate,
        transport=transport,
        before_send=_event_secrets_redact,
    )


def _event_secrets_redact(event, hint):
    """The request's address, query and referer without the secrets of links (joyback.redact)."""
    request = event.get("request") or {}
    if isinstance(request.get("url"), str):
        request["url"] = secrets_redact(request["url"])
    if request.get("query_string"):
        request["query_string"] = HIDDEN
    headers = request.get("headers") or {}
    for name in list(headers):
        if name.lower() == "referer" and isinstance(headers[name], str):
            headers[name] = secrets_redact(headers[name])
    return event
