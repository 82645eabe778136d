"""Shop connectors: the shops' webhook intake, the buyer's claim link, and the brand's pages."""

import json
import logging

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, HttpResponseBadRequest, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from campaigns import roles
from campaigns.access import brand_member_required
from verification.connectors import (
    ShopRefused,
    shop_claim_purchase,
    shop_connect,
    shop_delivery_store,
    shop_disconnect,
)
from verification.forms import ShopConnectForm
from verification.providers.shops import DELIVERY_READERS, SIGNATURE_HEADER, DeliveryInvalid, signature_valid
from verification.selectors import (
    shop_connections_for_brand,
    shop_deliveries_recent,
    shop_get_connected,
    shop_get_for_brand,
    shop_order_purchases,
)
from verification.sessions import browser_participant_set

logger = logging.getLogger(__name__)


@csrf_exempt
@require_POST
def shop_webhook(request, public_id):
    """A shop's order webhook: verified against the connection's secret, stored once per delivery
    id (a retry is answered 200 and not stored again), processed by the standing worker."""
    shop = shop_get_connected(public_id=public_id)
    if shop is None:
        raise Http404("No such shop connection")
    header = request.headers.get(SIGNATURE_HEADER[shop.kind], "")
    if not signature_valid(body=request.body, header=header, secret=shop.webhook_secret):
        if shop.kind == "woocommerce" and request.body.startswith(b"webhook_id="):
            return HttpResponse("ok")  # WooCommerce's ping when the webhook is saved: unsigned, no order
        logger.warning("%s webhook for %s refused: bad or missing signature", shop.kind, shop.domain)
        return HttpResponse("signature does not verify", status=401, content_type="text/plain")
    try:
        payload = json.loads(request.body)
        if not isinstance(payload, dict):
            raise DeliveryInvalid("the body is not a JSON object")
        delivery = DELIVERY_READERS[shop.kind](headers=request.headers, payload=payload, domain=shop.domain)
    except (ValueError, DeliveryInvalid) as error:
        logger.warning("%s webhook for %s refused: %s", shop.kind, shop.domain, error)
        return HttpResponseBadRequest(str(error), content_type="text/plain")
    shop_delivery_store(shop=shop, delivery=delivery)
    return HttpResponse("ok")


@require_GET
def shop_claim(request, public_id, order_id, signature):
    """The link in the shop's order mail: the buyer becomes, in this browser, the person the
    order's cashback belongs to, and gives their bank details for it."""
    shop = shop_get_connected(public_id=public_id)
    purchase = shop_claim_purchase(shop=shop, order_id=order_id, signature=signature) if shop else None
    if purchase is None:
        # Not recorded yet (the shop's webhook may be on its way) or not a link we signed.
        return render(request, "verification/shop_claim_waiting.html", {"shop": shop}, status=404)
    # The link is the buyer's claim: it lets this browser give bank details the first time.
    # Details already on file change only with a code sent to the person (payouts.payees.changes),
    # so a forwarded order mail can redirect nothing.
    browser_participant_set(request, purchase.identity.participant)
    return HttpResponseRedirect(reverse("payouts:payee", args=[shop.campaign.slug]))


def claim_link_template(request, shop) -> dict:
    """The claim link the shop's order mail carries, in each shop's template language."""
    base = request.build_absolute_uri(
        reverse("verification:shop_claim", args=[shop.public_id, "ORDER", "SIG"])
    )
    before, _order, rest = base.partition("ORDER")
    between, _sig, after = rest.partition("SIG")
    if shop.kind == "shopify":
        liquid = f'{{{{ order.id | hmac_sha256: "{shop.claim_key}" }}}}'
        return {
            "template": f"{before}{{{{ order.id }}}}{between}{liquid}{after}",
            "language": "Liquid (Settings → Notifications → Order confirmation)",
        }
    php = f"hash_hmac('sha256', (string) $order->get_id(), '{shop.claim_key}')"
    return {
        "template": f"{before}<?php echo $order->get_id(); ?>{between}<?php echo {php}; ?>{after}",
        "language": "PHP (woocommerce/emails/customer-processing-order.php in your theme)",
    }


@brand_member_required()
@require_http_methods(["GET", "POST"])
def shops(request):
    form = ShopConnectForm(request.POST or None, brand=request.brand)
    if request.method == "POST":
        if request.membership.role not in roles.MANAGE_API:
            raise PermissionDenied("Your role in this brand does not allow this.")
        if form.is_valid():
            try:
                shop = shop_connect(brand=request.brand, **form.cleaned_data)
            except ShopRefused as refusal:
                form.add_error("domain", str(refusal))
            else:
                messages.success(request, _("Connected. Now add the webhooks in your shop, as shown below."))
                return redirect("verification:shop_detail", brand_slug=request.brand.slug, shop_id=shop.pk)
    context = {
        "brand": request.brand,
        "membership": request.membership,
        "roles": roles,
        "form": form,
        "shops": shop_connections_for_brand(brand=request.brand),
    }
    return render(request, "verification/shops.html", context, status=400 if form.errors else 200)


@brand_member_required()
@require_GET
def shop_detail(request, shop_id):
    shop = shop_get_for_brand(brand=request.brand, shop_id=shop_id)
    if shop is None:
        raise Http404("No such shop")
    context = {
        "brand": request.brand,
        "membership": request.membership,
        "roles": roles,
        "shop": shop,
        "webhook_url": request.build_absolute_uri(
            reverse("verification:shop_webhook", args=[shop.public_id])
        ),
        "claim_link": claim_link_template(request, shop),
        "topics": SHOP_TOPICS[shop.kind],
        "deliveries": shop_deliveries_recent(shop=shop),
        "purchases": shop_order_purchases(shop=shop),
        "sandbox": settings.SANDBOX,
    }
    return render(request, "verification/shop_detail.html", context)


SHOP_TOPICS = {
    "shopify": ["orders/paid", "orders/cancelled", "refunds/create"],
    "woocommerce": ["order.created", "order.updated", "order.deleted"],
}


@brand_member_required(roles.MANAGE_API)
@require_POST
def shop_disconnect_view(request, shop_id):
    shop = shop_get_for_brand(brand=request.brand, shop_id=shop_id)
    if shop is None:
        raise Http404("No such shop")
    shop_disconnect(shop=shop)
    messages.success(request, _("Disconnected: the shop's webhooks are refused from now on."))
    return redirect("verification:shops", brand_slug=request.brand.slug)
