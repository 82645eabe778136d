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
from urllib.parse import parse_qs, urlsplit

from joyback.crypto import fingerprint
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
    # A referral: the codes used at checkout (Shopify's discount_codes, WooCommerce's coupon_lines)
    # then the one the poster's link carried (its landing parameter, kept by the shop in the order's
    # note_attributes or meta_data, or in Shopify's landing_site), the link's click, the host the
    # buyer came from, and a keyed hash of the billing address (never the address).
    referral_codes: tuple = ()
    referral_click: str = ""
    source: str = ""
    address_hash: str = ""

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


# The link's landing parameters (verification.referrals), as the shop keeps them.
LANDING_PARAMETER, CLICK_PARAMETER = "jb_ref", "jb_click"


def address_hash(*parts) -> str:
    """A keyed hash of a postal address, normalised (case, spaces): equal addresses match."""
    text = " ".join(" ".join(str(part or "").split()).casefold() for part in parts if part)
    return fingerprint(f"address:{text}") if text.strip() else ""


def _host(raw) -> str:
    text = str(raw or "").strip()
    if not text:
        return ""
    host = urlsplit(text if "//" in text else f"//{text}").hostname or ""
    return host.removeprefix("www.")[:80]


def _pairs(items, key: str) -> dict:
    """note_attributes ({name, value}) or meta_data ({key, value}) as a dict of strings."""
    pairs = {}
    for item in items if isinstance(items, list) else []:
        if (
            isinstance(item, dict)
            and isinstance(item.get(key), str)
            and isinstance(item.get("value"), str | int)
        ):
            pairs.setdefault(item[key], str(item["value"])[:100])
    return pairs


def _landing(url) -> dict:
    query = urlsplit(str(url or "")).query
    return {name: values[0][:100] for name, values in parse_qs(query).items() if values}


def _referral(*, checkout_codes, attributes: dict, landing: dict, referrer) -> dict:
    codes = [str(code)[:40] for code in checkout_codes if str(code or "").strip()]
    carried = attributes.get(LANDING_PARAMETER) or landing.get(LANDING_PARAMETER)
    if carried:
        codes.append(carried[:40])
    return {
        "referral_codes": tuple(dict.fromkeys(codes))[:5],
        "referral_click": (attributes.get(CLICK_PARAMETER) or landing.get(CLICK_PARAMETER) or "")[:24],
        "source": _host(referrer),
    }


def shopify_referral(payload: dict) -> dict:
    """Shopify's order: discount_codes [{code, amount, type}], note_attributes [{name, value}]
    (a theme keeps the landing parameter there as a cart attribute), landing_site (the first
    page's path and query) and referring_site."""
    discounts = payload.get("discount_codes") if isinstance(payload.get("discount_codes"), list) else []
    return _referral(
        checkout_codes=[d.get("code") for d in discounts if isinstance(d, dict)],
        attributes=_pairs(payload.get("note_attributes"), "name"),
        landing=_landing(payload.get("landing_site")),
        referrer=payload.get("referring_site"),
    )


def woocommerce_referral(payload: dict) -> dict:
    """WooCommerce's order: coupon_lines [{code, discount}] (WooCommerce keeps codes in lower
    case), meta_data [{key, value}] (the landing parameter saved at checkout, and WooCommerce's own
    order attribution: _wc_order_attribution_referrer, _wc_order_attribution_utm_source)."""
    coupons = payload.get("coupon_lines") if isinstance(payload.get("coupon_lines"), list) else []
    meta = _pairs(payload.get("meta_data"), "key")
    return _referral(
        checkout_codes=[c.get("code") for c in coupons if isinstance(c, dict)],
        attributes=meta,
        landing={},
        referrer=meta.get("_wc_order_attribution_referrer") or meta.get("_wc_order_attribution_utm_source"),
    )


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
        address_hash=_address_of(payload.get("billing_address"), "address1", "zip", "country_code"),
        **shopify_referral(payload),
    )


def _address_of(address, street: str, postcode: str, country: str) -> str:
    if not isinstance(address, dict):
        return ""
    return address_hash(address.get(street), address.get(postcode), address.get(country))


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
        address_hash=_address_of(billing, "address_1", "postcode", "country"),
        **woocommerce_referral(payload),
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
