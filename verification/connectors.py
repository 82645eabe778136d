"""Shop connectors: a brand's Shopify shop or WooCommerce store reports its orders by webhook, and
cashback follows them through the Cashback API's engine (verification.cashback) with no code.

A paid order is a purchase (held on the budget through the campaign's return window, then owed);
a cancelled or refunded order releases the hold or claws the cashback back. Deliveries are stored
once per (connection, delivery id) in one statement and processed by the standing worker, like
the providers' webhooks. Shops retry and do not keep order: a refund may be processed before the
payment it takes back, so the payment, when it comes, finds the refund and earns nothing.

The buyer claims the cashback from a link in the shop's order mail: the order id signed with the
connection's claim key (Shopify's mail templates sign with Liquid's hmac_sha256 filter, WooCommerce's
with PHP's hash_hmac), so a link cannot be made for someone else's order.
"""

import hashlib
import hmac
import logging
import secrets
from contextlib import contextmanager
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns.models import Brand, Campaign
from campaigns.modes import live_brand_of
from joyback.queue import enqueue_on_commit
from verification import sql
from verification.cashback import CashbackError, Customer, purchase_record, purchase_refund
from verification.models import ProviderEvent, Purchase, PurchaseStatus, ShopConnection, ShopInstall, ShopKind
from verification.providers.shops import PAID, REFUND, Delivery, ShopOrder
from verification.referrals import Referral
from verification.services.provider_events import (
    EVENT_PROCESSORS,
    provider_event_processed,
    provider_events_store,
)

logger = logging.getLogger(__name__)


class ShopRefused(Exception):
    pass


def shop_connect(
    *,
    brand: Brand,
    kind: str,
    domain: str,
    webhook_secret: str,
    campaign: Campaign,
    proof: str = "",
    api_credentials: str = "",
) -> ShopConnection:
    """Connect a shop: its deliveries are taken from now on, for this campaign's cashback. The
    brand's pages connect only with the shop's proof (shop_install_complete)."""
    if campaign.brand_id != brand.pk:
        raise ShopRefused(_("No such campaign."))
    try:
        with transaction.atomic(durable=True):
            return ShopConnection.objects.create(
                brand=brand,
                kind=kind,
                domain=domain,
                webhook_secret=webhook_secret,
                claim_key=secrets.token_urlsafe(24),
                campaign=campaign,
                proven_at=timezone.now() if proof else None,
                proof=proof,
                api_credentials=api_credentials,
            )
    except IntegrityError:
        raise ShopRefused(_("This shop is connected already.")) from None


INSTALL_VALID = timedelta(hours=1)


def _connected_proven(*, kind: str, domain: str) -> bool:
    return ShopConnection.objects.filter(
        kind=kind, domain=domain, disconnected_at__isnull=True, proven_at__isnull=False
    ).exists()


def shop_install_start(
    *, brand: Brand, user, kind: str, domain: str, webhook_secret: str, campaign: Campaign
) -> ShopInstall:
    """The owner is about to be sent to the shop to prove it is theirs; the state names this."""
    if campaign.brand_id != brand.pk:
        raise ShopRefused(_("No such campaign."))
    if _connected_proven(kind=kind, domain=domain):
        raise ShopRefused(_("This shop is connected already."))
    return ShopInstall.objects.create(
        brand=brand,
        user=user,
        kind=kind,
        domain=domain,
        webhook_secret=webhook_secret,
        campaign=campaign,
        state=secrets.token_urlsafe(32),
    )


def shop_install_pending(*, kind: str, state: str) -> ShopInstall | None:
    """The install a shop's answer names, while it can still be completed."""
    if not state:
        return None
    return (
        # Once: an install the shop's answer completed or failed is not tried again with its state.
        ShopInstall.objects.filter(
            kind=kind,
            state=state,
            connection__isnull=True,
            outcome="",
            created_at__gt=timezone.now() - INSTALL_VALID,
        )
        .select_related("brand", "campaign")
        .first()
    )


def shop_install_refused(*, install: ShopInstall, outcome: str) -> None:
    ShopInstall.objects.filter(pk=install.pk, connection__isnull=True).update(outcome=outcome[:40])


def shop_install_complete(*, install: ShopInstall, proof: str, api_credentials: str) -> ShopConnection:
    """The shop proved it is the brand's: connected. A connection of the same shop made without
    proof is retired (taken over) and its brand told; a proven one stays, and this is refused."""
    try:
        return _install_complete(install=install, proof=proof, api_credentials=api_credentials)
    except IntegrityError:
        # Another proof of the same shop committed first: that one is connected.
        shop_install_refused(install=install, outcome="connected_already")
        raise ShopRefused(_("This shop is connected already.")) from None


def _install_complete(*, install: ShopInstall, proof: str, api_credentials: str) -> ShopConnection:
    with transaction.atomic(durable=True):
        install = ShopInstall.objects.select_for_update().get(pk=install.pk)
        if install.connection_id:
            return install.connection
        current = (
            ShopConnection.objects.select_for_update()
            .filter(kind=install.kind, domain=install.domain, disconnected_at__isnull=True)
            .first()
        )
        if current is not None and current.proven_at is not None:
            install.outcome = "connected_already"
            install.save(update_fields=["outcome"])
            raise ShopRefused(_("This shop is connected already."))
        now = timezone.now()
        if current is not None and current.brand_id == install.brand_id:
            # The brand proves its own earlier connection: the same webhook address goes on.
            connection = current
        else:
            if current is not None:
                current.disconnected_at, current.retired_reason = now, "taken_over"
                current.save(update_fields=["disconnected_at", "retired_reason"])
                shop_taken_over_tell(shop=current)
            connection = ShopConnection(brand=install.brand, kind=install.kind, domain=install.domain)
            connection.claim_key = secrets.token_urlsafe(24)
        connection.webhook_secret = install.webhook_secret
        connection.campaign = install.campaign
        connection.proven_at, connection.proof, connection.api_credentials = now, proof, api_credentials
        connection.save()
        install.connection, install.outcome = connection, "connected"
        install.save(update_fields=["connection", "outcome"])
    return connection


def shop_taken_over_tell(*, shop: ShopConnection) -> None:
    """Tell the retired connection's brand owners that the shop's proven owner connected it: a
    message sent by the payouts app, which sends every message (named, not imported), after commit."""
    brand = live_brand_of(shop.brand)
    enqueue_on_commit("payouts.tasks.shop_taken_over_notify_task", brand.pk, shop.pk, shop.domain)


def shop_disconnect(*, shop: ShopConnection) -> None:
    """Deliveries are refused from now on; orders already recorded keep their cashback."""
    ShopConnection.objects.filter(pk=shop.pk, disconnected_at__isnull=True).update(
        disconnected_at=timezone.now()
    )


def shop_order_key(*, shop: ShopConnection, order_id: str) -> str:
    """The purchase's order id: the shop's own order id within the shop (two stores of one brand
    may both have an order 1001)."""
    return f"{shop.kind}:{shop.domain}:{order_id}"[:100]


def shop_delivery_store(*, shop: ShopConnection, delivery: Delivery) -> int | None:
    """Store a verified delivery unless its event was stored before (a retry, a duplicate): its id,
    or None. Stored once per event the delivery reports (Delivery.event_key), not per delivery id:
    WooCommerce gives two deliveries within one second the same id. One statement; the standing
    worker processes it. Only what the cashback needs is kept, not the shop's whole order (the
    buyer's address, the items)."""
    payload = {
        "connection": shop.pk,
        "topic": delivery.topic,
        "delivery_id": delivery.delivery_id,
        "order": delivery.order.as_dict(),
    }
    key = delivery.event_key or delivery.delivery_id
    new = provider_events_store(provider=shop.kind, events=[(f"{shop.pk}:{key}"[:200], payload)])
    if not new:
        logger.info(
            "%s delivery %s for %s: its event was stored before", shop.kind, delivery.delivery_id, key
        )
    return new[0] if new else None


@contextmanager
def _order_lock(order_key: str):
    """One worker at a time per order (a session lock: the cashback engine commits on its own), so
    a refund and its payment processed at once cannot both miss each other."""
    sql.order_lock_take(order_key)
    try:
        yield
    finally:
        sql.order_lock_release(order_key)


def _refunds_before(*, event: ProviderEvent, shop: ShopConnection, order: ShopOrder) -> list[dict]:
    """The order's refunds processed before its payment, as their deliveries said them."""
    return [
        payload["order"]
        for payload in ProviderEvent.objects.filter(
            provider=event.provider,
            payload__connection=shop.pk,
            payload__order__order_id=order.order_id,
            payload__order__action=REFUND,
            processed_at__isnull=False,
        ).values_list("payload", flat=True)
    ]


def shop_event_process(*, event_id: int) -> str:
    """A stored delivery becomes a purchase, a refund, or nothing; the outcome is kept on the row."""
    event = ProviderEvent.objects.get(pk=event_id)
    shop = ShopConnection.objects.select_related("brand").get(pk=event.payload["connection"])
    order = ShopOrder(**event.payload["order"])
    if order.test and shop.brand.livemode:
        # A test order (Shopify's test gateway) never earns live money; the row says why.
        outcome = "test_order_refused"
    elif order.action not in (PAID, REFUND):
        outcome = "ignored"
    else:
        outcome = ""
    if outcome:
        provider_event_processed(event_id=event.pk, outcome=outcome)
        return outcome
    key = shop_order_key(shop=shop, order_id=order.order_id)
    with _order_lock(key):
        outcome = _paid(event, shop, order, key) if order.action == PAID else _refund(shop, order, key)
        # Marked inside the lock: a payment processed next must see this refund.
        provider_event_processed(event_id=event.pk, outcome=outcome)
    logger.info("%s delivery %s: %s", shop.kind, event.event_id, outcome)
    return outcome


def _paid(event: ProviderEvent, shop: ShopConnection, order: ShopOrder, key: str) -> str:
    before = _refunds_before(event=event, shop=shop, order=order)
    refunds = dict(order.refunds)
    for refund in before:
        refunds.update(dict(refund.get("refunds") or ()))
    if any(not refund.get("refunds") for refund in before) or sum(refunds.values()) >= order.amount:
        return "refunded_before_payment"  # taken back whole
    customer = Customer(
        id=f"{shop.kind}:{order.customer_id}" if order.customer_id else "",
        email=order.email,
        phone=order.phone,
    )
    try:
        _claim, created = purchase_record(
            brand=shop.brand,
            order_id=key,
            amount=order.amount,
            currency=order.currency,
            customer=customer,
            campaign_id=shop.campaign_id,
            products=list(order.products),
            referral=Referral(
                codes=tuple(order.referral_codes), click=order.referral_click, source=order.source
            ),
            address_hash=order.address_hash,
        )
    except CashbackError as refusal:
        return refusal.code
    # Partial refunds the order lists, or that came before it: the cashback is what is kept.
    if refunds:
        outcome = _refund(
            shop, ShopOrder(REFUND, order_id=order.order_id, refunds=tuple(refunds.items())), key
        )
        if not created or outcome != "partially_refunded":
            return outcome
    return "purchase_recorded" if created else "purchase_known"


def _refund(shop: ShopConnection, order: ShopOrder, key: str) -> str:
    refunds = {str(refund_id): int(amount) for refund_id, amount in order.refunds} if order.refunds else None
    try:
        purchase_refund(brand=shop.brand, order_id=key, reason=order.reason, refunds=refunds)
        whole = Purchase.objects.filter(brand=shop.brand, order_id=key, status=PurchaseStatus.REFUNDED)
        if refunds is not None and not whole.exists():
            return "partially_refunded"
    except CashbackError as refusal:
        # No purchase yet: the payment is on its way or was never made. This row, processed,
        # is what stops the payment from earning cashback when it comes.
        return "refund_before_payment" if refusal.code == "order_unknown" else refusal.code
    return "refunded"


def claim_signature(*, shop: ShopConnection, order_id: str) -> str:
    """hex HMAC-SHA256(claim key, the shop's order id): what the shop's mail template computes."""
    return hmac.new(shop.claim_key.encode(), str(order_id).encode(), hashlib.sha256).hexdigest()


def shop_claim_purchase(*, shop: ShopConnection, order_id: str, signature: str) -> Purchase | None:
    """The purchase a claim link names, if the link was signed for it; None otherwise (not
    recorded yet, or a made-up link: the page says the same for both)."""
    if not hmac.compare_digest(claim_signature(shop=shop, order_id=order_id), signature):
        return None
    key = shop_order_key(shop=shop, order_id=order_id)
    return Purchase.objects.filter(brand_id=shop.brand_id, order_id=key).select_related("identity").first()


EVENT_PROCESSORS[ShopKind.SHOPIFY] = shop_event_process
EVENT_PROCESSORS[ShopKind.WOOCOMMERCE] = shop_event_process
