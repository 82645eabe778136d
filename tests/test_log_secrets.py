"""No link's secret in a log line, in any mode: runserver's request lines, Django's own warnings,
gunicorn's access log and error reports carry the route with its secret replaced by …"""

import io
import logging
from datetime import timedelta
from types import SimpleNamespace

import pytest
import sentry_sdk
from django.urls import reverse
from gunicorn.config import Config

from joyback.observability import sentry_init
from joyback.redact import gunicorn_logger_class, secrets_redact
from tests.test_observability import Kept

TOKEN = "Zq3xY7secretTokenValue_0123456789"


@pytest.fixture
def console():
    """What the configured console handler writes (every mode logs through it)."""
    (handler,) = [h for h in logging.getLogger().handlers if getattr(h, "name", "") == "console"]
    written = io.StringIO()
    previous = handler.setStream(written)
    yield written
    handler.setStream(previous)


def test_runserver_request_lines_hide_the_status_token(console):
    # As django.core.servers.basehttp.WSGIRequestHandler.log_message writes them.
    logging.getLogger("django.server").info(
        '"%s" %s %s', f"GET /c/summer-glow/status/{TOKEN}/ HTTP/1.1", "200", "5120"
    )

    line = console.getvalue()
    assert "/c/summer-glow/status/…/" in line and TOKEN not in line


def test_runserver_writes_only_through_the_redacting_handler():
    server = logging.getLogger("django.server")

    # (Unnamed handlers are the test runner's own capture.)
    assert [h.name for h in server.handlers if h.name] == ["console"] and not server.propagate
    # Django's own console handler (under DEBUG) would write "Not Found: <path>" unredacted.
    assert not [h for h in logging.getLogger("django").handlers if h.name]


@pytest.mark.django_db
def test_a_not_found_warning_hides_the_token(client, console):
    client.get(reverse("payouts:status_payout", args=[TOKEN]))
    client.get(reverse("payouts:privacy_confirm", args=[TOKEN]))

    assert "Not Found: /p/status/…/" in console.getvalue()
    assert TOKEN not in console.getvalue()


@pytest.mark.parametrize(
    "path, shown",
    [
        (f"/p/status/{TOKEN}/change/", "/p/status/…/change/"),
        (f"/p/privacy/{TOKEN}/", "/p/privacy/…/"),
        (f"/shops/abc/claim/1001/{TOKEN}/", "/shops/abc/claim/…/…/"),
        (f"/accounts/confirm-email/{TOKEN}/", "/accounts/confirm-email/…/"),
        (f"/accounts/password/reset/key/{TOKEN}/", "/accounts/password/reset/key/…/"),
        (f"/tiktok/callback/?code={TOKEN}&state=x", "/tiktok/callback/?…"),
        ("/c/summer-glow/", "/c/summer-glow/"),
    ],
)
def test_secrets_in_paths_are_replaced(path, shown):
    assert secrets_redact(f'"GET {path} HTTP/1.1" 200') == f'"GET {shown} HTTP/1.1" 200'


def test_gunicorns_access_log_hides_the_token():
    logger = gunicorn_logger_class()(Config())
    environ = {
        "REQUEST_METHOD": "GET",
        "RAW_URI": f"/c/summer-glow/status/{TOKEN}/?x={TOKEN}",
        "PATH_INFO": f"/c/summer-glow/status/{TOKEN}/",
        "QUERY_STRING": f"x={TOKEN}",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_REFERER": f"https://joyback.example/p/privacy/{TOKEN}/",
    }
    response = SimpleNamespace(status="200 OK", headers=[], sent=10)
    request = SimpleNamespace(headers=[("REFERER", environ["HTTP_REFERER"])])

    atoms = logger.atoms(response, request, environ, timedelta(seconds=0))

    assert TOKEN not in "".join(str(value) for value in atoms.values())
    assert atoms["r"] == "GET /c/summer-glow/status/…/?… HTTP/1.1"


def test_error_reports_hide_the_token(rf):
    kept = Kept()
    sentry_init("https://key@sentry.example/1", environment="test", transport=kept)
    try:
        with sentry_sdk.new_scope() as scope:
            scope.add_event_processor(
                lambda event, hint: (
                    event
                    | {
                        "request": {
                            "url": f"https://joyback.example/c/s/status/{TOKEN}/",
                            "query_string": f"code={TOKEN}",
                            "headers": {"Referer": f"https://joyback.example/p/privacy/{TOKEN}/"},
                        }
                    }
                )
            )
            sentry_sdk.capture_message("status page failed")
        sentry_sdk.flush()
    finally:
        sentry_sdk.init()  # no DSN: reporting off again

    (event,) = kept.events
    assert TOKEN not in str(event) and event["request"]["url"].endswith("/status/…/")
