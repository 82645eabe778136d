"""What an operator sees: Ona the operator's Prometheus scrapes /metrics with its token; every
request and task has an id in the logs; errors go to Sentry when SENTRY_DSN says so."""

import contextvars
import io
import json
import logging
import os
import subprocess
import sys
from datetime import timedelta
from unittest import mock

import httpx
import pytest
import sentry_sdk
from django.http import HttpResponse
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone
from django_q.signals import pre_enqueue, pre_execute
from django_q.tasks import async_task
from sentry_sdk.transport import Transport

from joyback.observability import (
    JsonFormatter,
    RequestIdFilter,
    request_id,
    request_id_bound,
    request_id_middleware,
    sentry_init,
)
from joyback.queue import claim_and_process
from payouts.models import Notification, Payout, Statement, StatementImport
from tests.conftest import MONITORING, totp_enable
from tests.payouts.conftest import (
    owed,  # noqa: F401  (the fixture)
    status_force,
)
from verification.models import ProviderEvent
from verification.selectors import provider_events_unfinished
from verification.services.provider_events import provider_event_store

pytestmark = pytest.mark.django_db

TOKEN = "prometheus-scrape-token-0123456789"
ONA = {"HTTP_AUTHORIZATION": f"Bearer {TOKEN}"}


def scrape(client, **headers):
    with override_settings(METRICS_TOKEN=TOKEN):
        return client.get("/metrics", **headers)


def series(body: str, name: str) -> dict[str, float]:
    """{'{labels}': value} of one metric in the text exposition."""
    found = {}
    for line in body.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            labels, value = line[len(name) :].rsplit(" ", 1)
            found[labels] = float(value)
    return found


def test_metrics_are_refused_without_the_token(client):
    assert scrape(client).status_code == 401
    assert scrape(client, HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    with override_settings(METRICS_TOKEN=""):
        assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 401


def test_a_brand_owner_may_not_read_them_but_staff_may(client, alice, make_user):
    client.force_login(alice)
    assert scrape(client).status_code == 401

    ops = make_user("ops@joyback.example", is_staff=True)
    client.force_login(ops)
    assert scrape(client).status_code == 401  # staff without their second factor, as in the admin

    client.force_login(totp_enable(ops))
    assert scrape(client).status_code == 200


def test_requests_are_counted_by_url_name_not_by_path(client, summer):
    client.get(f"/c/{summer.slug}/")

    body = scrape(client, **ONA).content.decode()

    counted = series(body, "joyback_http_requests_total")
    assert (
        counted['{method="GET",route="campaign_landing",status="200"}'] >= 1
    )  # the counters are per process
    assert not any(summer.slug in labels for labels in counted)
    assert series(body, "joyback_http_request_duration_seconds_count")


def test_provider_webhooks_are_counted_by_route_and_answer(client):
    def refused_webhooks():
        counted = series(scrape(client, **ONA).content.decode(), "joyback_http_requests_total")
        return counted.get('{method="POST",route="verification:whatsapp_webhook",status="403"}', 0)

    before = refused_webhooks()
    client.post(reverse("verification:whatsapp_webhook"), b"{}", content_type="application/json")  # unsigned

    assert refused_webhooks() == before + 1


def test_open_payouts_by_status_and_age_and_failed_notifications(client, owed):  # noqa: F811
    owed()  # Pat's payout went out and settled in the sandbox
    payout = Payout.objects.get()
    status_force(Payout.objects.filter(pk=payout.pk), "unknown")
    Payout.objects.filter(pk=payout.pk).update(created_at=timezone.now() - timedelta(hours=2))
    Notification.objects.create(
        payout=payout,
        payee_id=payout.payee_id,
        participant_id=payout.participant_id,
        brand_id=payout.brand_id,
        kind="paid",
        channel="email",
        key="stuck",
        created_at=timezone.now(),
    )
    Notification.objects.filter(key="stuck").update(created_at=timezone.now() - timedelta(minutes=10))

    body = scrape(client, **ONA).content.decode()

    assert series(body, "joyback_payouts_open") == {'{status="unknown"}': 1.0}
    assert series(body, "joyback_payouts_open_oldest_seconds")['{status="unknown"}'] >= 7200
    assert series(body, "joyback_notifications_failed") == {'{channel="email"}': 1.0}


def test_the_webhook_backlog_is_shown_until_the_worker_has_it(client):
    provider_event_store(provider="whatsapp", event_id="wamid.1", payload={"entry": []})

    waiting = series(scrape(client, **ONA).content.decode(), "joyback_standing_work_waiting")
    assert waiting['{kind="provider webhook events"}'] == 1.0

    ProviderEvent.objects.update(processed_at=timezone.now())
    waiting = series(scrape(client, **ONA).content.decode(), "joyback_standing_work_waiting")
    assert waiting['{kind="provider webhook events"}'] == 0.0


def test_statement_drift_and_exceptions_are_exposed(client):
    # The bank says its account closed yesterday at 250.00 EUR; the ledger's platform bank holds 0.
    upload = StatementImport.objects.create(data=b"", sha256="0" * 64)
    Statement.objects.create(
        statement_import=upload,
        message="camt.053",
        msg_id="M1",
        statement_id="S1",
        account="DE00TEST",
        currency="EUR",
        opening_balance=0,
        closing_balance=250_00,
        closing_date=timezone.localdate() - timedelta(days=1),
    )

    body = scrape(client, **ONA).content.decode()

    assert 'joyback_statement_drift_minor{account="DE00TEST",currency="EUR"} -25000.0' in body
    assert "joyback_platform_moves_paused 0.0" in body  # an alert pauses moves, a scrape does not
    assert "# TYPE joyback_reconciliation_exceptions_open gauge" in body
    assert "# TYPE joyback_tasks_failed gauge" in body


def test_every_answer_names_its_request(client):
    first, second = client.get("/healthz/"), client.get("/healthz/")

    assert len(first["X-Request-ID"]) == 32 and first["X-Request-ID"] != second["X-Request-ID"]
    assert client.get("/healthz/", HTTP_X_REQUEST_ID="lb-7f3a9c21")["X-Request-ID"] == "lb-7f3a9c21"
    forged = client.get("/healthz/", HTTP_X_REQUEST_ID='x" level="CRITICAL')["X-Request-ID"]
    assert forged != 'x" level="CRITICAL' and len(forged) == 32


def test_log_lines_are_json_with_the_request_id():
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(JsonFormatter())
    log = logging.getLogger("joyback.test")
    log.addHandler(handler)
    try:
        with request_id_bound("req-0a1b2c3d"):
            log.warning("payout %s unknown", 42)
    finally:
        log.removeHandler(handler)

    line = json.loads(out.getvalue())
    assert line["message"] == "payout 42 unknown" and line["request_id"] == "req-0a1b2c3d"
    assert line["level"] == "WARNING" and line["time"]


SEEN = []


def record_request_id():
    SEEN.append(request_id())


def test_a_queued_task_runs_under_the_id_of_the_request_that_queued_it():
    packages = []

    def keep(sender, task, **kwargs):
        packages.append(dict(task))

    pre_enqueue.connect(keep)
    try:
        with request_id_bound("req-queued01"):
            async_task("tests.test_observability.record_request_id", sync=True)
    finally:
        pre_enqueue.disconnect(keep)

    assert packages[0]["request_id"] == "req-queued01"
    # In the worker, a fresh process with no request: the id comes from the package.
    worker = contextvars.Context()
    worker.run(pre_execute.send, sender="django_q", func=record_request_id, task=packages[0])
    assert worker.run(request_id) == "req-queued01"


def test_each_item_of_standing_work_logs_under_its_own_id():
    ids = [provider_event_store(provider="whatsapp", event_id=f"wamid.{n}", payload={}) for n in (1, 2)]
    seen = {}

    claim_and_process(
        provider_events_unfinished(),
        process=lambda pk: seen.setdefault(pk, request_id()),
        limit=10,
        lease=timedelta(minutes=5),
        order_by="pk",
    )

    assert seen == {pk: f"work-providerevent-{pk}" for pk in ids}


class Kept(Transport):
    def __init__(self, options=None):
        super().__init__(options)
        self.events = []

    def capture_envelope(self, envelope):
        self.events.extend(item.payload.json for item in envelope.items if item.type == "event")


def test_errors_are_reported_to_sentry_with_the_request_id(rf):
    kept = Kept()
    sentry_init("https://key@sentry.example/1", environment="test", transport=kept)
    try:

        def failing_view(request):
            sentry_sdk.capture_exception(RuntimeError("bank answer unreadable"))
            return HttpResponse(status=500)

        request_id_middleware(failing_view)(rf.get("/x/", HTTP_X_REQUEST_ID="req-sentry01"))
        sentry_sdk.flush()
    finally:
        sentry_sdk.init()  # no DSN: reporting off again

    (event,) = kept.events
    assert event["tags"]["request_id"] == "req-sentry01"
    assert event["exception"]["values"][0]["value"] == "bank answer unreadable"


def test_sentry_is_on_only_when_its_dsn_is_set():
    check = "import config.settings, sentry_sdk; print(sentry_sdk.get_client().is_active())"
    env = {k: v for k, v in os.environ.items() if k != "JOYBACK_ENV"} | {"JOYBACK_ENV": "development"}
    results = [
        subprocess.run(
            [sys.executable, "-c", check], env=env | {"SENTRY_DSN": dsn}, capture_output=True, text=True
        ).stdout.strip()
        for dsn in ("https://key@sentry.example/1", "")
    ]
    assert results == ["True", "False"]


def test_health_details_are_for_the_monitor_and_a_stranger_learns_only_the_status(client, monitoring):
    """Workers' names, backlogs and the readiness checks' errors tell an attacker the topology and
    the load; a stranger learns whether it works, the monitor with its token what is wrong."""
    stranger = client.get("/healthz/work/").json()
    assert set(stranger) == {"status"}
    assert "workers" in client.get("/healthz/work/", **monitoring).json()

    stranger = client.get("/healthz/ready").json()
    assert all(set(check) == {"ok"} for check in stranger["checks"].values())
    monitor = client.get("/healthz/ready", **monitoring).json()
    assert all("detail" in check for check in monitor["checks"].values())


# --- As an attacker -------------------------------------------------------------------------------
# What a stranger learns from, and costs, the health endpoints with no token: /healthz/live,
# /healthz/ready, /healthz/work/ and /metrics say little; /healthz/ answers the status alone, kept a
# few seconds, so a stranger neither makes every node call the payment provider nor learns that the
# platform's money disagrees with its bank.


def test_anonymous_health_checks_do_not_each_call_the_payment_provider(client, settings):
    """Every anonymous GET /healthz/ makes the server call PSP_API_BASE (up to a second each while
    it is slow, holding a web worker): a stranger's loop is a load on every node and on the
    provider. The provider's answer should be cached a little (or probed only for the monitor)."""
    settings.SANDBOX = False
    settings.PSP_API_BASE = "https://psp.invalid/"
    with mock.patch("joyback.health.httpx.get", return_value=httpx.Response(401)) as probe:
        for _ in range(20):
            client.get("/healthz/")

    assert probe.call_count <= 2, (
        f"20 anonymous health checks called the payment provider {probe.call_count} times"
    )


def test_a_stranger_is_not_told_that_the_money_disagrees_with_the_bank(client, settings):
    """An anonymous caller learns `"bank": "failing"`, which checks are down and how they are named:
    that the ledger and the bank disagree (a drift, a broken statement chain) is the platform's most
    sensitive state and the moment a fraudster would want to know. The uptime monitor has a token;
    without it the answer should be the status alone."""
    with mock.patch(
        "payouts.reconciliation.bank_health.bank_alert_problems", return_value=["BANK ALERT #1 drift: x"]
    ):
        settings.HEALTH_CHECKS = ["payouts.reconciliation.bank_health.bank_alert_problems"]
        body = client.get("/healthz/").json()

    assert set(body) == {"status"}, f"a stranger reads {body}"


# --- What held ------------------------------------------------------------------------------------


def test_details_metrics_and_workers_need_the_token(client, monitoring, make_user):
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    staff = make_user("staff@example.org", is_staff=True)  # no second factor yet
    client.force_login(staff)
    assert client.get("/metrics").status_code == 401
    client.logout()

    assert set(client.get("/healthz/work/").json()) == {"status"}
    ready = client.get("/healthz/ready").json()
    assert all(set(check) == {"ok"} for check in ready["checks"].values())
    assert client.get("/metrics", **MONITORING).status_code == 200
