"""The brand's audience pages: who agreed to hear from it again (filters, pages, a CSV of the people
whose consent is in force, each export recorded), its WhatsApp template sends and its CRM sync.
Marketers and owners see contacts and send; a viewer and finance see the counts only."""

from datetime import timedelta
from urllib.parse import urlencode

from allauth.core.exceptions import ReauthenticationRequired
from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from campaigns import roles
from campaigns.access import brand_member_required
from campaigns.models import Campaign, ConsentChannel
from campaigns.overview import overview_window
from joyback.mfa import recently_authenticated
from joyback.ratelimit import client_address, rate_limit_hit
from joyback.tables import DateRangeForm, csv_response, csv_when, table_context, table_render
from payouts.audience import broadcasts, crm, email_optin
from payouts.audience.rates import RATES_CURRENCY, RATES_DATE, RATES_SOURCE, micros_to_cents
from payouts.audience.selectors import (
    audience_counts,
    audience_export_rows,
    audience_exports_recent,
    audience_growth,
    audience_purchases,
    audience_rows,
    broadcast_get,
    broadcast_results,
    broadcasts_for_brand,
)
from payouts.audience.services import audience_export_record
from payouts.links import status_page_path
from payouts.models import CrmConnection, WhatsAppTemplate
from payouts.models.audience import CrmKind
from verification.models import ConsentAction
from verification.selectors import participant_get_by_token


class AudienceFilterForm(DateRangeForm):
    campaign = forms.TypedChoiceField(
        label=gettext_lazy("Campaign"), coerce=int, required=False, empty_value=None
    )
    channel = forms.ChoiceField(
        label=gettext_lazy("Channel"),
        required=False,
        choices=[("", gettext_lazy("Any channel")), *ConsentChannel.choices],
    )
    state = forms.ChoiceField(
        label=gettext_lazy("Consent"),
        required=False,
        choices=[("", gettext_lazy("Any")), *ConsentAction.choices],
    )
    field_order = ["q", "campaign", "channel", "state", "start", "end"]

    def __init__(self, data, *, brand):
        super().__init__(data)
        campaigns = Campaign.objects.filter(brand=brand).order_by("-created_at").values_list("pk", "name")
        self.fields["campaign"].choices = [("", gettext_lazy("All campaigns")), *campaigns]

    def filters(self) -> dict:
        found = super().filters()
        if "start" in found:
            found["since"] = self.since(found.pop("start"))
        if "end" in found:
            found["until"] = self.until(found.pop("end"))
        return found


def _growth(brand) -> dict:
    """Consents given and stopped over the last 30 days."""
    until = timezone.now()
    days = audience_growth(brand=brand, since=until - timedelta(days=30), until=until)
    return {
        "given": sum(day["given"] for day in days.values()),
        "withdrawn": sum(day["withdrawn"] for day in days.values()),
    }


def _sees_contacts(request) -> bool:
    return request.membership.role in roles.EDIT_CAMPAIGNS


@brand_member_required()
@require_GET
def audience(request):
    form = AudienceFilterForm(request.GET, brand=request.brand)
    rows = audience_rows(brand=request.brand, filters=form.filters())
    context = {
        "brand": request.brand,
        "membership": request.membership,
        "roles": roles,
        "counts": audience_counts(brand=request.brand),
        "growth": _growth(request.brand),
        "purchases": audience_purchases(brand=request.brand),
        "sees_contacts": _sees_contacts(request),
        "exports": audience_exports_recent(brand=request.brand) if _sees_contacts(request) else [],
        **table_context(request, form=form, rows=rows, url_name="payouts:audience"),
    }
    if not context["sees_contacts"]:
        context["page"] = None
    return table_render(request, "payouts/audience/audience.html", context)


@brand_member_required(roles.EDIT_CAMPAIGNS)
@require_GET
def audience_csv(request):
    """The people whose consent is in force, with the filters; the export is recorded first."""
    form = AudienceFilterForm(request.GET, brand=request.brand)
    filters = form.filters()
    rows = audience_export_rows(brand=request.brand, filters=filters)
    audience_export_record(brand=request.brand, user=request.user, filters=filters, people=rows.count())
    header = [
        _("Contact"),
        _("Channel"),
        _("Consented at"),
        _("Campaign"),
        _("Wording"),
        _("Language"),
        _("Proof"),
    ]
    lines = (
        [
            ("+" + row.identity.subject) if row.channel == ConsentChannel.WHATSAPP else row.identity.subject,
            row.get_channel_display(),
            csv_when(row.at),
            row.campaign.name if row.campaign else "",
            row.text,
            row.language,
            row.proof,
        ]
        for row in rows.iterator(chunk_size=500)
    )
    return csv_response(filename=f"{request.brand.slug}-audience.csv", header=header, rows=lines)


class BroadcastForm(forms.Form):
    template = forms.ChoiceField(label=gettext_lazy("Template"))
    campaign = forms.TypedChoiceField(
        label=gettext_lazy("Audience"), coerce=int, required=False, empty_value=None
    )
    parameters = forms.CharField(
        label=gettext_lazy("The template's values, one per line"),
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
    )
    send_at = forms.DateTimeField(
        label=gettext_lazy("Send at"),
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
        required=False,
    )

    def __init__(self, data=None, *, brand, templates):
        super().__init__(data)
        self.fields["template"].choices = [(name, name) for name in templates]
        campaigns = Campaign.objects.filter(brand=brand).order_by("-created_at").values_list("pk", "name")
        self.fields["campaign"].choices = [("", gettext_lazy("Everyone who agreed")), *campaigns]


@brand_member_required()
@require_http_methods(["GET", "POST"])
def broadcast_list(request):
    """The brand's sends, the approved templates and a new send: planned (cost, tier, skipped)
    before it is confirmed."""
    account = broadcasts.whatsapp_account_for(brand=request.brand)
    templates = broadcasts.templates_sendable(brand=request.brand)
    data = (request.POST or request.GET).copy()
    chosen = data.get("template", "")
    if chosen.isdigit():
        # A template chosen by its id: only one of the brand's own account's (another brand's
        # is not there for it).
        template = WhatsAppTemplate.objects.filter(
            pk=int(chosen), brand=request.brand, waba_id=account.waba_id if account else "-"
        ).first()
        if template is None:
            raise Http404("No such template")
        data["template"] = template.name
    form = BroadcastForm(data or None, brand=request.brand, templates=templates)
    plan = None
    if request.method == "POST" or "template" in request.GET:
        if request.membership.role not in roles.EDIT_CAMPAIGNS:
            raise PermissionDenied("Your role in this brand does not allow this.")
        if account is None:
            form.add_error(None, str(broadcasts.NOT_CONNECTED))
        elif form.is_valid():
            data = form.cleaned_data
            try:
                if request.method == "POST" and request.POST.get("confirm"):
                    broadcast = broadcasts.broadcast_create(
                        brand=request.brand,
                        user=request.user,
                        template_name=data["template"],
                        parameters=data["parameters"].splitlines(),
                        send_at=data["send_at"] or timezone.now(),
                        campaign_id=data["campaign"],
                    )
                    messages.success(
                        request, _("Scheduled. It goes out at the tier's pace from the time you chose.")
                    )
                    return redirect(
                        "payouts:broadcast_detail", brand_slug=request.brand.slug, broadcast_id=broadcast.pk
                    )
                plan = broadcasts.broadcast_plan(
                    brand=request.brand, template_name=data["template"], campaign_id=data["campaign"]
                )
            except broadcasts.BroadcastRefused as refusal:
                form.add_error(None, str(refusal))
    context = {
        "brand": request.brand,
        "membership": request.membership,
        "roles": roles,
        "form": form,
        "account": account,
        "templates": templates,
        "plan": plan,
        "plan_rows": _plan_rows(plan) if plan else [],
        "skip_rows": _skip_rows(plan) if plan else [],
        "plan_cost_cents": micros_to_cents(plan.cost_micros) if plan else 0,
        "rates": {"date": RATES_DATE, "source": RATES_SOURCE, "currency": RATES_CURRENCY},
        "sends": broadcasts_for_brand(brand=request.brand)[:20],
    }
    return render(request, "payouts/audience/broadcasts.html", context, status=400 if form.errors else 200)


def _plan_rows(plan):
    return sorted(
        (
            (country or "?", people, micros_to_cents(micros))
            for country, (people, micros) in plan.by_country.items()
        ),
        key=lambda row: -row[1],
    )


def _skip_rows(plan):
    counts = {}
    for _participant, _identity, reason in plan.skipped:
        counts[reason] = counts.get(reason, 0) + 1
    return [(broadcasts.skip_reason_text(reason), n) for reason, n in sorted(counts.items())]


@brand_member_required(roles.EDIT_CAMPAIGNS)
@require_POST
def templates_sync_view(request):
    try:
        found = broadcasts.templates_sync(brand=request.brand)
    except broadcasts.BroadcastRefused as refusal:
        messages.error(request, str(refusal))
    except Exception:  # the provider's answer, whatever it was: said, nothing changed
        messages.error(
            request, _("WhatsApp did not answer; the templates were not synced. Try again in a minute.")
        )
    else:
        messages.success(request, _("%(n)s templates synced from WhatsApp.") % {"n": found})
    return redirect("payouts:broadcasts", brand_slug=request.brand.slug)


@brand_member_required()
@require_http_methods(["GET", "POST"])
def broadcast_detail(request, broadcast_id):
    broadcast = broadcast_get(brand=request.brand, broadcast_id=broadcast_id)
    if broadcast is None:
        raise Http404("No such send")
    if request.method == "POST":
        if request.membership.role not in roles.EDIT_CAMPAIGNS:
            raise PermissionDenied("Your role in this brand does not allow this.")
        try:
            broadcasts.broadcast_cancel(broadcast=broadcast)
            messages.success(request, _("Cancelled: nobody is sent this template."))
        except broadcasts.BroadcastRefused as refusal:
            messages.error(request, str(refusal))
        return redirect("payouts:broadcast_detail", brand_slug=request.brand.slug, broadcast_id=broadcast.pk)
    results = broadcast_results(broadcast=broadcast)
    context = {
        "brand": request.brand,
        "membership": request.membership,
        "roles": roles,
        "broadcast": broadcast,
        "results": results,
        "cost_cents": micros_to_cents(results["cost"]),
        "estimate_cents": micros_to_cents(sum(m for _n, m in broadcast.estimate.values())),
        "skips": [(broadcasts.skip_reason_text(reason), n) for reason, n in results["skips"].items()],
        "rates": {"date": broadcast.rates_date, "currency": RATES_CURRENCY},
    }
    return render(request, "payouts/audience/broadcast_detail.html", context)


@brand_member_required()
@require_http_methods(["GET", "POST"])
def whatsapp_account_view(request):
    """The brand's own WhatsApp Business Account: connected by the owner at the end of Meta's
    Embedded Signup (the popup hands this page a code), with a second factor and the password
    asked again, as the token sends in the brand's name; or disconnected."""
    code = request.POST.get("code", "") or request.GET.get("code", "")
    if request.method == "POST":
        if request.membership.role not in roles.MANAGE_API:
            raise PermissionDenied("Your role in this brand does not allow this.")
        if not recently_authenticated(request):
            raise ReauthenticationRequired()
        if request.POST.get("action") == "disconnect":
            broadcasts.whatsapp_account_disconnect(brand=request.brand)
            messages.success(request, _("Disconnected: nothing more is sent from this number."))
            return redirect("payouts:whatsapp_account", brand_slug=request.brand.slug)
        try:
            account = broadcasts.whatsapp_account_connect(brand=request.brand, user=request.user, code=code)
        except broadcasts.BroadcastRefused as refusal:
            messages.error(request, str(refusal))
            return redirect("payouts:whatsapp_account", brand_slug=request.brand.slug)
        messages.success(
            request,
            _("Connected: your sends go from %(number)s. Sync your templates next.")
            % {"number": account.display_number},
        )
        return redirect("payouts:broadcasts", brand_slug=request.brand.slug)
    back = reverse("payouts:whatsapp_account", args=[request.brand.slug])
    context = {
        "brand": request.brand,
        "membership": request.membership,
        "roles": roles,
        "account": broadcasts.whatsapp_account_for(brand=request.brand),
        "code": code,
        "signup_url": reverse("verification:sandbox_whatsapp_signup")
        + "?"
        + urlencode({"next": back, "business": request.brand.name})
        if settings.SANDBOX
        else "",
        "app_id": settings.WHATSAPP_APP_ID,
    }
    return render(request, "payouts/audience/whatsapp_account.html", context)


class CrmConnectForm(forms.Form):
    kind = forms.ChoiceField(label=gettext_lazy("CRM"), choices=CrmKind.choices)
    api_key = forms.CharField(
        label=gettext_lazy("Private API key"), max_length=200, widget=forms.PasswordInput
    )
    list_id = forms.CharField(label=gettext_lazy("List id (optional)"), max_length=64, required=False)


@brand_member_required(money=True)
@require_http_methods(["GET", "POST"])
def crm_page(request):
    """The brand's CRM connections and their sync; the owner connects one with the CRM's key,
    with a second factor and the password asked again."""
    form = CrmConnectForm(request.POST or None)
    if request.method == "POST":
        if request.membership.role not in roles.MANAGE_API:
            raise PermissionDenied("Your role in this brand does not allow this.")
        if not recently_authenticated(request):
            raise ReauthenticationRequired()
        action = request.POST.get("action", "connect")
        connection = CrmConnection.objects.filter(
            brand=request.brand, pk=request.POST.get("connection") or 0, disconnected_at__isnull=True
        ).first()
        if action in ("sync", "disconnect") and connection is None:
            raise Http404("No such connection")
        if action == "sync":
            outcome = crm.crm_sync(connection_id=connection.pk)
            (messages.success if outcome == "synced" else messages.error)(
                request, _("Synced.") if outcome == "synced" else _("The sync failed; see the error below.")
            )
            return redirect("payouts:crm", brand_slug=request.brand.slug)
        if action == "disconnect":
            crm.crm_disconnect(connection=connection)
            messages.success(request, _("Disconnected: nothing more is synced."))
            return redirect("payouts:crm", brand_slug=request.brand.slug)
        if form.is_valid():
            try:
                crm.crm_connect(brand=request.brand, user=request.user, **form.cleaned_data)
            except crm.CrmRefused as refusal:
                form.add_error("api_key", str(refusal))
            else:
                messages.success(request, _("Connected. Your audience is synced within a minute."))
                return redirect("payouts:crm", brand_slug=request.brand.slug)
    context = {
        "brand": request.brand,
        "membership": request.membership,
        "roles": roles,
        "form": form,
        "connections": CrmConnection.objects.filter(
            brand=request.brand, disconnected_at__isnull=True
        ).order_by("kind"),
        "stale": timezone.now() - timedelta(hours=1),
    }
    return render(request, "payouts/audience/crm.html", context, status=400 if form.errors else 200)


@brand_member_required()
@require_GET
def overview_audience(request):
    """The overview's audience: consents given and stopped in the window, the opt-out rate of
    everyone who ever agreed, and what people bought after agreeing (shop connectors, the API)."""
    window = overview_window(data=request.GET, brand=request.brand)
    days = audience_growth(brand=request.brand, since=window.since, until=window.until)
    context = {
        "brand": request.brand,
        "given": sum(day["given"] for day in days.values()),
        "withdrawn": sum(day["withdrawn"] for day in days.values()),
        "counts": audience_counts(brand=request.brand),
        "purchases": audience_purchases(brand=request.brand),
    }
    return render(request, "payouts/audience/_overview_audience.html", context)


@csrf_exempt  # Mailchimp posts with no cookie; the secret in the address is the check
@require_http_methods(["GET", "POST"])
def mailchimp_webhook(request, connection_id, secret):
    """Mailchimp's audience webhook: a GET when the webhook is saved (it checks the address
    answers), form-encoded POSTs for each unsubscribe or clean. A wrong address is a 404 either way."""
    if not CrmConnection.objects.filter(
        pk=connection_id, kind=CrmKind.MAILCHIMP, disconnected_at__isnull=True, webhook_secret=secret
    ).exists():
        raise Http404("No such webhook")
    if request.method == "GET":
        return HttpResponse(status=200)
    outcome = crm.mailchimp_webhook_receive(
        connection_id=connection_id, secret=secret, data=request.POST.dict()
    )
    return HttpResponse(outcome, status=200, content_type="text/plain")


# The person's side: the email news offered on their reward page, and the link that confirms it.


@require_POST
def email_optin_view(request, token):
    """The reward page's email form: the confirmation link is mailed; nothing is in force yet."""
    participant = participant_get_by_token(token=token)
    campaign = Campaign.objects.select_related("brand").filter(pk=request.POST.get("campaign") or 0).first()
    if participant is None or campaign is None or campaign.brand_id != participant.brand_id:
        raise Http404("No such claim")
    if rate_limit_hit(scope="email_optin", key=client_address(request), limit=5, window_seconds=60):
        refusal = _("Too many attempts: wait a minute.")
        return render(
            request, "payouts/email_optin.html", {"state": "refused", "refusal": refusal}, status=429
        )

    def confirm_url_for(confirm_token):
        return request.build_absolute_uri(reverse("payouts:email_optin_confirm", args=[confirm_token]))

    try:
        email = email_optin.email_optin_request(
            participant=participant,
            campaign=campaign,
            email=request.POST.get("email", ""),
            wording_id=int(request.POST.get("wording") or 0)
            if request.POST.get("wording", "").isdigit()
            else 0,
            agreed=request.POST.get("agree") == "yes",
            confirm_url_for=confirm_url_for,
        )
    except email_optin.OptinRefused as refusal:
        context = {
            "state": "refused",
            "refusal": str(refusal),
            "back": status_page_path(slug=campaign.slug, token=token),
        }
        return render(request, "payouts/email_optin.html", context, status=400)
    context = {"state": "sent", "email": email, "back": status_page_path(slug=campaign.slug, token=token)}
    return render(request, "payouts/email_optin.html", context)


@require_http_methods(["GET", "POST"])
def email_optin_confirm_view(request, token):
    """GET shows what is confirmed (a mail scanner opening the link changes nothing); POST does it."""
    try:
        pending = email_optin.email_optin_pending(token=token)
        if request.method == "GET":
            return render(request, "payouts/email_optin.html", {"state": "confirm", **pending})
        email_optin.email_optin_confirm(token=token)
    except email_optin.OptinRefused as refusal:
        return render(
            request, "payouts/email_optin.html", {"state": "refused", "refusal": str(refusal)}, status=400
        )
    return render(request, "payouts/email_optin.html", {"state": "done", **pending})


def brand_pages():
    return [
        path("audience/", audience, name="audience"),
        path("audience/csv/", audience_csv, name="audience_csv"),
        path("audience/sends/", broadcast_list, name="broadcasts"),
        path("audience/sends/templates/", templates_sync_view, name="templates_sync"),
        path("audience/sends/<int:broadcast_id>/", broadcast_detail, name="broadcast_detail"),
        path("audience/crm/", crm_page, name="crm"),
        path("audience/whatsapp/", whatsapp_account_view, name="whatsapp_account"),
        path("overview/audience/", overview_audience, name="overview_audience"),
    ]
