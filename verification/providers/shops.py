"""Shopify's and WooCommerce's order webhooks, as the shops send them, read into one shape.

Shopify (shopify.dev, "Verify webhook deliveries"): the raw body signed with HMAC-SHA256 and the
app's client secret, base64 in X-Shopify-Hmac-Sha256; the topic in X-Shopify-Topic, the shop in
X-Shopify-Shop-Domain, and X-Shopify-Webhook-Id the same for every retry of one delivery.
WooCommerce (developer.woocommerce.com, "Webhooks"): the raw body signed with HMAC-SHA256 and the
webhook's secret, base64 in X-WC-Webhook-Signature; the topic in X-WC-Webhook-Topic (order.created,
order.updated, order.deleted, order.restored) and X-WC-Webhook-Delivery-ID per delivery. The body
is the whole order, so what an order.updated means is read from the order's status.
"""

import base64
import hashlib
import hmac
import json
from dataclasses import asdict, dataclass
from decimal import Decimal, InvalidOperation

from joyback.money import MoneyError, from_major

PAID, REFUND, IGNORED = "paid", "refund", "ignored"

# WooCommerce's order statuses: paid, or taken back (the rest wait for payment or failed).
WOO_PAID = {"processing", "completed"}
WOO_TAKEN_BACK = {"refunded", "cancelled"}

SHOPIFY_TOPICS = {"orders/paid": PAID, "orders/cancelled": REFUND, "refunds/create": REFUND}


@dataclass(frozen=True)
class ShopOrder:
    """What a delivery says about an order: paid (with amount and buyer), taken back, or nothing."""

    action: str
    order_id: str = ""
    amount: int = 0
    currency: str = ""
    email: str = ""
    phone: str = ""
    customer_id: str = ""
    reason: str = ""
    products: tuple = ()  # SKUs (else product ids) of the order's lines
    test: bool = False  # Shopify's test order (a test gateway, or the Bogus Gateway): no live money
    # Money refunded so far, as [refund id, minor units] pairs (a partial refund leaves the order
    # paid); a REFUND without them takes the whole order back (cancelled, refunded, deleted).
    refunds: tuple = ()

    def as_dict(self) -> dict:
        return asdict(self)


class DeliveryInvalid(Exception):
    """The body is not what the shop sends for this topic."""


def signature_valid(*, body: bytes, header: str, secret: str) -> bool:
    """Both shops: base64(HMAC-SHA256(secret, raw body)), compared in constant time."""
    if not header or not secret:
        return False
    expected = base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()
    return hmac.compare_digest(expected, header.strip())


def signature(*, body: bytes, secret: str) -> str:
    """What a shop puts in its signature header (the sandbox shops sign with it)."""
    return base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()


def _amount(value, currency: str) -> int:
    try:
        return from_major(Decimal(str(value)), currency)
    except (InvalidOperation, MoneyError, ValueError) as error:
        raise DeliveryInvalid(f"amount {value!r} {currency!r}") from error


def _order_id(value) -> str:
    if isinstance(value, bool) or not isinstance(value, int | str) or not str(value).strip():
        raise DeliveryInvalid("no order id")
    return str(value).strip()[:40]


def _products(payload: dict) -> tuple:
    """The order's products as both shops list them in line_items: the SKU, else the product id."""
    lines = payload.get("line_items") if isinstance(payload.get("line_items"), list) else []
    named = (str(line.get("sku") or line.get("product_id") or "") for line in lines if isinstance(line, dict))
    return tuple(sorted({name[:80] for name in named if name}))[:50]


def _shopify_refund_amount(refund: dict, currency: str) -> int:
    """The money a Shopify refund sent back: its successful refund transactions; without them, its
    returned lines (with their tax) and its order adjustments (a shipping refund is a negative one)."""
    transactions = [t for t in refund.get("transactions") or [] if isinstance(t, dict)]
    if transactions:
        sent = [t for t in transactions if t.get("kind") == "refund" and t.get("status") == "success"]
        return sum(_amount(t.get("amount"), currency) for t in sent)
    lines = [line for line in refund.get("refund_line_items") or [] if isinstance(line, dict)]
    adjustments = [a for a in refund.get("order_adjustments") or [] if isinstance(a, dict)]
    returned = sum(_amount(line.get("subtotal") or 0, currency) for line in lines)
    returned += sum(_amount(line.get("total_tax") or 0, currency) for line in lines)
    return returned - sum(
        _amount(a.get("amount") or 0, currency) + _amount(a.get("tax_amount") or 0, currency)
        for a in adjustments
    )


def _shopify_refunds(refunds, currency: str) -> tuple:
    listed = [refund for refund in refunds or [] if isinstance(refund, dict) and refund.get("id")]
    amounts = ((str(refund["id"])[:40], _shopify_refund_amount(refund, currency)) for refund in listed)
    return tuple(sorted((refund_id, amount) for refund_id, amount in amounts if amount > 0))


def _refund_currency(refund: dict) -> str:
    for transaction in refund.get("transactions") or []:
        if isinstance(transaction, dict) and transaction.get("currency"):
            return str(transaction["currency"])
    for line in refund.get("refund_line_items") or []:
        money = ((line or {}).get("subtotal_set") or {}).get("shop_money") or {}
        if money.get("currency_code"):
            return str(money["currency_code"])
    return "EUR"  # only the number of decimals matters here; the purchase's currency is checked


def shopify_order(*, topic: str, payload: dict) -> ShopOrder:
    action = SHOPIFY_TOPICS.get(topic, IGNORED)
    if action == IGNORED:
        return ShopOrder(IGNORED)
    if topic == "refunds/create":
        order_id = _order_id(payload.get("order_id"))
        refunds = _shopify_refunds([payload], _refund_currency(payload))
        if not refunds:
            return ShopOrder(IGNORED, order_id=order_id)  # a restock or a note: no money back
        test = any(isinstance(t, dict) and t.get("test") is True for t in payload.get("transactions") or [])
        return ShopOrder(REFUND, order_id=order_id, reason="refund", refunds=refunds, test=test)
    order_id = _order_id(payload.get("id"))
    test = payload.get("test") is True
    if action == REFUND:
        return ShopOrder(
            REFUND, order_id=order_id, reason=f"cancelled: {payload.get('cancel_reason') or ''}", test=test
        )
    currency = str(payload.get("currency") or "")
    customer = payload.get("customer") or {}
    return ShopOrder(
        PAID,
        order_id=order_id,
        amount=_amount(payload.get("total_price"), currency),
        currency=currency,
        email=str(payload.get("email") or customer.get("email") or ""),
        phone=str(payload.get("phone") or customer.get("phone") or ""),
        customer_id=str(customer.get("id") or ""),
        products=_products(payload),
        test=test,
        refunds=_shopify_refunds(payload.get("refunds"), currency),
    )


def woocommerce_order(*, topic: str, payload: dict) -> ShopOrder:
    if not topic.startswith("order."):
        return ShopOrder(IGNORED)
    order_id = _order_id(payload.get("id"))
    status = payload.get("status")
    if topic == "order.deleted" or status in WOO_TAKEN_BACK:
        return ShopOrder(REFUND, order_id=order_id, reason=str(status or "deleted"))
    if status not in WOO_PAID:
        return ShopOrder(IGNORED, order_id=order_id)
    currency = str(payload.get("currency") or "")
    billing = payload.get("billing") or {}
    # WooCommerce keeps a partly refunded order processing; its refunds list says what went back
    # (each total negative), while the order's total stays what was paid.
    listed = [
        refund for refund in payload.get("refunds") or [] if isinstance(refund, dict) and refund.get("id")
    ]
    refunds = ((str(refund["id"])[:40], -_amount(refund.get("total") or 0, currency)) for refund in listed)
    return ShopOrder(
        PAID,
        order_id=order_id,
        amount=_amount(payload.get("total"), currency),
        currency=currency,
        email=str(billing.get("email") or ""),
        phone=str(billing.get("phone") or ""),
        customer_id=str(payload.get("customer_id") or "") if payload.get("customer_id") else "",
        products=_products(payload),
        refunds=tuple(sorted((refund_id, amount) for refund_id, amount in refunds if amount > 0)),
    )


@dataclass(frozen=True)
class Delivery:
    """A shop's webhook request: which of the shop's deliveries it is, its topic and the order."""

    delivery_id: str
    topic: str
    order: ShopOrder
    # What identifies the event the delivery reports: deliveries with the same key are one event
    # (a retry, or two topics for one change); any other delivery is stored and processed.
    event_key: str = ""


def shopify_delivery(*, headers, payload: dict, domain: str) -> Delivery:
    if headers.get("X-Shopify-Shop-Domain", "").strip().lower() != domain:
        raise DeliveryInvalid("X-Shopify-Shop-Domain is not this connection's shop")
    delivery_id = headers.get("X-Shopify-Webhook-Id", "").strip()
    topic = headers.get("X-Shopify-Topic", "").strip()
    if not delivery_id or not topic:
        raise DeliveryInvalid("X-Shopify-Webhook-Id and X-Shopify-Topic are required")
    # Shopify's webhook id is one per event, the same for each retry of it.
    return Delivery(delivery_id[:100], topic, shopify_order(topic=topic, payload=payload), delivery_id[:100])


def woocommerce_event_key(*, order: ShopOrder, payload: dict) -> str:
    """WooCommerce's delivery id is a hash of the webhook id and the current second
    (WC_Webhook::get_new_delivery_id), so two deliveries of one webhook within a second share it.
    An event is the order as of its modification (date_modified_gmt) with what it says about the
    money (status, total, refunds): order.created and order.updated for the same change are one
    event, two changes within a second are two. Without a modification time, the whole body is."""
    if not order.order_id or not payload.get("date_modified_gmt"):
        body = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
        return f"body:{hashlib.sha256(body).hexdigest()}"
    said = json.dumps(order.as_dict(), sort_keys=True).encode()
    modified = str(payload["date_modified_gmt"])[:32]
    return f"order:{order.order_id}:{modified}:{hashlib.sha256(said).hexdigest()[:32]}"


def woocommerce_delivery(*, headers, payload: dict, domain: str) -> Delivery:
    delivery_id = headers.get("X-WC-Webhook-Delivery-ID", "").strip()
    topic = headers.get("X-WC-Webhook-Topic", "").strip()
    if not delivery_id or not topic:
        raise DeliveryInvalid("X-WC-Webhook-Delivery-ID and X-WC-Webhook-Topic are required")
    order = woocommerce_order(topic=topic, payload=payload)
    return Delivery(delivery_id[:100], topic, order, woocommerce_event_key(order=order, payload=payload))


SIGNATURE_HEADER = {"shopify": "X-Shopify-Hmac-Sha256", "woocommerce": "X-WC-Webhook-Signature"}
DELIVERY_READERS = {"shopify": shopify_delivery, "woocommerce": woocommerce_delivery}
