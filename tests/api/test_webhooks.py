"""Outgoing webhooks: signed as documented (checked here with hmac directly), retried with
backoff for days, logged, redeliverable; every flow emits its events."""

import hashlib
import hmac
import json
import time
from datetime import timedelta
from functools import partial

import pytest
from django.utils import timezone

from joyback.api.models import DeliveryStatus, WebhookDelivery, WebhookEvent
from joyback.api.webhooks.delivery import RETRY_DELAYS, webhook_deliver, webhook_event_emit, webhook_redeliver
from joyback.api.webhooks.endpoints import webhook_endpoint_create, webhook_secret_rotate
from tests.api.conftest import purchase
from verification.cashback import purchase_confirm
from verification.models import Purchase

pytestmark = pytest.mark.django_db

ALL = [
    "action.verified",
    "reward.approved",
    "claim.rejected",
    "purchase.created",
    "purchase.confirmed",
    "purchase.refunded",
]


def verify(request, secret: str, *, tolerance=300) -> bool:
    """What a brand's server does, from the documentation alone."""
    parts = [item.split("=", 1) for item in request.headers["JoyBack-Signature"].split(",")]
    timestamp = int(next(value for key, value in parts if key == "t"))
    if abs(time.time() - timestamp) > tolerance:
        return False
    expected = hmac.new(
        secret.encode(), f"{timestamp}.".encode() + request.content, hashlib.sha256
    ).hexdigest()
    return any(key == "v1" and hmac.compare_digest(value, expected) for key, value in parts)


@pytest.fixture
def endpoint(alpaca):
    return webhook_endpoint_create(brand_id=alpaca.pk, url="https://shop.example/hooks", event_types=ALL)


@pytest.fixture
def deliver_now(django_capture_on_commit_callbacks):
    """Run what is queued after commit (the task queue runs inline in tests)."""

    def run(action):
        with django_capture_on_commit_callbacks(execute=True):
            return action()

    return run


def test_a_purchase_is_delivered_signed_with_its_event_id(alpaca_api, shop, endpoint, receiver, deliver_now):
    deliver_now(lambda: alpaca_api.post("events", purchase()))
    [request] = receiver.requests
    assert verify(request, endpoint.secret)
    assert not verify(request, "whsec_someone-else")
    body = json.loads(request.content)
    assert body["type"] == "purchase.created"
    assert request.headers["JoyBack-Event-Id"] == body["id"]
    assert WebhookEvent.objects.get().pk.hex == body["id"].replace("-", "")
    assert body["data"]["order_id"] == "A-1001" and body["data"]["amount"] == 2_00
    assert WebhookDelivery.objects.get().status == DeliveryStatus.SUCCEEDED


def test_a_tampered_body_does_not_verify(alpaca_api, shop, endpoint, receiver, deliver_now):
    deliver_now(lambda: alpaca_api.post("events", purchase()))
    request = receiver.requests[0]
    forged = type(
        "Forged", (), {"headers": request.headers, "content": request.content.replace(b"200", b"900")}
    )
    assert not verify(forged, endpoint.secret)


def test_during_a_rotation_both_secrets_sign(alpaca, endpoint, receiver, deliver_now):
    old_secret = endpoint.secret
    rotated = webhook_secret_rotate(endpoint=endpoint, grace_hours=24)
    assert rotated.secret != old_secret
    deliver_now(lambda: webhook_event_emit(brand_id=alpaca.pk, type="reward.approved", data={"n": 1}))
    [request] = receiver.requests
    assert request.headers["JoyBack-Signature"].count("v1=") == 2
    assert verify(request, old_secret) and verify(request, rotated.secret)


def test_after_the_grace_period_only_the_new_secret_signs(alpaca, endpoint, receiver, deliver_now):
    old_secret = endpoint.secret
    rotated = webhook_secret_rotate(endpoint=endpoint, grace_hours=0)
    deliver_now(lambda: webhook_event_emit(brand_id=alpaca.pk, type="reward.approved", data={"n": 1}))
    [request] = receiver.requests
    assert verify(request, rotated.secret) and not verify(request, old_secret)


def test_the_secret_is_encrypted_at_rest(endpoint):
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT secret FROM api_webhookendpoint WHERE id = %s", [endpoint.pk])
        stored = cursor.fetchone()[0]
    assert endpoint.secret.startswith("whsec_") and endpoint.secret not in stored


def test_a_failed_delivery_is_retried_with_exponential_backoff_for_days(
    alpaca, endpoint, receiver, deliver_now
):
    from django_q.models import Schedule

    receiver.answers = [500, 0] + [503] * 20
    deliver_now(lambda: webhook_event_emit(brand_id=alpaca.pk, type="reward.approved", data={"n": 1}))
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("retrying", 1, 500)
    schedule = Schedule.objects.get(name=f"webhook-delivery-{delivery.pk}-2")
    assert schedule.func == "joyback.api.tasks.webhook_deliver_task" and schedule.args == str(delivery.pk)
    assert abs((schedule.next_run - timezone.now()) - timedelta(seconds=RETRY_DELAYS[0])) < timedelta(
        seconds=5
    )

    waits = [RETRY_DELAYS[0]]
    while delivery.status == "retrying":
        before = timezone.now()
        delivery = deliver_now(partial(webhook_deliver, delivery_id=delivery.pk))
        if delivery.next_attempt_at:
            waits.append(round((delivery.next_attempt_at - before).total_seconds()))
    assert delivery.status == "failed"
    assert waits == sorted(waits) and waits[1] > waits[0] * 2  # growing, exponentially at first
    assert sum(RETRY_DELAYS) >= 3 * 86400
    assert delivery.attempts == len(RETRY_DELAYS) + 1
    log = list(delivery.attempt_log.order_by("number"))
    assert [attempt.number for attempt in log] == list(range(1, len(RETRY_DELAYS) + 2))
    assert log[1].status_code is None and "ConnectError" in log[1].error
    ids = {json.loads(request.content)["id"] for request in receiver.requests}
    assert len(ids) == 1  # every attempt carries the same event id


def test_a_delivery_that_succeeds_on_retry_stops(alpaca, endpoint, receiver, deliver_now):
    receiver.answers = [502]
    deliver_now(lambda: webhook_event_emit(brand_id=alpaca.pk, type="reward.approved", data={}))
    delivery = deliver_now(lambda: webhook_deliver(delivery_id=WebhookDelivery.objects.get().pk))
    assert (delivery.status, delivery.attempts) == ("succeeded", 2)
    assert webhook_deliver(delivery_id=delivery.pk).attempts == 2  # done: no further attempt


def test_redeliver_sends_again(alpaca, endpoint, receiver, deliver_now):
    deliver_now(lambda: webhook_event_emit(brand_id=alpaca.pk, type="reward.approved", data={}))
    delivery = WebhookDelivery.objects.get()
    deliver_now(lambda: webhook_redeliver(delivery=delivery))
    assert len(receiver.requests) == 2
    assert (
        receiver.requests[0].headers["JoyBack-Event-Id"] == receiver.requests[1].headers["JoyBack-Event-Id"]
    )
    assert WebhookDelivery.objects.get().attempts == 2


def test_only_chosen_events_of_the_brand_are_sent(alpaca, bison, receiver, deliver_now):
    webhook_endpoint_create(brand_id=alpaca.pk, url="https://a.example/h", event_types=["claim.rejected"])
    webhook_endpoint_create(brand_id=bison.pk, url="https://b.example/h", event_types=ALL)
    deliver_now(lambda: webhook_event_emit(brand_id=alpaca.pk, type="reward.approved", data={}))
    assert receiver.requests == [] and not WebhookEvent.objects.exists()


def test_the_whole_purchase_story_is_told(alpaca_api, shop, endpoint, receiver, deliver_now):
    deliver_now(lambda: alpaca_api.post("events", purchase()))
    later = timezone.now() + timedelta(days=15)
    deliver_now(lambda: purchase_confirm(purchase_id=Purchase.objects.get().pk, now=later))
    deliver_now(lambda: alpaca_api.post("events", {"type": "refund", "order_id": "A-1001"}))
    assert [body["type"] for body in receiver.bodies()] == [
        "purchase.created",
        "purchase.confirmed",
        "reward.approved",
        "purchase.refunded",
    ]


def test_a_refund_in_the_window_tells_of_the_rejected_claim(
    alpaca_api, shop, endpoint, receiver, deliver_now
):
    deliver_now(lambda: alpaca_api.post("events", purchase()))
    deliver_now(lambda: alpaca_api.post("events", {"type": "refund", "order_id": "A-1001"}))
    assert [body["type"] for body in receiver.bodies()] == [
        "purchase.created",
        "purchase.refunded",
        "claim.rejected",
    ]


def test_an_instant_reward_emits_verified_and_approved(summer, endpoint, receiver, deliver_now):
    from verification.services.participants import identity_attach, participant_create
    from verification.services.rewards import action_reward

    identity = identity_attach(
        participant=participant_create(brand=summer.brand), provider="tiktok", subject="x"
    )
    deliver_now(lambda: action_reward(rule=summer.rules.get(trigger="tiktok_login"), identity=identity))
    bodies = receiver.bodies()
    assert [body["type"] for body in bodies] == ["action.verified", "reward.approved"]
    assert bodies[1]["data"]["trigger"] == "tiktok_login" and bodies[1]["data"]["status"] == "approved"


def test_a_review_decision_emits_its_outcome(summer, alice, endpoint, receiver, deliver_now, settings):
    from verification.services.participants import identity_attach, participant_create
    from verification.services.review import claim_review
    from verification.services.rewards import action_reward

    settings.FRAUD_CAMPAIGN_CLAIMS_PER_MINUTE = 0  # every claim looks like a flood: it goes to review
    identity = identity_attach(
        participant=participant_create(brand=summer.brand), provider="tiktok", subject="y"
    )
    claim = deliver_now(
        lambda: action_reward(rule=summer.rules.get(trigger="tiktok_login"), identity=identity)
    )
    assert claim.status == "needs_review"
    deliver_now(lambda: claim_review(claim=claim, decided_by=alice, decision="reject", reason="bot"))
    assert [body["type"] for body in receiver.bodies()] == ["action.verified", "claim.rejected"]


def test_the_sweep_queues_retries_whose_schedule_was_lost(
    alpaca, endpoint, receiver, deliver_now, django_capture_on_commit_callbacks
):
    from joyback.api import tasks

    receiver.answers = [500]
    deliver_now(lambda: webhook_event_emit(brand_id=alpaca.pk, type="reward.approved", data={}))
    WebhookDelivery.objects.update(next_attempt_at=timezone.now() - timedelta(minutes=6))

    with django_capture_on_commit_callbacks(execute=False) as queued:
        assert tasks.webhook_sweep() == 1
    assert len(receiver.requests) == 1 and len(queued) == 1  # queued as its own task, not sent here
    queued[0]()
    assert len(receiver.requests) == 2 and WebhookDelivery.objects.get().status == "succeeded"


def test_the_sweep_sends_a_first_delivery_whose_task_was_lost(
    alpaca, endpoint, receiver, django_capture_on_commit_callbacks
):
    from joyback.api import tasks

    # Emitted, but its task never reached the broker (the test's transaction never commits).
    webhook_event_emit(brand_id=alpaca.pk, type="reward.approved", data={})
    with django_capture_on_commit_callbacks(execute=False) as queued:
        tasks.webhook_sweep()  # too young: its task may still be on its way
    assert queued == []
    WebhookDelivery.objects.update(created_at=timezone.now() - timedelta(minutes=6))

    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.webhook_sweep() == 1

    assert len(receiver.requests) == 1 and WebhookDelivery.objects.get().status == "succeeded"


def test_a_redelivery_just_asked_for_is_left_to_its_own_task(alpaca, endpoint, receiver, deliver_now):
    from joyback.api import tasks

    deliver_now(lambda: webhook_event_emit(brand_id=alpaca.pk, type="reward.approved", data={}))
    WebhookDelivery.objects.update(created_at=timezone.now() - timedelta(days=1))
    webhook_redeliver(delivery=WebhookDelivery.objects.get())

    assert tasks.webhook_sweep() == 0


# In production no webhook goes to an address inside our own network (SSRF).

PRIVATE_ADDRESSES = [
    "127.0.0.1",
    "10.1.2.3",
    "192.168.0.9",
    "169.254.169.254",
    "100.64.0.1",
    "::1",
    "::ffff:10.0.0.1",
    # IPv6 forms that embed an IPv4 address, each reaching the cloud's metadata service or loopback.
    "::ffff:169.254.169.254",  # IPv4-mapped
    "::169.254.169.254",  # IPv4-compatible
    "::127.0.0.1",
    "64:ff9b::a9fe:a9fe",  # NAT64, well-known prefix
    "64:ff9b::10.0.0.1",
    "64:ff9b:1::a9fe:a9fe",  # NAT64, local-use prefix with a /96
    "64:ff9b:1:a9fe:a9:fe00::",  # NAT64, local-use prefix with a /48 (bits 64-71 skipped)
    "2002:a9fe:a9fe::1",  # 6to4
    "2002:7f00:1::1",
    "2001:0:4136:e378:8000:63bf:5601:5601",  # Teredo, client 169.254.169.254 (stored inverted)
]

# The same forms embedding a public address are ordinary public IPv6 addresses.
PUBLIC_EMBEDDING_ADDRESSES = ["64:ff9b::5db8:d822", "2002:5db8:d822::1"]


@pytest.fixture
def production_dns(settings, monkeypatch):
    """WEBHOOK_PRIVATE_ADDRESSES off, as in production, and a DNS whose answers the test sets."""
    import socket

    settings.WEBHOOK_PRIVATE_ADDRESSES = False
    answers = {"shop.example": "93.184.216.34"}

    def getaddrinfo(host, port, *args, **kwargs):
        if host.strip("[]") in PRIVATE_ADDRESSES + PUBLIC_EMBEDDING_ADDRESSES or host == "93.184.216.34":
            addresses = [host.strip("[]")]
        elif host in answers:
            answer = answers[host]  # one address, or a list of them
            addresses = answer if isinstance(answer, list) else [answer]
        else:
            raise socket.gaierror("Name or service not known")
        families = [socket.AF_INET6 if ":" in address else socket.AF_INET for address in addresses]
        # With the port asked for: socket.create_connection connects to what this returns.
        return [
            (family, socket.SOCK_STREAM, 6, "", (address, port or 0))
            for family, address in zip(families, addresses, strict=True)
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return answers


@pytest.mark.parametrize("address", PRIVATE_ADDRESSES)
def test_an_endpoint_on_a_private_address_is_refused(alpaca, production_dns, address):
    from joyback.api.models import WebhookEndpoint
    from joyback.api.webhooks.endpoints import WebhookError

    host = f"[{address}]" if ":" in address else address
    with pytest.raises(WebhookError, match="private network"):
        webhook_endpoint_create(brand_id=alpaca.pk, url=f"https://{host}/hooks", event_types=ALL)
    production_dns["internal.shop.example"] = address
    with pytest.raises(WebhookError, match="private network"):
        webhook_endpoint_create(
            brand_id=alpaca.pk, url="https://internal.shop.example/hooks", event_types=ALL
        )
    assert not WebhookEndpoint.objects.exists()


@pytest.mark.parametrize("address", PUBLIC_EMBEDDING_ADDRESSES)
def test_an_endpoint_on_an_ipv6_form_of_a_public_address_is_taken(alpaca, production_dns, address):
    assert webhook_endpoint_create(brand_id=alpaca.pk, url=f"https://[{address}]/hooks", event_types=ALL)


@pytest.mark.parametrize("address", ["64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1", "::169.254.169.254"])
def test_a_host_that_turns_to_an_embedded_private_address_gets_nothing(
    alpaca, production_dns, receiver, deliver_now, address
):
    webhook_endpoint_create(brand_id=alpaca.pk, url="https://shop.example/hooks", event_types=ALL)
    production_dns["shop.example"] = address  # checked again at connect time

    deliver_now(lambda: webhook_event_emit(brand_id=alpaca.pk, type="reward.approved", data={}))

    delivery = WebhookDelivery.objects.get()
    assert receiver.requests == []
    assert delivery.status == "retrying" and "private network" in delivery.attempt_log.get().error


def test_an_unknown_host_is_refused_and_a_public_one_taken(alpaca, production_dns):
    from joyback.api.webhooks.endpoints import WebhookError

    with pytest.raises(WebhookError, match="cannot be found"):
        webhook_endpoint_create(brand_id=alpaca.pk, url="https://nowhere.invalid/hooks", event_types=ALL)
    assert webhook_endpoint_create(brand_id=alpaca.pk, url="https://shop.example/hooks", event_types=ALL)


def test_a_host_that_turns_private_after_saving_gets_nothing(alpaca, production_dns, receiver, deliver_now):
    webhook_endpoint_create(brand_id=alpaca.pk, url="https://shop.example/hooks", event_types=ALL)
    production_dns["shop.example"] = "10.0.0.7"  # the brand's DNS now points inside our network

    deliver_now(lambda: webhook_event_emit(brand_id=alpaca.pk, type="reward.approved", data={}))

    delivery = WebhookDelivery.objects.get()
    assert receiver.requests == []
    assert delivery.status == "retrying" and "private network" in delivery.attempt_log.get().error


# DNS rebinding: the address checked must be the address connected to. These go through the real
# transport (no MockTransport) to an HTTP server on 127.0.0.1.


class LocalServer:
    """A brand's server on 127.0.0.1, in a thread: what reaches it is what we really sent."""

    def __init__(self, ssl_context=None):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.requests, self.connections = [], 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.content = self.rfile.read(int(self.headers["Content-Length"]))
                server.requests.append(self)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        class Server(ThreadingHTTPServer):
            def verify_request(self, request, client_address):
                server.connections += 1
                return True

        self.http = Server(("127.0.0.1", 0), Handler)
        if ssl_context:
            self.http.socket = ssl_context.wrap_socket(self.http.socket, server_side=True)
        self.port = self.http.server_address[1]
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture
def local_server():
    server = LocalServer()
    yield server
    server.close()


def rebind_after_first_answer(monkeypatch, answers, host: str, address: str):
    """The attacker's DNS: its first answer for host is the one set, every later one is address."""
    import socket

    resolve = socket.getaddrinfo

    def getaddrinfo(name, *args, **kwargs):
        infos = resolve(name, *args, **kwargs)
        if name == host:
            answers[host] = address
        return infos

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def test_a_host_rebound_to_loopback_after_the_check_gets_nothing(
    alpaca, production_dns, local_server, deliver_now, monkeypatch
):
    webhook_endpoint_create(
        brand_id=alpaca.pk, url=f"http://shop.example:{local_server.port}/hooks", event_types=ALL
    )
    # Public to the check before the delivery, loopback to whatever resolves the host after it.
    rebind_after_first_answer(monkeypatch, production_dns, "shop.example", "127.0.0.1")

    deliver_now(lambda: webhook_event_emit(brand_id=alpaca.pk, type="reward.approved", data={}))

    delivery = WebhookDelivery.objects.get()
    assert production_dns["shop.example"] == "127.0.0.1"  # the DNS did rebind
    assert local_server.connections == 0 and local_server.requests == []
    assert delivery.status == "retrying" and delivery.next_attempt_at
    assert delivery.attempt_log.get().error == (
        "The endpoint's address is inside a private network: webhooks go to public addresses only."
    )


def test_a_delivery_through_the_pinned_connection_reaches_the_host_by_name(
    alpaca, production_dns, settings, local_server, deliver_now, monkeypatch
):
    import socket

    settings.WEBHOOK_PRIVATE_ADDRESSES = True  # as in development: the brand's server is this machine
    production_dns["hooks.shop.example"] = "127.0.0.1"
    resolve, lookups = socket.getaddrinfo, []
    monkeypatch.setattr(
        socket, "getaddrinfo", lambda host, *a, **kw: lookups.append(host) or resolve(host, *a, **kw)
    )
    endpoint = webhook_endpoint_create(
        brand_id=alpaca.pk, url=f"http://hooks.shop.example:{local_server.port}/hooks", event_types=ALL
    )

    deliver_now(lambda: webhook_event_emit(brand_id=alpaca.pk, type="reward.approved", data={"n": 1}))

    [request] = local_server.requests
    assert request.path == "/hooks"
    assert request.headers["Host"] == f"hooks.shop.example:{local_server.port}"
    assert verify(request, endpoint.secret)
    assert json.loads(request.content)["type"] == "reward.approved"
    assert lookups.count("hooks.shop.example") == 1  # resolved once, then connected to that address
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == DeliveryStatus.SUCCEEDED and delivery.attempt_log.get().status_code == 200


def test_a_host_with_one_private_address_among_public_ones_is_not_connected_to(
    production_dns, local_server, monkeypatch
):
    import httpcore
    import httpx

    from joyback.api.webhooks import transport

    production_dns["shop.example"] = ["93.184.216.34", "127.0.0.1"]
    connects = []
    monkeypatch.setattr(httpcore.SyncBackend, "connect_tcp", lambda self, *a, **kw: connects.append(a))

    client = httpx.Client(transport=transport._PinnedTransport())
    with client, pytest.raises(transport.WebhookAddressRefused, match="private network"):
        client.post(f"http://shop.example:{local_server.port}/hooks", content=b"{}")

    assert connects == [] and local_server.connections == 0


def test_an_unknown_host_fails_the_attempt_when_connecting(alpaca, settings, production_dns, deliver_now):
    from joyback.api.models import WebhookEndpoint

    settings.WEBHOOK_PRIVATE_ADDRESSES = True  # no check before delivering: only the connection resolves
    WebhookEndpoint.objects.create(
        brand_id=alpaca.pk, url="https://gone.shop.example/hooks", event_types=ALL, secret="whsec_x"
    )

    deliver_now(lambda: webhook_event_emit(brand_id=alpaca.pk, type="reward.approved", data={}))

    delivery = WebhookDelivery.objects.get()
    assert delivery.status == "retrying"
    assert delivery.attempt_log.get().error == "The endpoint's host gone.shop.example cannot be found."


def certificate_authority(tmp_path, hostname: str):
    """A CA (written to a file, for SSL_CERT_FILE) and a server context with its certificate for
    hostname alone: no IP address in it, so a check against the address would fail."""
    import ssl
    from datetime import UTC, datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    def certificate(subject, key, issuer, issuer_key, *, ca: bool, names=()):
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(datetime.now(UTC) - timedelta(days=1))
            .not_valid_after(datetime.now(UTC) + timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if ca:
            builder = builder.add_extension(
                x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True
            ).add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        else:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.DNSName(name) for name in names]), critical=False
            ).add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False
            )
        return builder.sign(issuer_key, hashes.SHA256())

    pem = serialization.Encoding.PEM
    ca_key, server_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = certificate("Test CA", ca_key, "Test CA", ca_key, ca=True)
    server = certificate(hostname, server_key, "Test CA", ca_key, ca=False, names=[hostname])
    (tmp_path / "ca.pem").write_bytes(ca.public_bytes(pem))
    (tmp_path / "server.pem").write_bytes(
        server.public_bytes(pem)
        + server_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "server.pem")
    return tmp_path / "ca.pem", context


@pytest.fixture
def tls_server(tmp_path, monkeypatch):
    """An https server on 127.0.0.1 for hooks.shop.example, whose CA we trust; it notes the SNI."""
    ca_file, context = certificate_authority(tmp_path, "hooks.shop.example")
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
    names = []
    context.sni_callback = lambda ssl_object, name, context: names.append(name)
    server = LocalServer(ssl_context=context)
    server.server_names = names
    yield server
    server.close()


def test_tls_names_and_verifies_the_host_not_the_address(
    alpaca, production_dns, settings, tls_server, deliver_now
):
    settings.WEBHOOK_PRIVATE_ADDRESSES = True
    production_dns["hooks.shop.example"] = production_dns["impostor.shop.example"] = "127.0.0.1"
    for host in ("hooks.shop.example", "impostor.shop.example"):
        webhook_endpoint_create(
            brand_id=alpaca.pk, url=f"https://{host}:{tls_server.port}/hooks", event_types=ALL
        )

    deliver_now(lambda: webhook_event_emit(brand_id=alpaca.pk, type="reward.approved", data={}))

    genuine, impostor = WebhookDelivery.objects.order_by("endpoint__url")
    assert genuine.endpoint.url.startswith("https://hooks.") and genuine.status == DeliveryStatus.SUCCEEDED
    [request] = tls_server.requests
    assert request.headers["Host"] == f"hooks.shop.example:{tls_server.port}"
    # The certificate names hooks.shop.example only: checked against the name the other host fails.
    assert impostor.status == "retrying"
    assert "CERTIFICATE_VERIFY_FAILED" in impostor.attempt_log.get().error
    assert sorted(tls_server.server_names) == ["hooks.shop.example", "impostor.shop.example"]
