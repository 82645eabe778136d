"""The sandbox shops: a Shopify shop and a WooCommerce store that deliver order webhooks to a
connection exactly as the real ones do (same headers, bodies signed over the exact bytes), with
what real shops also do: a retry of a delivery (same delivery id), a duplicate, a refund that
arrives before the payment it takes back. A page stands in for the shop's checkout and its order
mail, for the demo."""

import json
import secrets
import uuid
from datetime import UTC, datetime
from urllib.parse import urlencode

from django.conf import settings
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from joyback.money import to_major
from verification.connectors import claim_signature
from verification.models import ProviderEvent, ShopConnection
from verification.providers.loopback import http_client
from verification.providers.shops import signature
from verification.selectors import shop_get_connected
from verification.services.provider_events import provider_events_process


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _line_items(skus, amount: int, currency: str) -> list[dict]:
    """An order's lines as both shops list them: one per product, its SKU and product id."""
    skus = list(skus) or ["SANDBOX-ITEM"]
    price = str(to_major(amount // len(skus), currency))
    return [
        {"id": 866550311766439020 + i, "product_id": 632910392 + i, "sku": sku, "quantity": 1, "price": price}
        for i, sku in enumerate(skus)
    ]


def shopify_order(
    *,
    order_id: int,
    amount: int,
    currency: str,
    email: str,
    cancelled=False,
    skus=(),
    discount_code: str = "",
    landing: dict | None = None,
) -> dict:
    """The fields of Shopify's order resource (Admin REST API) that orders/paid carries: a code
    typed at checkout in discount_codes, the link's landing parameters kept by the theme as cart
    attributes (note_attributes) and in landing_site."""
    landing = {key: value for key, value in (landing or {}).items() if value}
    return {
        "discount_codes": (
            [{"code": discount_code, "amount": "0.00", "type": "percentage"}] if discount_code else []
        ),
        "note_attributes": [{"name": key, "value": value} for key, value in landing.items()],
        "landing_site": f"/?{urlencode(landing)}" if landing else "/",
        "referring_site": "https://www.tiktok.com/" if landing else "",
        "line_items": _line_items(skus, amount, currency),
        "id": order_id,
        "admin_graphql_api_id": f"gid://shopify/Order/{order_id}",
        "name": f"#{order_id % 10000}",
        "email": email,
        "currency": currency,
        "total_price": str(to_major(amount, currency)),
        "financial_status": "voided" if cancelled else "paid",
        "cancelled_at": _now() if cancelled else None,
        "cancel_reason": "customer" if cancelled else None,
        "created_at": _now(),
        "test": False,
        "customer": {"id": order_id + 7, "email": email},
    }


def shopify_refund(*, order_id: int, amount: int, currency: str, refund_id: int | None = None) -> dict:
    """Shopify's refund resource (refunds/create): the money sent back is its refund transaction."""
    refund_id = refund_id or order_id + 11
    return {
        "id": refund_id,
        "order_id": order_id,
        "admin_graphql_api_id": f"gid://shopify/Refund/{refund_id}",
        "created_at": _now(),
        "processed_at": _now(),
        "note": "Returned",
        "restock": True,
        "refund_line_items": [],
        "order_adjustments": [],
        "transactions": [
            {
                "id": refund_id + 1,
                "order_id": order_id,
                "kind": "refund",
                "status": "success",
                "gateway": "bogus",
                "amount": str(to_major(amount, currency)),
                "currency": currency,
                "test": False,
            }
        ],
    }


def woocommerce_order(
    *,
    order_id: int,
    amount: int,
    currency: str,
    email: str,
    status: str,
    skus=(),
    discount_code: str = "",
    landing: dict | None = None,
) -> dict:
    """The fields of WooCommerce's order (REST API v3) that its order webhooks carry: a coupon in
    coupon_lines (WooCommerce keeps codes in lower case), the link's landing parameters saved at
    checkout in meta_data, beside WooCommerce's own order attribution."""
    landing = {key: value for key, value in (landing or {}).items() if value}
    meta = [{"id": 900 + i, "key": key, "value": value} for i, (key, value) in enumerate(landing.items())]
    if landing:
        meta.append({"id": 950, "key": "_wc_order_attribution_referrer", "value": "https://www.tiktok.com/"})
    return {
        "coupon_lines": (
            [
                {
                    "id": 318,
                    "code": discount_code.lower(),
                    "discount": "0.00",
                    "discount_tax": "0.00",
                    "meta_data": [],
                }
            ]
            if discount_code
            else []
        ),
        "meta_data": meta,
        "line_items": _line_items(skus, amount, currency),
        "id": order_id,
        "number": str(order_id),
        "order_key": f"wc_order_{secrets.token_hex(6)}",
        "status": status,
        "currency": currency,
        "total": str(to_major(amount, currency)),
        "customer_id": 0,
        "billing": {"email": email, "first_name": "Sandbox", "last_name": "Buyer"},
        "date_created_gmt": _now(),
        "date_modified_gmt": _now(),
        "date_paid_gmt": _now() if status in ("processing", "completed") else None,
    }


class SandboxShop:
    """Delivers webhooks for one connection through the loopback (our own webhook view)."""

    def __init__(self, shop: ShopConnection, *, client=None):
        self.shop = shop
        self.client = client

    def deliver(self, topic: str, payload: dict, *, delivery_id: str | None = None, secret=None) -> tuple:
        """POST one delivery as the shop would; (our HTTP status, the delivery id). The same
        delivery id again is the shop's retry of that delivery."""
        delivery_id = delivery_id or str(uuid.uuid4())
        body = json.dumps(payload).encode()
        signed = signature(body=body, secret=secret or self.shop.webhook_secret)
        if self.shop.kind == "shopify":
            headers = {
                "X-Shopify-Topic": topic,
                "X-Shopify-Hmac-Sha256": signed,
                "X-Shopify-Shop-Domain": self.shop.domain,
                "X-Shopify-Webhook-Id": delivery_id,
                "X-Shopify-API-Version": "2025-07",
                "X-Shopify-Triggered-At": _now(),
            }
        else:
            headers = {
                "X-WC-Webhook-Topic": topic,
                "X-WC-Webhook-Resource": topic.partition(".")[0],
                "X-WC-Webhook-Event": topic.partition(".")[2],
                "X-WC-Webhook-Signature": signed,
                "X-WC-Webhook-Source": f"https://{self.shop.domain}/",
                "X-WC-Webhook-Delivery-ID": delivery_id,
                "X-WC-Webhook-ID": "1",
            }
        path = reverse("verification:shop_webhook", args=[self.shop.public_id])
        headers["Content-Type"] = "application/json"
        if self.client is not None:
            response = self.client.post(path, body, content_type="application/json", headers=headers)
        else:
            with http_client() as client:
                response = client.post(path, content=body, headers=headers)
        return response.status_code, delivery_id

    def order_paid(
        self,
        *,
        order_id: int,
        amount: int,
        currency: str,
        email: str,
        skus=(),
        discount_code: str = "",
        landing: dict | None = None,
        **options,
    ) -> tuple:
        referral = {"discount_code": discount_code, "landing": landing}
        if self.shop.kind == "shopify":
            payload = shopify_order(
                order_id=order_id, amount=amount, currency=currency, email=email, skus=skus, **referral
            )
            return self.deliver("orders/paid", payload, **options)
        payload = woocommerce_order(
            order_id=order_id,
            amount=amount,
            currency=currency,
            email=email,
            status="processing",
            skus=skus,
            **referral,
        )
        return self.deliver("order.updated", payload, **options)

    def order_refunded(self, *, order_id: int, amount: int, currency: str = "EUR", email="", **options):
        """The whole order refunded (amount is the order's total)."""
        if self.shop.kind == "shopify":
            refund = shopify_refund(order_id=order_id, amount=amount, currency=currency)
            return self.deliver("refunds/create", refund, **options)
        payload = woocommerce_order(
            order_id=order_id, amount=amount, currency=currency, email=email, status="refunded"
        )
        return self.deliver("order.updated", payload, **options)

    def order_cancelled(self, *, order_id: int, amount: int, currency: str, email: str, **options):
        if self.shop.kind == "shopify":
            payload = shopify_order(
                order_id=order_id, amount=amount, currency=currency, email=email, cancelled=True
            )
            return self.deliver("orders/cancelled", payload, **options)
        payload = woocommerce_order(
            order_id=order_id, amount=amount, currency=currency, email=email, status="cancelled"
        )
        return self.deliver("order.updated", payload, **options)

    def claim_link(self, *, order_id) -> str:
        """What the shop's order mail template computes (Liquid's hmac_sha256, PHP's hash_hmac)."""
        sig = claim_signature(shop=self.shop, order_id=str(order_id))
        return reverse("verification:shop_claim", args=[self.shop.public_id, str(order_id), sig])


def _process(shop: ShopConnection) -> None:
    # The sandbox is the demo: the order shows at once, with or without the standing worker.
    waiting = ProviderEvent.objects.filter(
        provider=shop.kind, payload__connection=shop.pk, processed_at__isnull=True
    )
    provider_events_process(ids=list(waiting.values_list("pk", flat=True)))


@require_http_methods(["GET", "POST"])
def shop_page(request, public_id):
    """A stand-in for the shop: check out an order (paid, and delivered twice as shops retry),
    refund it, and read the order mail with its claim link."""
    if not settings.SANDBOX:
        raise Http404("The sandbox is off")
    shop = shop_get_connected(public_id=public_id)
    if shop is None:
        raise Http404("No such shop")
    sandbox = SandboxShop(shop)
    currency = shop.campaign.currency
    if request.method == "POST":
        email = request.POST.get("email", "").strip()[:254] or "buyer@example.com"
        if request.POST.get("action") == "refund":
            order_id = int(request.POST.get("order_id", "0") or 0)
            paid = ProviderEvent.objects.filter(
                provider=shop.kind,
                payload__connection=shop.pk,
                payload__order__order_id=str(order_id),
                payload__order__action="paid",
            ).first()
            amount = paid.payload["order"]["amount"] if paid else 1
            sandbox.order_refunded(order_id=order_id, currency=currency, amount=amount or 1, email=email)
        else:
            try:
                amount = round(float(request.POST.get("amount", "40")) * 100)
            except ValueError:
                amount = 4000
            order_id = (
                secrets.randbelow(10**9) + 10**12
                if shop.kind == "shopify"
                else secrets.randbelow(9000) + 1000
            )
            referral = {
                "discount_code": request.POST.get("discount_code", "").strip()[:40],
                "landing": {key: request.POST.get(key, "").strip()[:40] for key in ("jb_ref", "jb_click")},
            }
            _status, delivery_id = sandbox.order_paid(
                order_id=order_id, amount=max(amount, 1), currency=currency, email=email, **referral
            )
            sandbox.order_paid(  # a retry of the same delivery, as shops send when an answer is slow
                order_id=order_id,
                amount=max(amount, 1),
                currency=currency,
                email=email,
                delivery_id=delivery_id,
                **referral,
            )
        _process(shop)
        return redirect("verification:sandbox_shop", public_id=shop.public_id)
    paid = ProviderEvent.objects.filter(
        provider=shop.kind, payload__connection=shop.pk, payload__order__action="paid"
    ).order_by("-pk")
    orders, seen = [], set()
    for event in paid[:40]:
        order = event.payload["order"]
        if order["order_id"] in seen:
            continue
        seen.add(order["order_id"])
        orders.append(
            {**order, "outcome": event.outcome, "claim_link": sandbox.claim_link(order_id=order["order_id"])}
        )
    landing = {key: request.GET.get(key, "")[:40] for key in ("jb_ref", "jb_click")}
    return render(
        request,
        "sandbox/shop.html",
        {"shop": shop, "orders": orders[:10], "currency": currency, "landing": landing},
    )
