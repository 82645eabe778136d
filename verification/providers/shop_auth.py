"""The shops' own proofs that the person connecting a shop runs it.

Shopify (shopify.dev, "Implement authorization code grant manually"): the merchant is sent to
https://{shop}/admin/oauth/authorize with our client_id, scope, redirect_uri and a state nonce;
installing the app, Shopify sends them back with code, hmac, host, shop, state and timestamp.
The hmac is hex HMAC-SHA256, with the app's client secret, of the other query parameters sorted
and joined as key=value&...; shop must be a myshopify.com hostname; the code is exchanged at
https://{shop}/admin/oauth/access_token (client_id, client_secret, code) for an access token.

WooCommerce (woocommerce.github.io/woocommerce-rest-api-docs, "Authentication endpoint"): the
store's admin is sent to https://{store}/wc-auth/v1/authorize with app_name, scope, user_id,
return_url and callback_url; approving creates a REST API key in that store, which the store POSTs
as JSON (key_id, user_id, consumer_key, consumer_secret, key_permissions) to callback_url. Anyone
can POST to a callback, so the key counts only once the store's REST API accepts it.

Every shop endpoint is reached through settings.SHOP_HOST_BASE and the adapters' HTTP client: the
shop itself, or in the sandbox the sandbox shops.
"""

import hashlib
import hmac
import logging
import re
from urllib.parse import urlencode

import httpx
from django.conf import settings

from verification.providers.loopback import http_client, provider_url

logger = logging.getLogger(__name__)

SHOPIFY_SCOPE = "read_orders"
WOOCOMMERCE_SCOPE = "read"
# Shopify's rule for the shop parameter: a myshopify.com hostname and nothing else.
SHOPIFY_SHOP = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9\-]*\.myshopify\.com$")


class ShopAuthFailed(Exception):
    """The shop did not prove it: the reason is for the log and the outcome, not for display."""


def shop_base(domain: str) -> str:
    return provider_url("SHOP_HOST_BASE").format(domain=domain)


def shopify_authorize_url(*, domain: str, state: str, redirect_uri: str) -> str:
    query = urlencode(
        {
            "client_id": settings.SHOPIFY_API_KEY,
            "scope": SHOPIFY_SCOPE,
            "redirect_uri": redirect_uri,
            "state": state,
        }
    )
    return f"{shop_base(domain)}/admin/oauth/authorize?{query}"


def shopify_query_hmac(*, params: dict, secret: str) -> str:
    """Shopify's hmac over a redirect's query: every parameter but hmac (and the legacy signature),
    sorted by name, joined as name=value with &."""
    message = "&".join(
        f"{key}={value}" for key, value in sorted(params.items()) if key not in ("hmac", "signature")
    )
    return hmac.new(secret.encode(), message.encode(), hashlib.sha256).hexdigest()


def shopify_callback_verify(*, params: dict) -> str:
    """The shop a callback names, once its hmac and hostname are what Shopify sends."""
    if not settings.SHOPIFY_API_SECRET:
        raise ShopAuthFailed("no Shopify app secret configured")
    given = str(params.get("hmac") or "")
    expected = shopify_query_hmac(params=params, secret=settings.SHOPIFY_API_SECRET)
    if not given or not hmac.compare_digest(expected, given):
        raise ShopAuthFailed("hmac does not verify")
    shop = str(params.get("shop") or "")
    if not SHOPIFY_SHOP.match(shop):
        raise ShopAuthFailed("shop is not a myshopify.com hostname")
    return shop.lower()


def shopify_access_token(*, domain: str, code: str) -> str:
    """The code exchanged at the shop for an offline access token with the scope asked for."""
    body = {"client_id": settings.SHOPIFY_API_KEY, "client_secret": settings.SHOPIFY_API_SECRET, "code": code}
    try:
        with http_client() as client:
            response = client.post(f"{shop_base(domain)}/admin/oauth/access_token", json=body)
        answer = response.json() if response.status_code == 200 else {}
    except (httpx.HTTPError, ValueError) as error:
        raise ShopAuthFailed(f"access token request failed: {error}") from error
    token = answer.get("access_token") if isinstance(answer, dict) else None
    scopes = str(answer.get("scope") or "").split(",") if isinstance(answer, dict) else []
    if not token or SHOPIFY_SCOPE not in scopes:
        raise ShopAuthFailed(f"no access token with {SHOPIFY_SCOPE} (HTTP {response.status_code})")
    return str(token)


def woocommerce_authorize_url(*, domain: str, state: str, return_url: str, callback_url: str) -> str:
    query = urlencode(
        {
            "app_name": "JoyBack",
            "scope": WOOCOMMERCE_SCOPE,
            "user_id": state,
            "return_url": return_url,
            "callback_url": callback_url,
        }
    )
    return f"{shop_base(domain)}/wc-auth/v1/authorize?{query}"


def woocommerce_key_verify(*, domain: str, consumer_key: str, consumer_secret: str) -> None:
    """The key works on that store's REST API: the store made it (a posted key alone proves nothing)."""
    if not consumer_key.startswith("ck_") or not consumer_secret.startswith("cs_"):
        raise ShopAuthFailed("not a WooCommerce consumer key and secret")
    try:
        with http_client() as client:
            response = client.get(
                f"{shop_base(domain)}/wp-json/wc/v3/orders",
                params={"per_page": 1},
                auth=(consumer_key, consumer_secret),
            )
    except httpx.HTTPError as error:
        raise ShopAuthFailed(f"the store did not answer: {error}") from error
    if response.status_code != 200:
        raise ShopAuthFailed(f"the store refused the key (HTTP {response.status_code})")
