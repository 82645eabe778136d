"""The marketer's overview (what the money bought) and finance's own page (where the money is).

The overview is composed from each app's fragment: visits and spending here, the steps and the
videos' reach from verification, the funnel through to paid people from payouts. Each fragment
reads the same query string (campaigns.overview).
"""

from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from campaigns import roles
from campaigns.access import brand_member_required
from campaigns.fees import fee_plan_for
from campaigns.forms import AllowanceForm, AmountForm
from campaigns.invoices import invoices_for_brand, vat_for
from campaigns.overview import overview_window
from campaigns.selectors import (
    brand_balances,
    campaign_budget_by_day,
    campaign_spend_by_day,
    landing_visits_by_day,
)
from joyback.charts import Chart, Series, buckets_between, spread
from joyback.ledger.selectors import transactions_for_brand


def _major(amount):
    return None if amount is None else Decimal(amount) / 100


@brand_member_required()
@require_GET
def finance(request):
    """The ledger as finance reads it: accounts, their balances, every booking's entries."""
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
        context["vat"] = vat_for(country=request.brand.country, vat_id=request.brand.vat_id)
        context["plan"] = fee_plan_for(brand=request.brand, currency=request.brand.default_currency)
        context["platform_country"] = settings.PLATFORM_COUNTRY
    return render(request, "campaigns/finance.html", context)


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
