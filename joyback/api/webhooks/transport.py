"""How a delivery reaches a brand's endpoint: over HTTP pinned to addresses checked to be public,
so neither the endpoint's address nor a second DNS answer can point a delivery into our network."""

import ipaddress
import socket
from urllib.parse import urlsplit

import httpcore
import httpx
from django.conf import settings

PRIVATE_ADDRESS_REFUSAL = (
    "The endpoint's address is inside a private network: webhooks go to public addresses only."
)


class WebhookAddressRefused(httpx.ConnectError):
    """A host we will not connect to. A ConnectError, so a delivery treats it as any failed connection."""


_NAT64_WELL_KNOWN = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


def _rfc6052_candidates(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 address a local-use NAT64 prefix (RFC 8215) may embed: the operator picks the prefix
    length (/48, /56, /64 or /96), and bits 64-71 are always skipped (RFC 6052 section 2.2)."""
    raw = address.packed
    layouts = {48: raw[6:8] + raw[9:11], 56: raw[7:8] + raw[9:12], 64: raw[9:13], 96: raw[12:16]}
    return [ipaddress.IPv4Address(packed) for packed in layouts.values()]


def _embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address reaches through a translator or tunnel: a connection to one
    of these forms ends up at the IPv4 address inside it (a NAT64 gateway, a 6to4 or Teredo relay)."""
    if address.ipv4_mapped:
        return [address.ipv4_mapped]
    if address in _IPV4_COMPATIBLE:  # deprecated, but stacks still route it (RFC 4291 2.5.5.1)
        return [ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)]
    if address in _NAT64_WELL_KNOWN:
        return [ipaddress.IPv4Address(address.packed[12:16])]
    if address in _NAT64_LOCAL:
        return _rfc6052_candidates(address)
    if address.sixtofour:
        return [address.sixtofour]
    if address.teredo:
        return list(address.teredo)  # the relay server and the client behind it
    return []


def _is_private(text: str) -> bool:
    # Loopback, private, link-local (the cloud's metadata service), shared and reserved addresses are
    # inside our own network. An IPv6 address that embeds an IPv4 address is judged by that address
    # too: NAT64 of 169.254.169.254 reaches the metadata service just as well.
    address = ipaddress.ip_address(text.split("%", 1)[0])
    reached = [address]
    if address.version == 6:
        reached += _embedded_ipv4(address)
    return any(not each.is_global or each.is_multicast for each in reached)


def _host_addresses(host: str) -> list[str]:
    """host's addresses in the resolver's order, all of them allowed; else WebhookAddressRefused. One
    private answer refuses the host: which address a connection would get is the resolver's choice."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        infos = []
    addresses = list(dict.fromkeys(info[4][0] for info in infos))
    if not addresses:
        raise WebhookAddressRefused(f"The endpoint's host {host} cannot be found.")
    if not settings.WEBHOOK_PRIVATE_ADDRESSES and any(_is_private(address) for address in addresses):
        raise WebhookAddressRefused(PRIVATE_ADDRESS_REFUSAL)
    return addresses


def webhook_address_refusal(url: str) -> str:
    """Why no webhook may go to this URL's host, or "". Unless WEBHOOK_PRIVATE_ADDRESSES allows it,
    every address the host resolves to must be public. Checked when the endpoint is saved, for the
    brand's immediate feedback; deliveries check again the very addresses they connect to."""
    if settings.WEBHOOK_PRIVATE_ADDRESSES:
        return ""
    try:
        _host_addresses(urlsplit(url).hostname or "")
    except WebhookAddressRefused as refused:
        return str(refused)
    return ""


# Tests (and the sandbox) set a transport here to receive deliveries in-process.
_transport: httpx.BaseTransport | None = None


def webhook_transport_set(transport: httpx.BaseTransport | None) -> None:
    global _transport
    _transport = transport


_HTTPCORE_ERRORS = (
    httpcore.TimeoutException,
    httpcore.NetworkError,
    httpcore.ProtocolError,
    httpcore.UnsupportedProtocol,
    httpcore.ProxyError,
)


class _PinnedBackend(httpcore.SyncBackend):
    """Resolves a connection's host once, checks every address and connects to a checked one: a
    second DNS lookup at connect time could answer an internal address (DNS rebinding). TLS starts
    afterwards on the returned stream, with the URL's hostname as server_hostname (httpcore's
    HTTPConnection._connect), so SNI and the certificate check still use the name, not the address."""

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options=None,
    ) -> httpcore.NetworkStream:
        failure = None
        for address in _host_addresses(host):
            try:
                return super().connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc  # the next address may answer, as socket.create_connection does
        raise failure


class _PinnedTransport(httpx.BaseTransport):
    """httpx over an httpcore pool using _PinnedBackend; httpx.HTTPTransport takes no network backend.
    No proxy from the environment: a proxy would resolve the host itself, past our check."""

    def __init__(self) -> None:
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(), network_backend=_PinnedBackend()
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = httpcore.URL(
            scheme=request.url.raw_scheme,
            host=request.url.raw_host,
            port=request.url.port,
            target=request.url.raw_path,
        )
        try:
            # Reads the whole body, as client.post would.
            response = self._pool.request(
                request.method,
                url,
                headers=request.headers.raw,
                content=request.stream,
                extensions=request.extensions,
            )
        except _HTTPCORE_ERRORS as exc:
            # httpx names its errors as httpcore does (ConnectTimeout, ReadError, ...).
            raise getattr(httpx, type(exc).__name__, httpx.TransportError)(str(exc)) from exc
        return httpx.Response(
            response.status,
            headers=response.headers,
            content=response.content,
            extensions=response.extensions,
        )

    def close(self) -> None:
        self._pool.close()


def http_client() -> httpx.Client:
    return httpx.Client(
        transport=_PinnedTransport() if _transport is None else _transport,
        timeout=settings.WEBHOOK_TIMEOUT_SECONDS,
        follow_redirects=False,
    )
