"""A brand's developer generates a client from the served OpenAPI schema (openapi-python-client)
and runs the quickstart through it against a live server: report a purchase, read it back,
replay it with the same Idempotency-Key, and receive and verify the signed webhook."""

import importlib.util
import json
import subprocess
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from joyback.api.keys import api_key_create
from joyback.api.webhooks.endpoints import webhook_endpoint_create

SNIPPETS = Path(__file__).resolve().parents[2] / "docs" / "snippets"
GENERATOR = Path(sys.executable).parent / "openapi-python-client"

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


class WebhookReceiver(BaseHTTPRequestHandler):
    """The brand's webhook endpoint, a real HTTP server: keeps every delivery as it came."""

    received: list = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.received.append((dict(self.headers), body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def webhook_receiver():
    WebhookReceiver.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), WebhookReceiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hooks", WebhookReceiver.received
    server.shutdown()


@pytest.fixture
def generated_client(live_server, tmp_path, monkeypatch):
    """The package openapi-python-client makes from GET /api/v1/schema/, imported."""
    spec = tmp_path / "openapi.json"
    spec.write_bytes(httpx.get(f"{live_server.url}/api/v1/schema/?format=json").content)
    done = subprocess.run(
        [
            str(GENERATOR),
            "generate",
            "--path",
            str(spec),
            "--meta",
            "none",
            "--output-path",
            str(tmp_path / "jbclient"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # Every endpoint is generated (statements book only through the bank's channel, not the API).
    output = (done.stdout + done.stderr).splitlines()
    warnings = [line for line in output if line.startswith("WARNING parsing")]
    assert warnings == []
    monkeypatch.syspath_prepend(str(tmp_path))
    return importlib.import_module("jbclient")


def _verify_webhook():
    spec = importlib.util.spec_from_file_location("verify_webhook", SNIPPETS / "verify_webhook.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.verify_webhook


def test_the_quickstart_through_a_generated_client(
    live_server, generated_client, webhook_receiver, alpaca, make_live_campaign
):
    from jbclient import AuthenticatedClient
    from jbclient.api.events import events_create, events_retrieve
    from jbclient.models import (
        CustomerInputRequest,
        EventAccepted,
        EventOutput,
        PurchaseEventInputRequest,
        PurchaseEventInputTypeEnum,
    )

    campaign = make_live_campaign(slug="cashback-week", package="cashback", budget=100_00)
    campaign.rules.filter(trigger="purchase").update(cashback_basis_points=500, return_window_days=14)
    secret = api_key_create(brand_id=alpaca.pk, name="generated", scopes=["read", "events"]).secret
    url, received = webhook_receiver
    endpoint = webhook_endpoint_create(brand_id=alpaca.pk, url=url, event_types=["event.processed"])
    client = AuthenticatedClient(base_url=live_server.url, token=secret)
    purchase = PurchaseEventInputRequest(
        type_=PurchaseEventInputTypeEnum.PURCHASE,
        order_id="GEN-1",
        amount=40_00,
        currency="EUR",
        customer=CustomerInputRequest(email="kim@example.com"),
    )
    key = str(uuid.uuid4())

    first = events_create.sync_detailed(client=client, body=purchase, idempotency_key=key)
    assert first.status_code == 202 and isinstance(first.parsed, EventAccepted)
    assert first.headers["JoyBack-Version"] == "2026-12-01"

    event = events_retrieve.sync(first.parsed.id, client=client)
    assert isinstance(event, EventOutput) and event.status == "processed"
    assert (event.claim.status, event.claim.amount, event.claim.order_id) == ("pending", 2_00, "GEN-1")

    replay = events_create.sync_detailed(client=client, body=purchase, idempotency_key=key)
    assert replay.status_code == 202 and replay.parsed.id == first.parsed.id
    assert replay.headers["Idempotent-Replayed"] == "true"

    assert len(received) == 1  # one event processed, one webhook: the replay made nothing new
    headers, body = received[0]
    assert _verify_webhook()(body, headers["JoyBack-Signature"], endpoint.secret)
    assert not _verify_webhook()(
        body.replace(b"true", b"false"), headers["JoyBack-Signature"], endpoint.secret
    )
    delivered = json.loads(body)
    assert delivered["type"] == "event.processed" and delivered["data"]["event_id"] == str(first.parsed.id)
