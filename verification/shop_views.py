"""Shop connectors: the shops' webhook intake, the buyer's claim link, and the brand's pages."""

import json
import logging

from allauth.core.exceptions import ReauthenticationRequired
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, HttpResponseBadRequest, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from campaigns import roles
from campaigns.access import brand_member_required
from campaigns.models import Membership
from campaigns.modes import live_brand_of, test_slug
from joyback.mfa import recently_authenticated
from joyback.modes import provider_routed_for
from verification.connectors import (
    ShopRefused,
    shop_claim_purchase,
    shop_delivery_store,
    shop_disconnect,
    shop_install_complete,
    shop_install_pending,
    shop_install_refused,
    shop_install_start,
)
from verification.forms import ShopConnectForm
from verification.models import ShopInstall
from verification.providers.shop_auth import (
    ShopAuthFailed,
    shopify_access_token,
    shopify_authorize_url,
    shopify_callback_verify,
    woocommerce_authorize_url,
    woocommerce_key_verify,
)
from verification.providers.shops import DELIVERY_READERS, SIGNATURE_HEADER, DeliveryInvalid, signature_valid
from verification.selectors import (
    shop_connections_for_brand,
    shop_connections_retired,
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


@brand_member_required(money=True)
@require_http_methods(["GET", "POST"])
def shops(request):
    """The brand's shops; an owner connects one here by proving it in the shop itself: with the
    second factor set up and the password asked again, they are sent to install our Shopify app or
    approve a WooCommerce key, and the shop's answer connects it."""
    form = ShopConnectForm(request.POST or None, brand=request.brand)
    if request.method == "POST":
        if request.membership.role not in roles.MANAGE_API:
            raise PermissionDenied("Your role in this brand does not allow this.")
        if not recently_authenticated(request):
            raise ReauthenticationRequired()
        if form.is_valid():
            try:
                install = shop_install_start(brand=request.brand, user=request.user, **form.cleaned_data)
            except ShopRefused as refusal:
                form.add_error("domain", str(refusal))
            else:
                return HttpResponseRedirect(_authorize_url(request, install))
    context = {
        "brand": request.brand,
        "membership": request.membership,
        "roles": roles,
        "form": form,
        "shops": shop_connections_for_brand(brand=request.brand),
        "retired": shop_connections_retired(brand=request.brand),
    }
    return render(request, "verification/shops.html", context, status=400 if form.errors else 200)


def _authorize_url(request, install) -> str:
    # A test brand's install goes to the sandbox shops, never to a real shop (joyback.modes).
    with provider_routed_for(livemode=install.brand.livemode):
        if install.kind == "shopify":
            return shopify_authorize_url(
                domain=install.domain,
                state=install.state,
                redirect_uri=request.build_absolute_uri(reverse("verification:shopify_callback")),
            )
        return woocommerce_authorize_url(
            domain=install.domain,
            state=install.state,
            return_url=request.build_absolute_uri(reverse("verification:woocommerce_return")),
            callback_url=request.build_absolute_uri(reverse("verification:woocommerce_callback")),
        )


def _brand_slug(brand) -> str:
    return brand.slug if brand.livemode else test_slug(live_brand_of(brand))


def _install_for_user(request, *, kind: str, state: str):
    """The pending install the shop's answer names, if it is this owner's and they still own the brand."""
    install = shop_install_pending(kind=kind, state=state)
    if install is None or install.user_id != request.user.pk:
        return None
    owner = Membership.objects.filter(
        brand=live_brand_of(install.brand), user=request.user, role__in=roles.MANAGE_API
    ).exists()
    return install if owner else None


def _install_failed(request, status=400):
    return render(request, "verification/shop_install_failed.html", status=status)


def _connected(request, install, connection):
    messages.success(request, _("Connected. Now add the webhooks in your shop, as shown below."))
    return redirect("verification:shop_detail", brand_slug=_brand_slug(install.brand), shop_id=connection.pk)


@login_required
@require_GET
def shopify_callback(request):
    """Shopify sends the owner back here once they installed our app on their shop."""
    params = request.GET.dict()
    install = _install_for_user(request, kind="shopify", state=params.get("state", ""))
    if install is None:
        return _install_failed(request)
    try:
        shop = shopify_callback_verify(params=params)
        if shop != install.domain:
            raise ShopAuthFailed(f"installed on {shop}, not {install.domain}")
        with provider_routed_for(livemode=install.brand.livemode):
            token = shopify_access_token(domain=shop, code=params.get("code", ""))
    except ShopAuthFailed as failure:
        logger.warning("Shopify install of %s refused: %s", install.domain, failure)
        shop_install_refused(install=install, outcome="proof_refused")
        return _install_failed(request)
    try:
        connection = shop_install_complete(install=install, proof="shopify_oauth", api_credentials=token)
    except ShopRefused as refusal:
        messages.error(request, str(refusal))
        return redirect("verification:shops", brand_slug=_brand_slug(install.brand))
    return _connected(request, install, connection)


@csrf_exempt
@require_POST
def woocommerce_callback(request):
    """The store POSTs the key its admin just approved. It counts once the store's REST API takes it."""
    try:
        key = json.loads(request.body)
        state, consumer_key, consumer_secret = (
            str(key["user_id"]),
            str(key["consumer_key"]),
            str(key["consumer_secret"]),
        )
    except (ValueError, KeyError, TypeError):
        return HttpResponseBadRequest("expected the key as WooCommerce posts it", content_type="text/plain")
    install = shop_install_pending(kind="woocommerce", state=state)
    if install is None:
        return HttpResponseBadRequest("no such authorization", content_type="text/plain")
    try:
        with provider_routed_for(livemode=install.brand.livemode):
            woocommerce_key_verify(
                domain=install.domain, consumer_key=consumer_key, consumer_secret=consumer_secret
            )
    except ShopAuthFailed as failure:
        logger.warning("WooCommerce key for %s refused: %s", install.domain, failure)
        shop_install_refused(install=install, outcome="proof_refused")
        return HttpResponseBadRequest("the key does not work on this store", content_type="text/plain")
    try:
        shop_install_complete(
            install=install,
            proof="woocommerce_key",
            api_credentials=json.dumps({"consumer_key": consumer_key, "consumer_secret": consumer_secret}),
        )
    except ShopRefused:
        return HttpResponse("connected already", status=409, content_type="text/plain")
    return HttpResponse("ok", content_type="text/plain")


@login_required
@require_GET
def woocommerce_return(request):
    """The store sends the owner back here; its callback has connected the shop, or not."""
    state = request.GET.get("user_id", "")
    install = (
        ShopInstall.objects.filter(kind="woocommerce", state=state, user=request.user).first()
        if state
        else None
    )
    if install is None:
        return _install_failed(request)
    if install.connection_id:
        return _connected(request, install, install.connection)
    if request.GET.get("success") == "0":
        messages.error(request, _("The store was not connected: the key was not approved."))
    else:
        messages.error(request, _("The store did not send us its key. Connect it again."))
    return redirect("verification:shops", brand_slug=_brand_slug(install.brand))


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
