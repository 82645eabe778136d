"""Order webhooks as the shops document and send them, whole (not our sandbox's shortened bodies):
Shopify's order resource (Admin REST API 2025-07, "orders/paid", "orders/updated") and refund
resource ("refunds/create"), and WooCommerce's order (REST API v3, the body of its order.*
webhooks), with the headers each shop sends. Tests build deliveries from these, so they are judged
by the shops' format."""

import base64
import copy
import hashlib
import hmac
import json

SHOPIFY_ORDER = {
    "id": 820982911946154508,
    "admin_graphql_api_id": "gid://shopify/Order/820982911946154508",
    "app_id": None,
    "browser_ip": None,
    "buyer_accepts_marketing": True,
    "cancel_reason": None,
    "cancelled_at": None,
    "cart_token": None,
    "checkout_id": None,
    "checkout_token": None,
    "confirmation_number": "X8B1K3QZ",
    "confirmed": True,
    "contact_email": "pat@example.com",
    "created_at": "2026-11-30T10:12:05-05:00",
    "currency": "EUR",
    "current_subtotal_price": "35.10",
    "current_total_discounts": "0.00",
    "current_total_price": "40.00",
    "current_total_tax": "6.39",
    "customer_locale": "en",
    "email": "pat@example.com",
    "estimated_taxes": False,
    "financial_status": "paid",
    "fulfillment_status": None,
    "landing_site": None,
    "name": "#9999",
    "note": None,
    "note_attributes": [],
    "number": 234,
    "order_number": 1234,
    "order_status_url": "https://alpaca.myshopify.com/548380009/orders/123456abcd/authenticate?key=abcdefg",
    "payment_gateway_names": ["visa", "bogus"],
    "phone": None,
    "presentment_currency": "EUR",
    "processed_at": "2026-11-30T10:12:05-05:00",
    "source_name": "web",
    "subtotal_price": "35.10",
    "tags": "",
    "tax_lines": [{"price": "6.39", "rate": 0.19, "title": "MwSt", "channel_liable": False}],
    "taxes_included": True,
    "test": False,
    "token": "123456abcd",
    "total_discounts": "0.00",
    "total_line_items_price": "35.10",
    "total_outstanding": "0.00",
    "total_price": "40.00",
    "total_shipping_price_set": {
        "shop_money": {"amount": "4.90", "currency_code": "EUR"},
        "presentment_money": {"amount": "4.90", "currency_code": "EUR"},
    },
    "total_tax": "6.39",
    "total_weight": 0,
    "updated_at": "2026-11-30T10:12:05-05:00",
    "billing_address": {
        "first_name": "Pat",
        "last_name": "Buyer",
        "address1": "Hauptstraße 1",
        "city": "Berlin",
        "zip": "10115",
        "country": "Germany",
        "country_code": "DE",
    },
    "customer": {
        "id": 115310627314723954,
        "email": "pat@example.com",
        "created_at": None,
        "updated_at": None,
        "first_name": "Pat",
        "last_name": "Buyer",
        "state": "disabled",
        "note": None,
        "verified_email": True,
        "phone": None,
        "currency": "EUR",
        "admin_graphql_api_id": "gid://shopify/Customer/115310627314723954",
    },
    "line_items": [
        {
            "id": 866550311766439020,
            "admin_graphql_api_id": "gid://shopify/LineItem/866550311766439020",
            "fulfillable_quantity": 1,
            "fulfillment_status": None,
            "gift_card": False,
            "grams": 250,
            "name": "House Blend 250 g",
            "price": "35.10",
            "product_exists": True,
            "product_id": 632910392,
            "quantity": 1,
            "requires_shipping": True,
            "sku": "HOUSE-250",
            "taxable": True,
            "title": "House Blend",
            "total_discount": "0.00",
            "variant_id": 808950810,
            "variant_title": "250 g",
            "vendor": "Alpaca Coffee",
            "tax_lines": [],
            "discount_allocations": [],
        }
    ],
    "refunds": [],
    "shipping_lines": [
        {
            "id": 271878346596884015,
            "code": "Standard",
            "price": "4.90",
            "source": "shopify",
            "title": "Standard",
            "tax_lines": [],
        }
    ],
}


def shopify_refund(*, refund_id=509562969, line_amount="0.00", shipping="0.00", order=SHOPIFY_ORDER) -> dict:
    """Shopify's refund resource (the refunds/create body): what was returned in refund_line_items,
    a shipping refund as an order adjustment, and the money sent back in transactions."""
    total = f"{float(line_amount) + float(shipping):.2f}"
    lines = []
    if line_amount != "0.00":
        lines.append(
            {
                "id": 104689539,
                "line_item_id": order["line_items"][0]["id"],
                "location_id": 40642626,
                "quantity": 1,
                "restock_type": "return",
                "subtotal": float(line_amount),
                "total_tax": 0.0,
                "subtotal_set": {"shop_money": {"amount": line_amount, "currency_code": "EUR"}},
                "line_item": order["line_items"][0],
            }
        )
    adjustments = []
    if shipping != "0.00":
        adjustments.append(
            {
                "id": 1030976842,
                "order_id": order["id"],
                "refund_id": refund_id,
                "amount": f"-{shipping}",
                "tax_amount": "0.00",
                "kind": "shipping_refund",
                "reason": "Shipping refund",
            }
        )
    return {
        "id": refund_id,
        "order_id": order["id"],
        "admin_graphql_api_id": f"gid://shopify/Refund/{refund_id}",
        "created_at": "2026-12-02T09:00:00-05:00",
        "note": "Returned",
        "processed_at": "2026-12-02T09:00:00-05:00",
        "restock": True,
        "user_id": 548380009,
        "refund_line_items": lines,
        "order_adjustments": adjustments,
        "duties": [],
        "transactions": [
            {
                "id": 179259969,
                "order_id": order["id"],
                "kind": "refund",
                "gateway": "bogus",
                "status": "success",
                "amount": total,
                "currency": "EUR",
                "parent_id": 801038806,
                "test": order["test"],
                "created_at": "2026-12-02T09:00:00-05:00",
            }
        ],
    }


def shopify_order(**changes) -> dict:
    order = copy.deepcopy(SHOPIFY_ORDER)
    order.update(changes)
    return order


def shopify_headers(*, shop, topic: str, body: bytes, secret: str, webhook_id: str) -> dict:
    return {
        "X-Shopify-Topic": topic,
        "X-Shopify-Hmac-Sha256": base64.b64encode(
            hmac.new(secret.encode(), body, hashlib.sha256).digest()
        ).decode(),
        "X-Shopify-Shop-Domain": shop,
        "X-Shopify-API-Version": "2025-07",
        "X-Shopify-Webhook-Id": webhook_id,
        "X-Shopify-Triggered-At": "2026-11-30T15:12:06.123456Z",
        "X-Shopify-Event-Id": "98880550-7158-44d4-b7cd-2c97c8a091b5",
    }


WOO_ORDER = {
    "id": 4750,
    "parent_id": 0,
    "status": "processing",
    "currency": "EUR",
    "version": "9.4.2",
    "prices_include_tax": True,
    "date_created": "2026-11-30T16:12:05",
    "date_created_gmt": "2026-11-30T15:12:05",
    "date_modified": "2026-11-30T16:12:06",
    "date_modified_gmt": "2026-11-30T15:12:06",
    "discount_total": "0.00",
    "discount_tax": "0.00",
    "shipping_total": "4.90",
    "shipping_tax": "0.00",
    "cart_tax": "9.58",
    "total": "60.00",
    "total_tax": "9.58",
    "customer_id": 0,
    "order_key": "wc_order_58d2d042d1d",
    "billing": {
        "first_name": "Sam",
        "last_name": "Buyer",
        "company": "",
        "address_1": "Calle Mayor 1",
        "address_2": "",
        "city": "Madrid",
        "state": "M",
        "postcode": "28013",
        "country": "ES",
        "email": "sam@example.com",
        "phone": "",
    },
    "shipping": {
        "first_name": "Sam",
        "last_name": "Buyer",
        "company": "",
        "address_1": "Calle Mayor 1",
        "address_2": "",
        "city": "Madrid",
        "state": "M",
        "postcode": "28013",
        "country": "ES",
        "phone": "",
    },
    "payment_method": "stripe",
    "payment_method_title": "Credit card",
    "transaction_id": "ch_3PqZ2Y2eZvKYlo2C1",
    "customer_ip_address": "203.0.113.7",
    "customer_user_agent": "Mozilla/5.0",
    "created_via": "checkout",
    "customer_note": "",
    "date_completed": None,
    "date_paid": "2026-11-30T16:12:06",
    "date_paid_gmt": "2026-11-30T15:12:06",
    "cart_hash": "7a3c1f",
    "number": "4750",
    "meta_data": [],
    "line_items": [
        {
            "id": 315,
            "name": "Espresso Roast 1 kg",
            "product_id": 93,
            "variation_id": 0,
            "quantity": 1,
            "tax_class": "",
            "subtotal": "46.64",
            "subtotal_tax": "8.86",
            "total": "46.64",
            "total_tax": "8.86",
            "taxes": [],
            "meta_data": [],
            "sku": "ESPRESSO-1KG",
            "price": 46.64,
        }
    ],
    "tax_lines": [],
    "shipping_lines": [
        {
            "id": 317,
            "method_title": "Flat rate",
            "method_id": "flat_rate",
            "total": "4.90",
            "total_tax": "0.00",
        }
    ],
    "fee_lines": [],
    "coupon_lines": [],
    "refunds": [],
    "payment_url": "https://shop.alpaca.example/checkout/order-pay/4750/?pay_for_order=true&key=wc_order_58d2d042d1d",
    "is_editable": False,
    "needs_payment": False,
    "needs_processing": True,
    "date_completed_gmt": None,
    "currency_symbol": "€",
}


def woo_order(**changes) -> dict:
    order = copy.deepcopy(WOO_ORDER)
    order.update(changes)
    return order


def woo_headers(*, store, topic: str, body: bytes, secret: str, delivery_id: str, webhook_id=12) -> dict:
    resource, _, event = topic.partition(".")
    return {
        "X-WC-Webhook-Source": f"https://{store}/",
        "X-WC-Webhook-Topic": topic,
        "X-WC-Webhook-Resource": resource,
        "X-WC-Webhook-Event": event,
        "X-WC-Webhook-Signature": base64.b64encode(
            hmac.new(secret.encode(), body, hashlib.sha256).digest()
        ).decode(),
        "X-WC-Webhook-ID": str(webhook_id),
        "X-WC-Webhook-Delivery-ID": delivery_id,
    }


def woo_delivery_id(*, webhook_id=12, second=1764515526) -> str:
    """WC_Webhook::get_new_delivery_id: wp_hash( webhook id . current time ), one per second."""
    return hashlib.md5(f"{webhook_id}{second}".encode(), usedforsecurity=False).hexdigest()


def post(client, shop, *, topic: str, payload: dict, secret: str, delivery_id: str):
    """Deliver a body as the shop sends it: the exact bytes signed."""
    body = json.dumps(payload).encode()
    if shop.kind == "shopify":
        headers = shopify_headers(
            shop=shop.domain, topic=topic, body=body, secret=secret, webhook_id=delivery_id
        )
    else:
        headers = woo_headers(
            store=shop.domain, topic=topic, body=body, secret=secret, delivery_id=delivery_id
        )
    return client.post(
        f"/v/shops/{shop.public_id}/webhook/", body, content_type="application/json", headers=headers
    )
