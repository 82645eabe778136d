"""The marketer's overview (what the money bought) and finance's own page (where the money is).

The overview is composed from each app's fragment: visits and spending here, the steps and the
videos' reach from verification, the funnel through to paid people from payouts. Each fragment
reads the same query string (campaigns.overview).
"""

from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.contrib import messages
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from campaigns import roles
from campaigns.access import brand_member_required
from campaigns.fees import fee_plan_for
from campaigns.forms import AllowanceForm, AmountForm, VatIdForm
from campaigns.invoices import brand_vat, brand_vies_said, invoices_for_brand, vat_vies_needed
from campaigns.models import VatIdCheck
from campaigns.overview import overview_window
from campaigns.selectors import (
    brand_balances,
    campaign_budget_by_day,
    campaign_spend_by_day,
    landing_visits_by_day,
)
from campaigns.services.brands import brand_vat_id_save
from campaigns.services.refusals import CampaignError
from joyback.charts import Chart, Series, buckets_between, spread
from joyback.ledger.selectors import transactions_for_brand


def _major(amount):
    return None if amount is None else Decimal(amount) / 100


@brand_member_required()
@require_GET
def finance(request):
    """The ledger as finance reads it: accounts, their balances, every booking's entries."""
    return _finance_render(request)


def _finance_render(request, vat_form=None, status=200):
    context = {
        "brand": request.brand,
        "membership": request.membership,
        "roles": roles,
        "balances": brand_balances(brand=request.brand),
        "transactions": transactions_for_brand(brand_id=request.brand.pk),
        "topup_form": AmountForm(),
        "allowance_form": AllowanceForm(initial={"person_allowance": _major(request.brand.person_allowance)}),
    }
    if request.membership.role in roles.FUND and request.brand.livemode:
        context["invoices"] = invoices_for_brand(brand=request.brand)
        context["vat"] = brand_vat(request.brand)
        context["plan"] = fee_plan_for(brand=request.brand, currency=request.brand.default_currency)
        context["platform_country"] = settings.PLATFORM_COUNTRY
        context["vat_form"] = vat_form or VatIdForm(initial={"vat_id": request.brand.vat_id})
        vies = brand_vies_said(request.brand)
        context["vies"] = {
            "needed": vat_vies_needed(country=request.brand.country, vat_id=request.brand.vat_id),
            "status": vies,
            "words": VatIdCheck(vies).label,
            "checked_at": request.brand.vies_checked_at if vies != VatIdCheck.UNCHECKED else None,
            "request_identifier": request.brand.vies_request_identifier if vies == VatIdCheck.VALID else "",
        }
    return render(request, "campaigns/finance.html", context, status=status)


@brand_member_required(roles.MANAGE_MEMBERS)
@require_POST
def brand_vat_id(request):
    """The owner gives or corrects the brand's VAT number; VIES is asked about it shortly."""
    if not request.brand.livemode:
        return redirect("brand_finance", brand_slug=request.brand.slug)
    form = VatIdForm(request.POST)
    if not form.is_valid():
        return _finance_render(request, vat_form=form, status=400)
    try:
        brand_vat_id_save(brand=request.brand, vat_id=form.cleaned_data["vat_id"])
    except CampaignError as error:
        form.add_error("vat_id", str(error))
        return _finance_render(request, vat_form=form, status=400)
    messages.success(request, _("Saved. The EU's VIES is asked about the number within a few minutes."))
    return redirect("brand_finance", brand_slug=request.brand.slug)


@brand_member_required()
@require_GET
def overview_traffic(request):
    """Visits to the landing pages and the money spent on rewards, over the chosen dates."""
    window = overview_window(data=request.GET, brand=request.brand)
    buckets = window.buckets
    visits = landing_visits_by_day(campaign_ids=window.campaign_ids, start=window.start, end=window.end)
    charts = [
        Chart(
            title=_("Landing page visits"),
            buckets=buckets,
            series=[Series(_("Visits"), spread(visits, buckets, window.period))],
            period=window.period,
            id="chart-visits",
            empty_text=_(
                "No visits on these dates. Share the campaign's landing page link: visits count from "
                "the first person who opens it."
            ),
        )
    ]
    spend = campaign_spend_by_day(campaigns=window.campaigns, since=window.since, until=window.until)
    for currency in window.currencies:
        charts.append(
            Chart(
                title=_("Spent on rewards"),
                buckets=buckets,
                series=[Series(_("Rewards paid"), spread(spend.get(currency, {}), buckets, window.period))],
                currency=currency,
                period=window.period,
                id=f"chart-spend-{currency.lower()}",
                empty_text=_("No rewards paid on these dates."),
            )
        )
    return render(request, "campaigns/_overview_traffic.html", {"charts": charts, "window": window})


def campaign_charts(*, campaign, today) -> list[Chart]:
    """The campaign page's charts: the budget day by day, and what rewards cost per week."""
    start = max(campaign.created_at.date(), today - timedelta(days=59))
    days = buckets_between(start=start, end=today, period="day")
    weeks_from = today - timedelta(weeks=11)
    weeks = buckets_between(start=weeks_from, end=today, period="week")
    window = overview_window(
        data={"campaign": campaign.pk, "start": weeks[0].isoformat(), "end": today.isoformat()},
        brand=campaign.brand,
        today=today,
    )
    since, until = window.since, window.until
    spend = campaign_spend_by_day(campaigns=[campaign], since=since, until=until).get(campaign.currency, {})
    return [
        Chart(
            title=_("Budget available, day by day"),
            buckets=days,
            series=[Series(_("Budget"), campaign_budget_by_day(campaign=campaign, start=start, end=today))],
            kind="line",
            currency=campaign.currency,
            id="chart-budget",
            empty_text=_("The chart appears once the budget is funded."),
        ),
        Chart(
            title=_("Spent on rewards per week"),
            buckets=weeks,
            series=[Series(_("Rewards paid"), spread(spend, weeks, "week"))],
            currency=campaign.currency,
            period="week",
            id="chart-weekly-spend",
            empty_text=_("No rewards paid yet."),
        ),
    ]
