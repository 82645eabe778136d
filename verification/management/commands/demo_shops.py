"""Demo shop connectors: the demo brand's sandbox Shopify shop and WooCommerce store, connected to
the cashback campaign, and the deliveries real shops send: a payment and its retry, the same
order in a second delivery, a refund that arrives before its payment, a WooCommerce order from
pending to paid to refunded.

Run after demo_seed (make run does); safe to run again.
"""

from django.core.management.base import BaseCommand

from campaigns.models import Brand, Campaign
from verification.connectors import shop_connect
from verification.models import ShopConnection
from verification.sandbox.shops import SandboxShop, woocommerce_order
from verification.services.provider_events import provider_events_process

SHOPS = [("shopify", "demo-coffee.myshopify.com"), ("woocommerce", "shop.demo.localhost")]
BUYER = "kim@demo.localhost"


class Command(BaseCommand):
    help = "Connect the demo brand's sandbox shops and send their order webhooks (idempotent)."

    def handle(self, *args, **options):
        brand = Brand.objects.filter(slug="demo").first()
        campaign = Campaign.objects.filter(slug="demo-cashback").first()
        if brand is None or campaign is None:
            self.stderr.write("Run demo_seed first.")
            return
        if ShopConnection.objects.filter(brand=brand).exists():
            self.stdout.write("Demo shops exist.")
            return
        shopify, woo = (
            shop_connect(
                brand=brand,
                kind=kind,
                domain=domain,
                webhook_secret=f"demo-{kind}-secret",
                campaign=campaign,
                # The sandbox's own shops, made for this brand here: nobody else can claim them.
                proof="sandbox_demo",
            )
            for kind, domain in SHOPS
        )
        order = {"amount": 64_00, "currency": "EUR", "email": BUYER}
        shop = SandboxShop(shopify)
        _, delivery = shop.order_paid(order_id=5_100_000_001, **order)
        shop.order_paid(order_id=5_100_000_001, delivery_id=delivery, **order)  # the shop's retry
        shop.order_paid(order_id=5_100_000_002, **order)
        shop.order_paid(order_id=5_100_000_002, **order)  # the same order, another delivery
        shop.order_refunded(
            order_id=5_100_000_003, amount=order["amount"]
        )  # before its payment, as deliveries may come
        provider_events_process()
        shop.order_paid(order_id=5_100_000_003, **order)

        store = SandboxShop(woo)
        store.deliver("order.created", woocommerce_order(order_id=4750, status="pending", **order))
        store.order_paid(order_id=4750, **order)
        store.order_refunded(order_id=4750, **order)
        store.order_paid(order_id=4751, **order)
        provider_events_process()

        for connection in (shopify, woo):
            self.stdout.write(f"  {connection}: /brands/demo/shops/{connection.pk}/")
            self.stdout.write(f"    sandbox shop: /sandbox/shops/{connection.public_id}/")
        self.stdout.write(self.style.SUCCESS("Demo shops ready: /brands/demo/shops/"))
