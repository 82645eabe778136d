"""The signed provider webhooks and POST /api/v1/events (declared @machine_endpoint, mounted in
settings.MACHINE_URLCONF) are answered by their own handler without the browser middleware, as the
WSGI application that gunicorn and runserver serve routes them; every page still gets all of it.

These tests call the WSGI (and ASGI) application itself, not the test client."""

import asyncio
import io
import json
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
from asgiref.sync import async_to_sync
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve, reverse
from django.urls import path as url_path

from joyback.api.keys import api_key_create
from joyback.machine import (
    MachineRouterASGI,
    MachineRouterWSGI,
    _machine_paths,
    is_machine_endpoint,
    machine_match,
)
from verification.models import ProviderEvent
from verification.providers.whatsapp import signature
from verification.sandbox.whatsapp import message_envelope

pytestmark = pytest.mark.django_db

WEBHOOK = "/v/webhooks/whatsapp/"
EVENTS = "/api/v1/events"
HANDSHAKE = "hub.mode=subscribe&hub.verify_token=sbx-verify-token&hub.challenge=42"
# What every answer carries from the middleware both chains share.
SHARED = {
    "content-security-policy",
    "cross-origin-opener-policy",
    "referrer-policy",
    "x-content-type-options",
    "x-request-id",
}
# What the browser chain adds to every page: its language and what the answer varies by.
BROWSER_ONLY = ("content-language", "vary", "x-frame-options")


@pytest.fixture(scope="module")
def application():
    """config.wsgi's application (built as config.wsgi builds it, without its garbage collector
    freeze, which would outlive the test)."""
    return MachineRouterWSGI()


@contextmanager
def connection_kept():
    """As Django's test client: the request signals leave the test's transaction's connection open."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@dataclass
class Answer:
    status: int
    headers: dict[str, str]  # lower-cased names; Set-Cookie apart
    cookies: list[str]
    body: bytes

    def json(self):
        return json.loads(self.body)


def call(application, method, path, *, body=b"", query="", content_type="", headers=None) -> Answer:
    """One request to the WSGI callable, as gunicorn makes it."""
    environ = {
        "REQUEST_METHOD": method,
        "SCRIPT_NAME": "",
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "testserver",
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": io.StringIO(),
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    if body:
        environ["CONTENT_LENGTH"] = str(len(body))
    if content_type:
        environ["CONTENT_TYPE"] = content_type
    for name, value in (headers or {}).items():
        environ["HTTP_" + name.upper().replace("-", "_")] = value
    started = []
    with connection_kept():
        result = application(
            environ, lambda status, headers, exc_info=None: started.append((status, headers))
        )
        try:
            content = b"".join(result)
        finally:
            result.close()
    status, pairs = started[0]
    return Answer(
        status=int(status.split()[0]),
        headers={name.lower(): value for name, value in pairs if name.lower() != "set-cookie"},
        cookies=[value for name, value in pairs if name.lower() == "set-cookie"],
        body=content,
    )


def delivery() -> tuple[bytes, dict]:
    body = json.dumps(message_envelope(wa_id="4915123456789", name="Pat", text="hello")).encode()
    return body, {"X-Hub-Signature-256": signature(body=body, app_secret="sbx-meta-app-secret")}


def post_delivery(application, body, headers, path=WEBHOOK) -> Answer:
    return call(application, "POST", path, body=body, content_type="application/json", headers=headers)


def test_a_signed_delivery_is_stored_without_session_csrf_or_language(application):
    body, headers = delivery()

    answer = post_delivery(application, body, {**headers, "Accept-Language": "de"})

    assert answer.status == 200 and answer.body == b"ok"
    assert set(answer.headers) == SHARED | {"content-type", "content-length"}
    assert answer.headers["content-length"] == "2" and not answer.cookies
    assert ProviderEvent.objects.count() == 1


def test_the_signature_is_still_checked(application):
    body, _ = delivery()

    assert post_delivery(application, body, {"X-Hub-Signature-256": "sha256=" + "0" * 64}).status == 403
    unsigned = signature(body=b"not json", app_secret="sbx-meta-app-secret")
    assert post_delivery(application, b"not json", {"X-Hub-Signature-256": unsigned}).status == 400
    assert not ProviderEvent.objects.exists()


def test_the_verify_handshake_still_answers(application):
    answer = call(application, "GET", WEBHOOK, query=HANDSHAKE)

    assert answer.status == 200 and answer.body == b"42"
    assert not any(name in answer.headers for name in BROWSER_ONLY)


@pytest.fixture
def events_key(make_live_campaign):
    campaign = make_live_campaign(slug="cashback-week", package="cashback", budget=100_00)
    campaign.rules.filter(trigger="purchase").update(cashback_basis_points=500, return_window_days=14)
    return api_key_create(brand_id=campaign.brand_id, name="shop", scopes=["events"]).secret


def test_an_event_and_its_replay_are_answered_by_the_machine_handler(application, events_key):
    body = json.dumps(
        {
            "type": "purchase",
            "order_id": "A-1001",
            "amount": 40_00,
            "currency": "EUR",
            "customer": {"email": "kim@example.com"},
        }
    ).encode()
    headers = {"Authorization": f"Bearer {events_key}", "Idempotency-Key": "order-A-1001"}

    first = call(application, "POST", EVENTS, body=body, content_type="application/json", headers=headers)
    replay = call(application, "POST", EVENTS, body=body, content_type="application/json", headers=headers)

    assert first.status == 202 and first.json()["status"] == "received"
    assert set(first.headers) == SHARED | {"content-type", "content-length", "joyback-version"}
    assert first.headers["content-length"] == str(len(first.body)) and not first.cookies
    assert (replay.status, replay.body) == (first.status, first.body)
    assert replay.headers["x-request-id"] != first.headers["x-request-id"]


def test_an_api_refusal_on_the_machine_path_is_in_english_after_a_german_page(application, summer):
    # The page leaves German active on this thread, as LocaleMiddleware does after every request.
    page = call(
        application, "GET", reverse("campaign_landing", args=[summer.slug]), headers={"Accept-Language": "de"}
    )
    assert page.headers["content-language"] == "de"

    answer = call(
        application,
        "POST",
        EVENTS,
        body=b"{}",
        content_type="application/json",
        headers={"Accept-Language": "de"},
    )

    assert answer.status == 401 and answer.json()["error"]["code"] == "not_authenticated"
    assert answer.json()["error"]["message"] == "Authentication credentials were not provided."
    assert not any(name in answer.headers for name in BROWSER_ONLY) and not answer.cookies
    assert answer.headers["www-authenticate"] == 'Bearer realm="api"'
    assert answer.headers["joyback-version"]


def test_the_landing_page_keeps_the_full_chain(application, summer):
    answer = call(
        application, "GET", reverse("campaign_landing", args=[summer.slug]), headers={"Accept-Language": "de"}
    )

    assert answer.status == 200
    assert answer.headers["x-frame-options"] == "DENY" and "Accept-Language" in answer.headers["vary"]
    assert answer.headers["content-language"] == "de"
    assert set(answer.headers) >= SHARED


def test_an_unknown_path_is_the_sites_404(application):
    page = call(application, "GET", "/no-such-page/", headers={"Accept-Language": "de"})
    api = call(application, "GET", "/api/v1/no-such-thing")

    assert page.status == 404 and page.headers["content-language"] == "de"
    assert page.headers["content-type"].startswith("text/html")
    assert api.status == 404 and api.json()["error"]["code"] == "not_found"


def test_a_machine_path_without_or_with_a_trailing_slash_goes_down_the_browser_chain(application):
    body, headers = delivery()

    slashless = post_delivery(application, body, headers, path=WEBHOOK.rstrip("/"))
    slashed = call(application, "POST", EVENTS + "/", body=b"{}", content_type="application/json")

    # APPEND_SLASH redirects the webhook's slashless path (a POST's body is not followed; Meta
    # calls the path it is given), and the API's paths take no slash.
    assert slashless.status == 301 and slashless.headers["location"] == WEBHOOK
    assert slashed.status == 404 and slashed.json()["error"]["code"] == "not_found"
    assert "content-language" in slashless.headers and "content-language" in slashed.headers
    assert not ProviderEvent.objects.exists()


def _paths(patterns, prefix: str = "") -> list[tuple[str, URLPattern]]:
    """Every route a URLconf serves, as a path, with the pattern that serves it."""
    found = []
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            found += _paths(pattern.url_patterns, route)
        else:
            found.append(("/" + route, pattern))
    return found


def test_every_view_declared_a_machine_endpoint_is_answered_by_the_machine_handler(application):
    declared = [
        path for path, pattern in _paths(get_resolver().url_patterns) if is_machine_endpoint(pattern.callback)
    ]
    mounted = [path for path, _ in _paths(get_resolver(settings.MACHINE_URLCONF).url_patterns)]

    assert EVENTS in declared and WEBHOOK in declared
    assert sorted(mounted) == sorted(declared)  # and nothing undeclared skips the browser's chain
    for path in declared:
        site, machine = resolve(path), machine_match(path)
        assert machine is not None, f"{path} is not mounted in config.machine_urls (or not a fixed path)"
        assert (machine.func, machine.view_name) == (site.func, site.view_name), path
        answer = call(
            application, "GET", path, headers={"Accept-Language": "de"}
        )  # refused, by the lean chain
        assert not any(name in answer.headers for name in ("content-language", "x-frame-options")), path
        assert "Accept-Language" not in answer.headers.get("vary", ""), path
        assert "x-request-id" in answer.headers and not answer.cookies, path


def test_the_browser_chain_still_answers_a_machine_endpoint():
    """Through Django's own handler and every middleware (a plain test client): no CSRF token asked."""
    body, headers = delivery()

    response = Client(enforce_csrf_checks=True).post(
        WEBHOOK, body, content_type="application/json", headers=headers
    )

    assert response.status_code == 200 and response.content == b"ok"
    assert "X-Frame-Options" not in response and response["Content-Language"] == "en"


def test_a_machine_path_is_fixed():
    with pytest.raises(ImproperlyConfigured, match="is not a fixed path"):
        _machine_paths((url_path("webhooks/<slug:provider>/", test_a_machine_path_is_fixed),))


def test_the_asgi_application_routes_alike():
    application = MachineRouterASGI()

    async def get(path, query=b""):
        pending = [{"type": "http.request", "body": b"", "more_body": False}]
        sent = []

        async def receive():
            if pending:
                return pending.pop()
            await asyncio.Future()  # the client stays connected

        async def send(message):
            sent.append(message)

        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "root_path": "",
            "query_string": query,
            "headers": [(b"host", b"testserver"), (b"accept-language", b"de")],
            "client": ("127.0.0.1", 40000),
            "server": ("testserver", 80),
        }
        await application(scope, receive, send)
        body = b"".join(message.get("body", b"") for message in sent[1:])
        return sent[0]["status"], {name.lower(): value for name, value in sent[0]["headers"]}, body

    with connection_kept():
        handshake = async_to_sync(get)(WEBHOOK, HANDSHAKE.encode())
        page = async_to_sync(get)("/no-such-page/")

    assert handshake[0] == 200 and handshake[2] == b"42" and b"content-language" not in handshake[1]
    assert page[0] == 404 and page[1][b"content-language"] == b"de"
