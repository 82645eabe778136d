"""Charts drawn on the server as SVG: axes with dates, the currency, a legend, each value on hover
(an SVG <title>) and the same values as a table beside the chart, for screen readers and for people
who want the number. Nothing from a CDN, no script.

A view builds a `Chart` from buckets (days or weeks) and series of integers (counts, or minor units
of one currency); `{% chart chart %}` (joyback/templatetags/chart_tags.py) draws it.
"""

import math
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from babel.dates import format_skeleton
from babel.numbers import format_compact_currency, format_compact_decimal, format_decimal
from django.utils.translation import get_language

from joyback.money import money_format, to_major

# The drawing's own units; the SVG scales to its box (viewBox), text keeps its proportions.
WIDTH, HEIGHT = 420, 230
LEFT, RIGHT, TOP, BOTTOM = 58, 10, 12, 30
COLOURS = ("#d6336c", "#1c7ed6", "#2b8a3e", "#e67700")
# Shapes besides colours, so the series can be told apart without seeing colour.
DASHES = ("", "6 4", "2 3", "8 3 2 3")


def locale_current() -> str:
    return (get_language() or "en").replace("-", "_").replace("zh_hans", "zh_Hans")


def date_locale() -> str:
    """The locale dates are written in: the reader's language's, English the European way, day
    before month (as config/formats/en has it for the pages)."""
    locale = locale_current()
    return "en_GB" if locale == "en" else locale


def when_label(when, period: str) -> str:
    """A bucket's date in the reader's language: "2 Dec" for a day, "from 30 Nov" for a week."""
    locale = date_locale()
    if isinstance(when, datetime):
        return format_skeleton("MMMd", when, locale=locale) + " " + format_skeleton("Hm", when, locale=locale)
    return format_skeleton("MMMd", when, locale=locale)


def number_label(value: int, currency: str = "") -> str:
    locale = locale_current()
    if currency:
        return money_format(value, currency, locale=locale)
    return format_decimal(value, locale=locale)


def _axis_label(value: int, currency: str = "") -> str:
    """Tick labels stay short: 1.2K, 15 €."""
    locale = locale_current()
    if currency:
        return format_compact_currency(to_major(value, currency), currency, locale=locale, fraction_digits=2)
    if abs(value) >= 10_000:
        return format_compact_decimal(value, locale=locale, fraction_digits=1)
    return format_decimal(value, locale=locale)


def nice_ticks(top: int, count: int = 4) -> list[int]:
    """0 and up to `count` round steps (1, 2, 2.5 or 5 times a power of ten) reaching at least top."""
    if top <= 0:
        return [0, 1]
    raw = top / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    step = max(1, math.ceil(step))
    ticks = [0]
    while ticks[-1] < top:
        ticks.append(ticks[-1] + step)
    return ticks


@dataclass
class Series:
    name: str
    values: list[int]


@dataclass
class Chart:
    title: str
    buckets: list  # dates (the start of each day or week) or datetimes
    series: list[Series]
    kind: str = "bar"  # "bar" or "line"
    currency: str = ""  # the values are minor units of this currency; counts when empty
    period: str = "day"
    empty_text: str = ""
    id: str = ""
    drawn: dict = field(default_factory=dict, init=False)

    @property
    def empty(self) -> bool:
        return not self.buckets or not any(any(s.values) for s in self.series)

    def label(self, index: int) -> str:
        return when_label(self.buckets[index], self.period)

    def value(self, value: int) -> str:
        return number_label(value, self.currency)

    def rows(self):
        """The values as a table: one row per bucket, one column per series."""
        return [
            (self.label(i), [self.value(s.values[i]) for s in self.series]) for i in range(len(self.buckets))
        ]

    def draw(self) -> dict:
        top = max((max(s.values, default=0) for s in self.series), default=0)
        ticks = nice_ticks(top)
        scale_top = ticks[-1] or 1
        plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
        n = max(len(self.buckets), 1)

        def y(value):
            return TOP + plot_h - max(value, 0) / scale_top * plot_h

        y_ticks = [{"y": round(y(t), 1), "label": _axis_label(t, self.currency)} for t in ticks]
        # About six date labels whatever the number of buckets, so they never overlap on a phone.
        every = max(1, math.ceil(n / 6))
        slot = plot_w / n
        x_ticks = [
            {"x": round(LEFT + slot * (i + 0.5), 1), "label": self.label(i)} for i in range(0, n, every)
        ]
        shapes = []
        for index, series in enumerate(self.series):
            colour, dash = COLOURS[index % len(COLOURS)], DASHES[index % len(DASHES)]
            points = []
            for i, value in enumerate(series.values):
                hover = f"{series.name}, {self.label(i)}: {self.value(value)}"
                if self.kind == "bar":
                    bar_w = slot * 0.8 / len(self.series)
                    x = LEFT + slot * i + slot * 0.1 + bar_w * index
                    points.append(
                        {
                            "x": round(x, 1),
                            "y": round(y(value), 1),
                            "w": round(max(bar_w - 1, 1), 1),
                            "h": round(TOP + plot_h - y(value), 1),
                            "title": hover,
                        }
                    )
                else:
                    points.append(
                        {"x": round(LEFT + slot * (i + 0.5), 1), "y": round(y(value), 1), "title": hover}
                    )
            shapes.append(
                {
                    "name": series.name,
                    "colour": colour,
                    "dash": dash,
                    "points": points,
                    "line": " ".join(f"{p['x']},{p['y']}" for p in points),
                }
            )
        return {
            "width": WIDTH,
            "height": HEIGHT,
            "left": LEFT,
            "right": WIDTH - RIGHT,
            "top": TOP,
            "bottom": TOP + plot_h,
            "y_ticks": y_ticks,
            "x_ticks": x_ticks,
            "x_label_y": TOP + plot_h + 20,
            "shapes": shapes,
        }


def buckets_between(*, start: date, end: date, period: str) -> list[date]:
    """The first day of every day or week (Monday) from start to end, both included."""
    if period == "week":
        first = start - timedelta(days=start.weekday())
        step = timedelta(days=7)
    else:
        first, step = start, timedelta(days=1)
    buckets = []
    while first <= end:
        buckets.append(first)
        first += step
    return buckets


def bucket_of(day: date, period: str) -> date:
    return day - timedelta(days=day.weekday()) if period == "week" else day


def spread(counts: dict, buckets: list[date], period: str) -> list[int]:
    """{day: value} summed into the buckets, zeros where nothing happened."""
    totals = dict.fromkeys(buckets, 0)
    for day, value in counts.items():
        key = bucket_of(day, period)
        if key in totals:
            totals[key] += value or 0
    return [totals[b] for b in buckets]
