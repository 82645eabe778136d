from datetime import timedelta

from babel.numbers import format_percent
from django import template
from django.utils import timezone
from django.utils.translation import gettext as _

from joyback.charts import Chart, Series, buckets_between, locale_current, number_label, spread

register = template.Library()


@register.inclusion_tag("charts/_chart.html")
def chart(chart):
    """{% chart chart %}: a joyback.charts.Chart as SVG, with its legend and its values as a table."""
    return {"chart": chart, "drawn": None if chart.empty else chart.draw()}


@register.filter
def percent(value):
    """12.5 as "12.5%" in English, "12,5 %" in German; a dash when there is nothing to compare."""
    if value is None:
        return "—"

    return format_percent(value / 100, format="#,##0.0%", locale=locale_current())


@register.filter
def count(value):
    return number_label(value or 0)


@register.filter
def share_of(value, top):
    """value as a whole percentage of top, for the width of a bar."""
    return 0 if not top else max(1, round(100 * (value or 0) / top)) if value else 0


@register.inclusion_tag("charts/_chart.html")
def weekly_spend_chart(points, weeks: int = 12):
    """[{"week", "spend", "currency"}, ...] of one campaign as bars over the last `weeks` weeks."""
    today = timezone.localdate()
    buckets = buckets_between(start=today - timedelta(weeks=weeks - 1), end=today, period="week")
    spent = {point["week"]: point["spend"] for point in points}
    chart = Chart(
        title=_("Spent on rewards per week"),
        buckets=buckets,
        series=[Series(_("Rewards paid"), spread(spent, buckets, "week"))],
        currency=points[0]["currency"] if points else "",
        period="week",
    )
    return {"chart": chart, "drawn": None if chart.empty else chart.draw()}
