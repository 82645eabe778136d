"""An httpx transport that answers with this project's own views, in-process.

In the sandbox the adapters talk to the sandbox providers through it: the same HTTP requests and
responses byte for byte, without a network or a second server, and without the request signals
that would close the caller's database connection half-way through its own request.
"""

import httpx
from django.conf import settings
from django.test import RequestFactory
from django.urls import resolve

from joyback.modes import provider_sandboxed, provider_test_routed

HOP_HEADERS = {"host", "content-length", "content-type", "connection", "accept-encoding"}


class LoopbackTransport(httpx.BaseTransport):
    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.read()
        headers = {key: value for key, value in request.headers.items() if key.lower() not in HOP_HEADERS}
        django_request = RequestFactory().generic(
            request.method,
            request.url.raw_path.decode(),
            data=body,
            content_type=request.headers.get("content-type", ""),
            headers=headers,
        )
        # In-process, never from the network: the sandbox bank answers it on any deployment.
        django_request.loopback = True
        match = resolve(request.url.path)
        response = match.func(django_request, *match.args, **match.kwargs)
        return httpx.Response(
            response.status_code,
            headers={key: value for key, value in response.items() if key.lower() != "content-length"},
            content=response.content,
            request=request,
        )


# Where the sandbox providers answer in this app: a test brand's calls go here on every deployment.
SANDBOX_BASES = {
    "TIKTOK_AUTHORIZE_URL": "/sandbox/tiktok/v2/auth/authorize/",
    "TIKTOK_API_BASE": "/sandbox/tiktok",
    "TIKTOK_OEMBED_URL": "/sandbox/tiktok/oembed",
    "TIKTOK_SHORT_LINK": "/sandbox/tiktok/short",
    "TIKTOK_BUSINESS_API_BASE": "/sandbox/tiktok/business",
    "WHATSAPP_API_BASE": "/sandbox/whatsapp/graph",
    "KLAVIYO_API_BASE": "/sandbox/klaviyo",
    "HUBSPOT_API_BASE": "/sandbox/hubspot",
    "VIES_API_BASE": "/sandbox/vies/rest-api",
    "MAILCHIMP_API_BASE": "/sandbox/mailchimp/{dc}",
    "SHOP_HOST_BASE": "/sandbox/shop-hosts/{domain}",
}


def provider_url(name: str) -> str:
    """The provider address setting `name`, or the sandbox's for a test brand's call."""
    return SANDBOX_BASES[name] if provider_test_routed() else getattr(settings, name)


def http_client() -> httpx.Client:
    """The client adapters use: the real network in production, the loopback in the sandbox and
    for a test brand's calls (joyback.modes.provider_routed_for)."""
    if provider_sandboxed():
        return httpx.Client(transport=LoopbackTransport(), base_url="http://sandbox.localhost", timeout=10)
    return httpx.Client(timeout=10)
