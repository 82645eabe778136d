"""Every payout of the brand as a table: search, filters, pages, and the CSV of what is shown."""

from django import forms
from django.db.models import Q
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET

from campaigns import roles
from campaigns.access import brand_member_required
from campaigns.models import Campaign
from joyback.tables import DateRangeForm, csv_amount, csv_response, csv_when, table_context, table_render
from joyback.words import said
from payouts.models import Payout, PayoutStatus
from payouts.notifications import reason_text
from verification.models import ActionClaim


class PayoutFilterForm(DateRangeForm):
    status = forms.ChoiceField(
        label=gettext_lazy("Status"),
        required=False,
        choices=[("", gettext_lazy("Any status")), *PayoutStatus.choices],
    )
    campaign = forms.TypedChoiceField(
        label=gettext_lazy("Campaign"), coerce=int, required=False, empty_value=None
    )
    field_order = ["q", "campaign", "status", "start", "end"]

    def __init__(self, data, *, brand):
        super().__init__(data)
        campaigns = Campaign.objects.filter(brand=brand).order_by("-created_at").values_list("pk", "name")
        self.fields["campaign"].choices = [("", gettext_lazy("All campaigns")), *campaigns]


def payouts_filtered(*, brand, filters: dict):
    payouts = Payout.objects.filter(brand=brand).select_related("payee")
    if text := filters.get("q"):
        payouts = payouts.filter(
            Q(end_to_end_id__icontains=text)
            | Q(payee__account_masked__icontains=text)
            | Q(psp_reference=text)
        )
    if status := filters.get("status"):
        payouts = payouts.filter(status=status)
    if campaign := filters.get("campaign"):
        people = ActionClaim.objects.filter(campaign_id=campaign).values("participant_id")
        payouts = payouts.filter(participant_id__in=people)
    if start := filters.get("start"):
        payouts = payouts.filter(created_at__gte=DateRangeForm.since(start))
    if end := filters.get("end"):
        payouts = payouts.filter(created_at__lt=DateRangeForm.until(end))
    return payouts.order_by("-created_at", "-pk")


@brand_member_required()
@require_GET
def payout_table(request):
    form = PayoutFilterForm(request.GET, brand=request.brand)
    rows = payouts_filtered(brand=request.brand, filters=form.filters())
    context = {
        "brand": request.brand,
        "membership": request.membership,
        "roles": roles,
        **table_context(request, form=form, rows=rows, url_name="payouts:payout_table"),
    }
    return table_render(request, "payouts/payout_table.html", context)


@brand_member_required()
@require_GET
def payout_table_csv(request):
    form = PayoutFilterForm(request.GET, brand=request.brand)
    rows = payouts_filtered(brand=request.brand, filters=form.filters())
    header = [
        _("EndToEndId"), _("Created"), _("To"), _("Rail"), _("Status"), _("Bank reason"), _("Bank code"),
        _("Amount"), _("Currency"), _("Paid on"),
    ]  # fmt: skip
    lines = (
        [
            payout.end_to_end_id,
            csv_when(payout.created_at),
            payout.payee.account_masked,
            payout.get_scheme_display(),
            said("payout", payout.status),
            reason_text(payout.reason_code) if payout.reason_code and payout.reason_code != "VOP" else "",
            payout.reason_code if payout.reason_code != "VOP" else "",
            csv_amount(payout.amount, payout.currency),
            payout.currency,
            csv_when(payout.settled_at),
        ]
        for payout in rows.iterator(chunk_size=500)
    )
    return csv_response(filename=f"{request.brand.slug}-payouts.csv", header=header, rows=lines)
