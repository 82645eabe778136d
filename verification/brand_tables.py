"""The brand's claims and people, as tables to search, filter, page through and export; and the
shared videos' reach for the overview."""

from django import forms
from django.conf import settings
from django.shortcuts import render
from django.utils.translation import get_language, gettext_lazy
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from campaigns import roles
from campaigns.access import brand_member_required
from campaigns.models import Campaign, Trigger
from campaigns.overview import overview_window
from joyback.charts import Chart, Series, number_label, spread
from joyback.money import money_format
from joyback.tables import DateRangeForm, csv_amount, csv_response, csv_when, table_context, table_render
from joyback.words import said
from verification.models import ClaimStatus
from verification.selectors import (
    claims_filtered,
    people_earned,
    people_filtered,
    reach_by_day,
    referral_sales_by_poster,
)


class _BrandFilterForm(DateRangeForm):
    campaign = forms.TypedChoiceField(
        label=gettext_lazy("Campaign"), coerce=int, required=False, empty_value=None
    )

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


class ClaimFilterForm(_BrandFilterForm):
    status = forms.ChoiceField(
        label=gettext_lazy("Status"),
        required=False,
        choices=[("", gettext_lazy("Any status")), *ClaimStatus.choices],
    )
    step = forms.ChoiceField(
        label=gettext_lazy("Step"), required=False, choices=[("", gettext_lazy("Any step")), *Trigger.choices]
    )
    field_order = ["q", "campaign", "step", "status", "start", "end"]


class PeopleFilterForm(_BrandFilterForm):
    field_order = ["q", "campaign", "start", "end"]


def _table_context(request, form, rows, url_name):
    return {
        "brand": request.brand,
        "membership": request.membership,
        "roles": roles,
        **table_context(request, form=form, rows=rows, url_name=url_name),
    }


@brand_member_required()
@require_GET
def claims(request):
    form = ClaimFilterForm(request.GET, brand=request.brand)
    rows = claims_filtered(brand=request.brand, filters=form.filters())
    context = _table_context(request, form, rows, "verification:claims")
    return table_render(request, "verification/claims.html", context)


@brand_member_required()
@require_GET
def claims_csv(request):
    form = ClaimFilterForm(request.GET, brand=request.brand)
    rows = claims_filtered(brand=request.brand, filters=form.filters())
    header = [
        _("Claim"), _("When"), _("Campaign"), _("Step"), _("Account"), _("Status"), _("Why"),
        _("Reward"), _("Currency"),
    ]  # fmt: skip
    lines = (
        [
            claim.pk,
            csv_when(claim.created_at),
            claim.campaign.name,
            claim.rule.get_trigger_display(),
            str(claim.identity),
            claim.get_status_display(),
            said("claim", claim.reason),
            csv_amount(claim.amount, claim.currency),
            claim.currency,
        ]
        for claim in rows.iterator(chunk_size=500)
    )
    return csv_response(filename=f"{request.brand.slug}-claims.csv", header=header, rows=lines)


@brand_member_required()
@require_GET
def people(request):
    form = PeopleFilterForm(request.GET, brand=request.brand)
    rows = people_filtered(brand=request.brand, filters=form.filters())
    context = _table_context(request, form, rows, "verification:people")
    page = context["page"]
    earned = people_earned(participant_ids=[person.pk for person in page])
    for person in page:
        person.earned = earned.get(person.pk, [])
    return table_render(request, "verification/people.html", context)


@brand_member_required()
@require_GET
def people_csv(request):
    form = PeopleFilterForm(request.GET, brand=request.brand)
    rows = people_filtered(brand=request.brand, filters=form.filters())
    header = [_("Person"), _("First seen"), _("Accounts"), _("Actions"), _("Verified"), _("Earned")]

    def lines():
        for chunk_start in range(0, rows.count(), 500):
            chunk = list(rows[chunk_start : chunk_start + 500])
            earned = people_earned(participant_ids=[person.pk for person in chunk])
            for person in chunk:
                yield [
                    person.pk,
                    csv_when(person.created_at),
                    ", ".join(str(identity) for identity in person.identities.all()),
                    person.actions,
                    person.verified,
                    " + ".join(
                        f"{csv_amount(total, currency)} {currency}"
                        for currency, total in earned.get(person.pk, [])
                    ),
                ]

    return csv_response(filename=f"{request.brand.slug}-people.csv", header=header, rows=lines())


@brand_member_required()
@require_GET
def overview_reach(request):
    """The videos people shared: how many, and their views, likes and comments."""
    window = overview_window(data=request.GET, brand=request.brand)
    days = reach_by_day(campaign_ids=window.campaign_ids, since=window.since, until=window.until)
    buckets = window.buckets
    totals = {
        key: sum(row[key] or 0 for row in days.values()) for key in ("videos", "views", "likes", "comments")
    }

    def per_bucket(key):
        return spread({day: row[key] for day, row in days.items()}, buckets, window.period)

    chart = Chart(
        title=_("Views, likes and comments"),
        buckets=buckets,
        series=[Series(_("Views"), per_bucket("views")), Series(_("Likes"), per_bucket("likes")),
                Series(_("Comments"), per_bucket("comments"))],
        kind="line",
        period=window.period,
        id="chart-reach",
        empty_text=_(
            "No videos shared on these dates. Add a share step to a campaign: views, likes and "
            "comments show here as TikTok reports them."
        ),
    )  # fmt: skip
    tiles = [
        (_("Videos shared"), number_label(totals["videos"])),
        (_("Views"), number_label(totals["views"])),
        (_("Likes"), number_label(totals["likes"])),
        (_("Comments"), number_label(totals["comments"])),
    ]
    currency = request.brand.default_currency
    cpm = earned_media_cpm()
    value = totals["views"] * cpm // 1000
    tiles.append((_("Earned media value"), money_format(value, currency, get_language() or "en")))
    method = _(
        "Earned media value: the views times %(cpm)s per 1,000 views, what the same views would cost "
        "as paid ads at a typical TikTok rate. An estimate to compare campaigns by, not money received."
    ) % {"cpm": money_format(cpm, currency, get_language() or "en")}
    return render(
        request, "verification/_overview_reach.html", {"chart": chart, "tiles": tiles, "emv_method": method}
    )


def earned_media_cpm() -> int:
    """What 1,000 views would cost as paid ads, in minor units (EARNED_MEDIA_CPM to set another)."""
    return int(getattr(settings, "EARNED_MEDIA_CPM", 500))


@brand_member_required()
@require_GET
def overview_referrals(request):
    """Referred sales by poster and their videos: orders, revenue, what the referrals and the reach
    paid for cost, and the cost per sale; buyers are never named."""
    window = overview_window(data=request.GET, brand=request.brand)
    rows = referral_sales_by_poster(campaign_ids=window.campaign_ids, since=window.since, until=window.until)
    totals = {
        "sales": sum(row.sales for row in rows),
        "revenue": sum(row.revenue for row in rows),
        "cost": sum(row.cost for row in rows),
        "reach_paid": sum(row.reach_paid for row in rows),
    }
    totals["cost_per_sale"] = (
        (totals["cost"] + totals["sales"] // 2) // totals["sales"] if totals["sales"] else None
    )
    return render(
        request,
        "verification/_overview_referrals.html",
        {
            "rows": rows,
            "totals": totals,
            "currency": rows[0].currency if rows else request.brand.default_currency,
        },
    )
