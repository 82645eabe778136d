"""Demo shop connectors: the demo brand's sandbox Shopify shop and WooCommerce store, connected to
the cashback campaign, and the deliveries real shops send: a payment and its retry, the same
order in a second delivery, a refund that arrives before its payment, a WooCommerce order from
pending to paid to refunded. And a referral: the all-in-one campaign pays 10 % of each order its
posters' codes bring (at most 8 euros an order), and a demo person's code is used at the sandbox
Shopify's checkout: their status page shows the order, pending until the return window closes.

Run after demo_seed (make run does); safe to run again.
"""

from django.core.management.base import BaseCommand

from campaigns.models import Brand, Campaign, Trigger
from campaigns.services.rules import rule_save
from verification.connectors import shop_connect
from verification.models import Identity, ShopConnection
from verification.referrals import referral_code_for
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

        self._referral(brand=brand, shop=shop, order=order)

        for connection in (shopify, woo):
            self.stdout.write(f"  {connection}: /brands/demo/shops/{connection.pk}/")
            self.stdout.write(f"    sandbox shop: /sandbox/shops/{connection.public_id}/")
        self.stdout.write(self.style.SUCCESS("Demo shops ready: /brands/demo/shops/"))

    def _referral(self, *, brand, shop, order) -> None:
        campaign = Campaign.objects.filter(slug="demo-all-in-one").first()
        poster = (
            Identity.objects.filter(brand=brand, subject="demo-payee-0").select_related("participant").first()
        )
        if campaign is None or poster is None:
            return
        if not campaign.rules.filter(trigger=Trigger.REFERRAL).exists():
            rule_save(
                campaign=campaign,
                trigger=Trigger.REFERRAL,
                reward_amount=8_00,
                cashback_basis_points=1000,
                referral_person_cap=200_00,
                referral_min_order=10_00,
            )
        code = referral_code_for(participant=poster.participant, campaign=campaign)
        if code is None:
            return
        shop.order_paid(order_id=5_100_000_010, discount_code=code.code.lower(), **order)
        provider_events_process()
        self.stdout.write(
            f"  referral: {poster.display_name}'s code {code.code} brought an order; their status page: "
            f"/c/{campaign.slug}/status/{poster.participant.token}/"
        )
