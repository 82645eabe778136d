"""Server-rendered SVG charts: no chart library, nothing from a CDN."""

from django import template

register = template.Library()

WIDTH, HEIGHT, PAD = 640, 180, 8


@register.inclusion_tag("campaigns/_burn_chart.html")
def burn_chart(series, currency):
    """The budget's balance over time as a step line, scaled to fit."""
    if len(series) < 2:
        return {"points": "", "series": series, "currency": currency}
    start, end = series[0][0].timestamp(), series[-1][0].timestamp()
    span = max(end - start, 1)
    top = max(balance for _, balance in series) or 1
    coords = []
    previous_y = None
    for when, balance in series:
        x = PAD + (when.timestamp() - start) / span * (WIDTH - 2 * PAD)
        y = HEIGHT - PAD - max(balance, 0) / top * (HEIGHT - 2 * PAD)
        if previous_y is not None:
            coords.append(f"{x:.1f},{previous_y:.1f}")
        coords.append(f"{x:.1f},{y:.1f}")
        previous_y = y
    return {
        "points": " ".join(coords),
        "area": f"{PAD},{HEIGHT - PAD} " + " ".join(coords) + f" {coords[-1].split(',')[0]},{HEIGHT - PAD}",
        "series": series,
        "currency": currency,
        "top": top,
        "last": series[-1][1],
        "width": WIDTH,
        "height": HEIGHT,
    }
