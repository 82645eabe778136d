"""The sandbox shops' own admin endpoints, for any shop domain: Shopify's OAuth install
(/admin/oauth/authorize, /admin/oauth/access_token) and WooCommerce's key approval
(/wc-auth/v1/authorize, then the key POSTed to the app's callback_url) and the REST API that
accepts the key. Same parameters and answers as the real shops; what the shops keep (codes, keys)
is kept in the cache for a while."""

import base64
import json
import secrets
import time
from urllib.parse import urlencode, urlsplit

import httpx
from django.conf import settings
from django.core.cache import cache
from django.http import Http404, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from verification.providers.loopback import http_client
from verification.providers.shop_auth import shopify_query_hmac

KEPT = 3600
UNSENT = "Error: An error occurred in the request and at the time were unable to send the consumer data"


def _sandbox_only(request=None):
    """Open in the sandbox; elsewhere only in-process, to a test brand's calls (see sandbox_only)."""
    if not (settings.SANDBOX or getattr(request, "loopback", False)):
        raise Http404("The sandbox is off")


def _with_query(url: str, params: dict) -> str:
    return f"{url}{'&' if urlsplit(url).query else '?'}{urlencode(params)}"


def shopify_callback_params(*, domain: str, code: str, state: str, secret: str) -> dict:
    """What Shopify appends to the app's redirect_uri after an install, signed as Shopify signs it."""
    params = {
        "code": code,
        "host": "YWRtaW4uc2hvcGlmeS5jb20vc3RvcmUvc2FuZGJveA",
        "shop": domain,
        "state": state,
        "timestamp": str(int(time.time())),
    }
    return {**params, "hmac": shopify_query_hmac(params=params, secret=secret)}


@require_http_methods(["GET", "POST"])
def shopify_authorize(request, domain):
    _sandbox_only(request)
    params = request.GET if request.method == "GET" else request.POST
    client_id, redirect_uri, state = (params.get(k, "") for k in ("client_id", "redirect_uri", "state"))
    if client_id != settings.SHOPIFY_API_KEY or not redirect_uri:
        return HttpResponseBadRequest(
            "Oauth error invalid_request: The redirect_uri is missing or not whitelisted"
        )
    if request.method == "POST":
        if params.get("decision") != "approve":
            return HttpResponse("The app was not installed.", content_type="text/plain")
        code = secrets.token_hex(16)
        cache.set(f"sbx-shopify-code:{code}", {"shop": domain, "client_id": client_id}, 600)
        callback = shopify_callback_params(
            domain=domain, code=code, state=state, secret=settings.SHOPIFY_API_SECRET
        )
        return redirect(_with_query(redirect_uri, callback))
    context = {"shop": domain, "scope": params.get("scope", ""), "params": params, "kind": "shopify"}
    return render(request, "sandbox/shop_install.html", context)


@csrf_exempt
@require_POST
def shopify_access_token(request, domain):
    _sandbox_only(request)
    try:
        body = json.loads(request.body) if request.content_type == "application/json" else request.POST.dict()
    except ValueError:
        body = {}
    granted = cache.get(f"sbx-shopify-code:{body.get('code', '')}")
    cache.delete(f"sbx-shopify-code:{body.get('code', '')}")  # a code is good once
    if (
        not granted
        or granted["shop"] != domain
        or body.get("client_id") != settings.SHOPIFY_API_KEY
        or body.get("client_secret") != settings.SHOPIFY_API_SECRET
    ):
        return JsonResponse({"error": "invalid_request", "error_description": "invalid code"}, status=400)
    return JsonResponse({"access_token": f"shpat_{secrets.token_hex(16)}", "scope": "read_orders"})


@require_http_methods(["GET", "POST"])
def woocommerce_authorize(request, domain):
    _sandbox_only(request)
    params = request.GET if request.method == "GET" else request.POST
    names = ("app_name", "scope", "user_id", "return_url", "callback_url")
    app_name, scope, user_id, return_url, callback_url = (params.get(name, "") for name in names)
    if not all((app_name, scope, user_id, return_url, callback_url)) or scope not in (
        "read",
        "write",
        "read_write",
    ):
        return HttpResponseBadRequest("Error: Missing parameter or invalid scope")
    if request.method == "POST":
        if params.get("decision") != "approve":
            return redirect(_with_query(return_url, {"success": 0, "user_id": user_id}))
        key = {
            "key_id": secrets.randbelow(10_000),
            "user_id": user_id,
            "consumer_key": f"ck_{secrets.token_hex(20)}",
            "consumer_secret": f"cs_{secrets.token_hex(20)}",
            "key_permissions": scope,
        }
        cache.set(f"sbx-woo-key:{domain}:{key['consumer_key']}", key["consumer_secret"], KEPT)
        try:
            with http_client() as client:
                answer = client.post(callback_url, json=key)
        except httpx.HTTPError:
            answer = None
        if answer is None or answer.status_code != 200:
            # WooCommerce deletes the key it made when the app's callback does not take it.
            cache.delete(f"sbx-woo-key:{domain}:{key['consumer_key']}")
            return HttpResponseBadRequest(UNSENT)
        return redirect(_with_query(return_url, {"success": 1, "user_id": user_id}))
    context = {"shop": domain, "scope": scope, "params": params, "kind": "woocommerce", "app_name": app_name}
    return render(request, "sandbox/shop_install.html", context)


@require_GET
def woocommerce_orders(request, domain):
    """The REST API's order list, to a request with a key this store made (HTTP Basic)."""
    _sandbox_only(request)
    header = request.headers.get("Authorization", "")
    try:
        consumer_key, _, consumer_secret = (
            base64.b64decode(header.removeprefix("Basic ")).decode().partition(":")
        )
    except ValueError:
        consumer_key = consumer_secret = ""
    known = cache.get(f"sbx-woo-key:{domain}:{consumer_key}") if consumer_key else None
    if not known or not secrets.compare_digest(known, consumer_secret):
        return JsonResponse(
            {
                "code": "woocommerce_rest_authentication_error",
                "message": "Invalid signature - provided signature does not match.",
                "data": {"status": 401},
            },
            status=401,
        )
    return HttpResponse("[]", content_type="application/json")
