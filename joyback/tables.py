"""What the brand's long tables share: a date range filter, server-side pages, and the CSV of the
filtered view (streamed row by row, in the reader's language and number format, safe to open in a
spreadsheet)."""

import csv
import re
from datetime import date, datetime, time, timedelta

from babel.numbers import format_decimal, get_currency_precision, get_decimal_symbol
from django import forms
from django.core.paginator import Paginator
from django.core.validators import MaxValueValidator
from django.http import StreamingHttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import get_language, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from joyback.money import to_major

PAGE_SIZE = 25
# A table page's filters ask by htmx for its results alone: the page's template, laid out by this one
# instead of the brand's page (templates/tables/_page.html).
RESULTS_ONLY = "tables/_results_only.html"

# A cell a spreadsheet would run as a formula (OWASP "CSV injection"): =, +, -, @, tab, return.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")
PLAIN_NUMBER = re.compile(r"-?\d[\d.,\s\u00a0\u202f']*")


def csv_safe(value) -> str:
    """The cell as text a spreadsheet shows and never evaluates. Numbers stay numbers."""
    if value is None:
        return ""
    if isinstance(value, int | float):
        return str(value)
    text = str(value)
    if text.startswith(FORMULA_START) and not PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


def _locale() -> str:
    return (get_language() or "en").replace("-", "_").replace("zh_hans", "zh_Hans")


def csv_delimiter() -> str:
    """Where numbers are written with a decimal comma, spreadsheets expect a semicolon."""
    return ";" if get_decimal_symbol(_locale()) == "," else ","


def csv_amount(amount: int, currency: str) -> str:
    """An amount as a number in the reader's format (12,50 in German), without the symbol: the
    currency has its own column, so the cell stays a number."""
    digits = get_currency_precision(currency)
    pattern = "0." + "0" * digits if digits else "0"
    return format_decimal(to_major(amount, currency), format=pattern, locale=_locale(), group_separator=False)


def csv_when(value) -> str:
    """Dates as ISO 8601 in the brand's time zone: every spreadsheet reads them the same way."""
    if value is None:
        return ""
    return timezone.localtime(value).strftime("%Y-%m-%d %H:%M") if isinstance(value, datetime) else str(value)


class _Echo:
    def write(self, value):
        return value


def csv_response(*, filename: str, header: list, rows) -> StreamingHttpResponse:
    """The rows as a CSV download, written as they are read (a large export never sits in memory)."""
    writer = csv.writer(_Echo(), delimiter=csv_delimiter())

    def lines():
        yield "\ufeff"  # so that spreadsheets read UTF-8
        yield writer.writerow([csv_safe(cell) for cell in header])
        for row in rows:
            yield writer.writerow([csv_safe(cell) for cell in row])

    response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


# A range ends at the start of the day after its last (an exclusive bound), so its last day must
# have one after it: 31 December 9999, typed into a date field, was a server error.
LAST_DAY = date.max - timedelta(days=1)


def date_range_fields() -> tuple[forms.DateField, forms.DateField]:
    """A date range's From and To, for the tables' filters and the overview."""

    def field(label):
        return forms.DateField(
            label=label,
            required=False,
            widget=forms.DateInput(attrs={"type": "date"}),
            validators=[MaxValueValidator(LAST_DAY)],
        )

    return field(_("From")), field(pgettext_lazy("the end of a date range", "To"))


class DateRangeForm(forms.Form):
    """The filters every table has: words to search for, and a date range."""

    q = forms.CharField(label=_("Search"), required=False, max_length=100, strip=True)
    start, end = date_range_fields()

    def clean(self):
        data = super().clean()
        if data.get("start") and data.get("end") and data["start"] > data["end"]:
            self.add_error("end", _("The end date is before the start date."))
        return data

    def filters(self) -> dict:
        """The valid filters; a filter typed wrongly is left out (and its error shown)."""
        self.is_valid()
        return {k: v for k, v in getattr(self, "cleaned_data", {}).items() if v not in (None, "", [])}

    @staticmethod
    def since(day):
        return datetime.combine(day, time.min, tzinfo=timezone.get_current_timezone())

    @staticmethod
    def until(day):
        return datetime.combine(day + timedelta(days=1), time.min, tzinfo=timezone.get_current_timezone())


def page_of(queryset, number, *, size: int = PAGE_SIZE):
    return Paginator(queryset, size).get_page(number)


def query_without_page(data) -> str:
    """The filters as a query string, for the page links and the CSV link."""
    kept = data.copy()
    kept.pop("page", None)
    return kept.urlencode()


def table_context(request, *, form: DateRangeForm, rows, url_name: str) -> dict:
    """What a table page (templates/tables/_page.html) shows of the brand's rows: the filters, one
    page, and the addresses of the page (`url_name`) and of its CSV (`<url_name>_csv`)."""
    return {
        "form": form,
        "page": page_of(rows, request.GET.get("page")),
        "query": query_without_page(request.GET),
        "filtered": bool(form.filters()),
        "action": reverse(url_name, args=[request.brand.slug]),
        "csv_url": reverse(f"{url_name}_csv", args=[request.brand.slug]),
    }


def table_render(request, template: str, context: dict):
    """The table's page; to the filters' htmx request, only its results."""
    if request.htmx:
        context = {**context, "layout": RESULTS_ONLY}
    return render(request, template, context)
