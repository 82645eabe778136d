"""While the database cannot be reached (a restart, a failover) pages and the API answer 503 with
Retry-After, so clients and load balancers try again, instead of a 500; and the health checks
report the replica down, lagging or promoted when one is configured."""

import contextlib

import pytest
from django.db import OperationalError, connections
from django.test import Client

from joyback import health, replicas, views
from tests.conftest import MONITORING

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True, databases=["default", "replica"]),
    pytest.mark.usefixtures("monitoring"),
]


@contextlib.contextmanager
def unreachable(alias: str = "default"):
    """The alias's server gone: its connection closed and the next one refused (nothing listens on
    port 1)."""
    connection = connections[alias]
    connection.close()
    saved = dict(connection.settings_dict)
    connection.settings_dict.update(HOST="127.0.0.1", PORT="1")
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(saved)


@pytest.fixture
def browser():
    return Client(raise_request_exception=False)


def test_a_page_answers_503_with_retry_after_while_the_database_is_unreachable(browser, summer):
    slug = summer.slug

    with unreachable():
        response = browser.get(f"/c/{slug}/")

    assert response.status_code == 503
    assert int(response["Retry-After"]) > 0
    assert "briefly unavailable" in response.content.decode()
    assert browser.get(f"/c/{slug}/").status_code == 200  # back by itself


def test_the_api_answers_a_json_503_with_retry_after(browser, alpaca):
    key = {"Authorization": "Bearer jb_test_nothing"}
    with unreachable():
        listed = browser.get("/api/v1/participants", headers=key)
        # The events intake, a machine endpoint with a handler of its own.
        posted = browser.post("/api/v1/events", "{}", content_type="application/json", headers=key)

    for response in (listed, posted):
        assert response.status_code == 503, response.content
        assert int(response["Retry-After"]) > 0
        assert response.json()["error"]["code"] == "unavailable"


def test_any_other_failure_is_still_a_500(browser, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(views, "readiness", broken)
    response = browser.get("/healthz/ready")
    assert response.status_code == 500 and not response.has_header("Retry-After")


@pytest.fixture
def replica_reads(settings):
    settings.REPLICA_READS = True
    replicas._replica_down_until["at"] = 0.0
    yield
    replicas._replica_down_until["at"] = 0.0


def checks(browser, path="/healthz/ready"):
    response = browser.get(path, **MONITORING)
    return response.status_code, response.json()


def test_without_a_replica_readiness_does_not_mention_one(browser, settings):
    settings.REPLICA_READS = False
    status, body = checks(browser)
    assert status == 200 and "replica" not in body["checks"]


def test_a_standby_streaming_close_behind_is_ok(browser, replica_reads, monkeypatch):
    monkeypatch.setattr(health, "replica_state", lambda using: (True, True, 0.3))
    status, body = checks(browser)
    assert status == 200 and body["status"] == "ok"
    assert body["checks"]["replica"] == {"ok": True, "detail": "0.3 s behind"}


def test_a_replica_down_degrades_readiness_and_fails_the_monitor(browser, replica_reads):
    with unreachable("replica"):
        status, body = checks(browser)
        assert status == 200 and body["status"] == "degraded" and body["down"] == ["replica"]
        assert "down" in body["checks"]["replica"]["detail"]

        monitor = browser.get("/healthz/", **MONITORING)
        assert monitor.status_code == 503 and "replica" in monitor.json()["down"]


def test_a_lagging_replica_is_reported(browser, replica_reads, monkeypatch, settings):
    settings.REPLICA_MAX_LAG_SECONDS = 10
    monkeypatch.setattr(health, "replica_state", lambda using: (True, True, 42.0))
    status, body = checks(browser)
    assert status == 200 and body["down"] == ["replica"]
    assert "42.0 s behind" in body["checks"]["replica"]["detail"]


def test_a_replica_not_streaming_or_promoted_is_reported(browser, replica_reads, monkeypatch):
    monkeypatch.setattr(health, "replica_state", lambda using: (True, False, 0))
    assert "not streaming" in checks(browser)[1]["checks"]["replica"]["detail"]
    # The test settings' replica is a mirror of the primary: a server that takes writes.
    monkeypatch.undo()
    assert "not a standby" in checks(browser)[1]["checks"]["replica"]["detail"]


def test_the_replica_state_query_runs_on_a_real_server():
    in_recovery, streaming, lag = health.replica_state(using="replica")
    assert (in_recovery, streaming, lag) == (False, False, None)


def test_an_operational_error_is_what_the_handler_turns_into_a_503():
    try:
        raise OperationalError("connection refused")
    except OperationalError:
        assert views.database_outage()
    try:
        raise RuntimeError("a bug")
    except RuntimeError:
        assert not views.database_outage()
