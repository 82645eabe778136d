"""Every payout of the brand as a table: search, filters, pages, and the CSV of what is shown."""

from django import forms
from django.db.models import Exists, OuterRef, Q
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET

from campaigns import roles
from campaigns.access import brand_member_required
from campaigns.models import Campaign
from joyback.crypto import fingerprint
from joyback.emails import email_canonical
from joyback.money import MoneyError, from_major
from joyback.tables import DateRangeForm, csv_amount, csv_response, csv_when, table_context, table_render
from joyback.words import said
from payouts.models import Payout
from payouts.models.payouts import PayoutScheme, PayoutStatus
from payouts.notifications import reason_text
from verification.models import ActionClaim, Identity


class PayoutFilterForm(DateRangeForm):
    status = forms.ChoiceField(
        label=gettext_lazy("Status"),
        required=False,
        choices=[("", gettext_lazy("Any status")), *PayoutStatus.choices],
    )
    scheme = forms.ChoiceField(
        label=gettext_lazy("Rail"),
        required=False,
        choices=[("", gettext_lazy("Any rail")), *PayoutScheme.choices],
    )
    campaign = forms.TypedChoiceField(
        label=gettext_lazy("Campaign"), coerce=int, required=False, empty_value=None
    )
    # Finance finds the payout behind a bank line by its amount: typed in the brand's currency.
    amount_min = forms.DecimalField(label=gettext_lazy("Minimum amount"), required=False, min_value=0)
    amount_max = forms.DecimalField(label=gettext_lazy("Maximum amount"), required=False, min_value=0)
    field_order = ["q", "campaign", "status", "scheme", "start", "end", "amount_min", "amount_max"]

    def __init__(self, data, *, brand):
        super().__init__(data)
        self.currency = brand.default_currency
        campaigns = Campaign.objects.filter(brand=brand).order_by("-created_at").values_list("pk", "name")
        self.fields["campaign"].choices = [("", gettext_lazy("All campaigns")), *campaigns]

    def _minor(self, name):
        value = self.cleaned_data.get(name)
        if value is None:
            return None
        try:
            return from_major(value, self.currency)
        except MoneyError:
            raise forms.ValidationError(_("%(value)s is not an amount.") % {"value": value}) from None

    def clean_amount_min(self):
        return self._minor("amount_min")

    def clean_amount_max(self):
        return self._minor("amount_max")


def payouts_filtered(*, brand, filters: dict):
    """The brand's payouts the filters of PayoutFilterForm leave, newest first. The search finds a
    payout by its EndToEndId, account, provider or beneficiary reference, or the person by their exact e-mail
    (its keyed hash: names and e-mails are encrypted) or a verified account's handle or id."""
    payouts = Payout.objects.filter(brand=brand).select_related("payee")
    if text := filters.get("q"):
        person = Identity.objects.filter(brand=brand, participant_id=OuterRef("participant_id")).filter(
            Q(display_name__iexact=text.lstrip("@")) | Q(subject=text)
        )
        payouts = payouts.filter(
            Q(end_to_end_id__icontains=text)
            | Q(payee__account_masked__icontains=text)
            | Q(psp_reference=text)
            | Q(beneficiary_reference=text.upper())
            | Q(payee__email_fingerprint=fingerprint(email_canonical(text)))
            | Q(Exists(person))
        )
    if status := filters.get("status"):
        payouts = payouts.filter(status=status)
    if scheme := filters.get("scheme"):
        payouts = payouts.filter(scheme=scheme)
    if campaign := filters.get("campaign"):
        people = ActionClaim.objects.filter(campaign_id=campaign).values("participant_id")
        payouts = payouts.filter(participant_id__in=people)
    if start := filters.get("start"):
        payouts = payouts.filter(created_at__gte=DateRangeForm.since(start))
    if end := filters.get("end"):
        payouts = payouts.filter(created_at__lt=DateRangeForm.until(end))
    if "amount_min" in filters:
        payouts = payouts.filter(amount__gte=filters["amount_min"])
    if "amount_max" in filters:
        payouts = payouts.filter(amount__lte=filters["amount_max"])
    return payouts.order_by("-created_at", "-pk")


def payouts_table_context(request, *, url_name: str) -> dict:
    """The payouts table as the page at `url_name` shows it (its CSV at `<url_name>_csv`)."""
    form = PayoutFilterForm(request.GET, brand=request.brand)
    rows = payouts_filtered(brand=request.brand, filters=form.filters())
    return table_context(request, form=form, rows=rows, url_name=url_name)


@brand_member_required()
@require_GET
def payout_table(request):
    context = {
        "brand": request.brand,
        "membership": request.membership,
        "roles": roles,
        **payouts_table_context(request, url_name="payouts:payout_table"),
    }
    return table_render(request, "payouts/payout_table.html", context)


@brand_member_required()
@require_GET
def payout_table_csv(request):
    form = PayoutFilterForm(request.GET, brand=request.brand)
    rows = payouts_filtered(brand=request.brand, filters=form.filters())
    header = [
        _("EndToEndId"), _("Created"), _("To"), _("Rail"), _("Status"), _("Status code"), _("Bank reason"),
        _("Bank code"),
        _("Amount"), _("Currency"), _("Paid on"),
    ]  # fmt: skip
    lines = (
        [
            payout.end_to_end_id,
            csv_when(payout.created_at),
            payout.payee.account_masked,
            payout.get_scheme_display(),
            said("payout", payout.status),
            payout.status,  # the audit code beside the words, for a finance tool matching on it
            reason_text(payout.reason_code) if payout.reason_code and payout.reason_code != "VOP" else "",
            payout.reason_code if payout.reason_code != "VOP" else "",
            csv_amount(payout.amount, payout.currency),
            payout.currency,
            csv_when(payout.settled_at),
        ]
        for payout in rows.iterator(chunk_size=500)
    )
    return csv_response(filename=f"{request.brand.slug}-payouts.csv", header=header, rows=lines)
