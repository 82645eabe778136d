"""The brand dashboard's developer pages: API keys and webhook endpoints of the Cashback API.

Owners manage them; every other member may look (secrets are never shown to them)."""

from django import forms
from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from campaigns import roles
from campaigns.access import brand_member_required
from campaigns.modes import live_key_refusal
from campaigns.services.twin_start import twin_cashback_campaign_ensure
from joyback.api.keys import ApiKeyError, api_key_create, api_key_revoke, api_key_rotate
from joyback.api.models import EventType, Scope
from joyback.api.selectors import (
    api_key_get_for_brand,
    api_keys_for_brand,
    webhook_deliveries_for_endpoint,
    webhook_delivery_get_for_brand,
    webhook_endpoint_get_for_brand,
    webhook_endpoints_for_brand,
)
from joyback.api.webhooks.delivery import webhook_redeliver
from joyback.api.webhooks.endpoints import (
    WebhookError,
    webhook_endpoint_create,
    webhook_endpoint_update,
    webhook_secret_rotate,
)
from joyback.mfa import reauthentication_required


class ApiKeyForm(forms.Form):
    name = forms.CharField(label=gettext_lazy("Name"), max_length=80, initial="Shop backend")
    scopes = forms.MultipleChoiceField(
        label=gettext_lazy("Scopes"),
        choices=Scope.choices,
        widget=forms.CheckboxSelectMultiple,
        initial=[Scope.READ, Scope.EVENTS],
    )


class RotateForm(forms.Form):
    grace_hours = forms.IntegerField(
        label=gettext_lazy("Keep the old one working for (hours)"), min_value=0, max_value=168, initial=24
    )


class WebhookEndpointForm(forms.Form):
    url = forms.URLField(label=gettext_lazy("Endpoint URL"), max_length=500, assume_scheme="https")
    event_types = forms.MultipleChoiceField(
        label=gettext_lazy("Events"), choices=EventType.choices, widget=forms.CheckboxSelectMultiple
    )
    enabled = forms.BooleanField(label=gettext_lazy("Enabled"), required=False, initial=True)


def _developers_page(request, *, key_form=None, endpoint_form=None, new_secret=None, status=200):
    brand_id = request.brand.pk
    context = {
        "brand": request.brand,
        "membership": request.membership,
        "roles": roles,
        "keys": api_keys_for_brand(brand_id=brand_id),
        "endpoints": webhook_endpoints_for_brand(brand_id=brand_id),
        "key_form": key_form or ApiKeyForm(),
        "rotate_form": RotateForm(),
        "endpoint_form": endpoint_form or WebhookEndpointForm(initial={"enabled": True}),
        "new_secret": new_secret,
        "live_key_refusal": live_key_refusal(brand=request.brand),
    }
    return render(request, "campaigns/developers.html", context, status=status)


@brand_member_required()
def developers(request):
    return _developers_page(request)


@brand_member_required(roles.MANAGE_API)
@require_POST
@reauthentication_required
def api_key_new(request):
    form = ApiKeyForm(request.POST)
    if not form.is_valid():
        return _developers_page(request, key_form=form, status=400)
    refusal = live_key_refusal(brand=request.brand)
    if refusal:
        form.add_error(None, refusal)
        return _developers_page(request, key_form=form, status=400)
    try:
        issued = api_key_create(
            brand_id=request.brand.pk,
            name=form.cleaned_data["name"],
            scopes=form.cleaned_data["scopes"],
            created_by=request.user,
        )
    except ApiKeyError as error:
        form.add_error(None, str(error))
        return _developers_page(request, key_form=form, status=400)
    if not request.brand.livemode:
        # The quickstart's first purchase needs a live campaign to earn on: a test key brings one.
        twin_cashback_campaign_ensure(brand=request.brand)
    # Shown in this answer only: it is stored as a hash.
    return _developers_page(request, new_secret=issued)


@brand_member_required(roles.MANAGE_API)
@require_POST
@reauthentication_required
def api_key_rotate_view(request, key_id: int):
    api_key = api_key_get_for_brand(brand_id=request.brand.pk, key_id=key_id)
    if api_key is None:
        raise Http404
    form = RotateForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("The grace period is between 0 and 168 hours."))
        return redirect("developers", brand_slug=request.brand.slug)
    refusal = live_key_refusal(brand=request.brand)
    if refusal:
        messages.error(request, refusal)
        return redirect("developers", brand_slug=request.brand.slug)
    try:
        issued = api_key_rotate(
            api_key=api_key, grace_hours=form.cleaned_data["grace_hours"], created_by=request.user
        )
    except ApiKeyError as error:
        messages.error(request, str(error))
        return redirect("developers", brand_slug=request.brand.slug)
    return _developers_page(request, new_secret=issued)


@brand_member_required(roles.MANAGE_API)
@require_POST
@reauthentication_required
def api_key_revoke_view(request, key_id: int):
    api_key = api_key_get_for_brand(brand_id=request.brand.pk, key_id=key_id)
    if api_key is None:
        raise Http404
    api_key_revoke(api_key=api_key)
    messages.success(request, _("The key %(prefix)s no longer works.") % {"prefix": api_key.prefix})
    return redirect("developers", brand_slug=request.brand.slug)


@brand_member_required(roles.MANAGE_API)
@require_POST
@reauthentication_required
def webhook_endpoint_new(request):
    form = WebhookEndpointForm(request.POST)
    if not form.is_valid():
        return _developers_page(request, endpoint_form=form, status=400)
    try:
        endpoint = webhook_endpoint_create(
            brand_id=request.brand.pk,
            url=form.cleaned_data["url"],
            event_types=form.cleaned_data["event_types"],
        )
    except WebhookError as error:
        form.add_error("url", str(error))
        return _developers_page(request, endpoint_form=form, status=400)
    return redirect("webhook_endpoint", brand_slug=request.brand.slug, endpoint_id=endpoint.pk)


def _endpoint_page(request, endpoint, *, form=None, status=200):
    context = {
        "brand": request.brand,
        "membership": request.membership,
        "roles": roles,
        "endpoint": endpoint,
        "deliveries": webhook_deliveries_for_endpoint(endpoint=endpoint),
        "form": form
        or WebhookEndpointForm(
            initial={"url": endpoint.url, "event_types": endpoint.event_types, "enabled": endpoint.enabled}
        ),
        "rotate_form": RotateForm(),
    }
    return render(request, "campaigns/webhook_endpoint.html", context, status=status)


@brand_member_required()
def webhook_endpoint(request, endpoint_id: int):
    endpoint = webhook_endpoint_get_for_brand(brand_id=request.brand.pk, endpoint_id=endpoint_id)
    if endpoint is None:
        raise Http404
    return _endpoint_page(request, endpoint)


@brand_member_required(roles.MANAGE_API)
@require_POST
@reauthentication_required
def webhook_endpoint_edit(request, endpoint_id: int):
    endpoint = webhook_endpoint_get_for_brand(brand_id=request.brand.pk, endpoint_id=endpoint_id)
    if endpoint is None:
        raise Http404
    form = WebhookEndpointForm(request.POST)
    if not form.is_valid():
        return _endpoint_page(request, endpoint, form=form, status=400)
    try:
        webhook_endpoint_update(endpoint=endpoint, **form.cleaned_data)
    except WebhookError as error:
        form.add_error("url", str(error))
        return _endpoint_page(request, endpoint, form=form, status=400)
    messages.success(request, _("Saved."))
    return redirect("webhook_endpoint", brand_slug=request.brand.slug, endpoint_id=endpoint.pk)


@brand_member_required(roles.MANAGE_API)
@require_POST
@reauthentication_required
def webhook_secret_rotate_view(request, endpoint_id: int):
    endpoint = webhook_endpoint_get_for_brand(brand_id=request.brand.pk, endpoint_id=endpoint_id)
    if endpoint is None:
        raise Http404
    form = RotateForm(request.POST)
    if form.is_valid():
        webhook_secret_rotate(endpoint=endpoint, grace_hours=form.cleaned_data["grace_hours"])
        messages.success(request, _("New signing secret made; both sign deliveries during the grace period."))
    else:
        messages.error(request, _("The grace period is between 0 and 168 hours."))
    return redirect("webhook_endpoint", brand_slug=request.brand.slug, endpoint_id=endpoint.pk)


@brand_member_required(roles.MANAGE_API)
@require_POST
@reauthentication_required
def webhook_redeliver_view(request, delivery_id: int):
    delivery = webhook_delivery_get_for_brand(brand_id=request.brand.pk, delivery_id=delivery_id)
    if delivery is None:
        raise Http404
    webhook_redeliver(delivery=delivery)
    messages.success(request, _("Sent again; the attempt appears in the log."))
    return redirect("webhook_endpoint", brand_slug=request.brand.slug, endpoint_id=delivery.endpoint_id)
