from django import template

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
    from babel.numbers import format_percent

    from joyback.charts import _locale

    return format_percent(value / 100, format="#,##0.0%", locale=_locale())


@register.filter
def count(value):
    from joyback.charts import number_label

    return number_label(value or 0)


@register.filter
def share_of(value, top):
    """value as a whole percentage of top, for the width of a bar."""
    return 0 if not top else max(1, round(100 * (value or 0) / top)) if value else 0
