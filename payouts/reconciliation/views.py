"""The brand's reconciliation dashboard, its HTMX fragments, the CSV export and "compare with my
bank statement". Nothing here books money: statements arrive through the bank's channel
(payouts.reconciliation) and exceptions are resolved by platform staff (payouts.reconciliation.admin)."""

import csv
import datetime

from django.conf import settings
from django.http import StreamingHttpResponse
from django.shortcuts import render
from django.urls import path
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from campaigns import roles
from campaigns.access import brand_member_required
from campaigns.models import Campaign
from joyback.money import MoneyError, from_major
from payouts.iso20022.camt import camt_read
from payouts.iso20022.types import SchemaError
from payouts.models import PayoutScheme, PayoutStatus
from payouts.reconciliation import selectors
from payouts.reconciliation.references import brand_deposit_reference


def _filters(request) -> tuple[selectors.PayoutFilters, list[str]]:
    """The table's filters from the query string; a bad value is dropped and said so, never a 500."""
    get = request.GET
    problems = []
    filters = selectors.PayoutFilters(q=get.get("q", "")[:100])
    if get.get("status") in PayoutStatus.values:
        filters.status = get["status"]
    if get.get("scheme") in PayoutScheme.values:
        filters.scheme = get["scheme"]
    if get.get("campaign", "").isdecimal():
        filters.campaign = int(get["campaign"])
    for name in ("date_from", "date_to"):
        if get.get(name):
            try:
                setattr(filters, name, datetime.date.fromisoformat(get[name]))
            except ValueError:
                problems.append(_("%(value)s is not a date (YYYY-MM-DD).") % {"value": get[name][:20]})
    for name in ("amount_min", "amount_max"):
        if get.get(name):
            try:
                setattr(filters, name, from_major(get[name].replace(",", "."), get.get("currency") or "EUR"))
            except (MoneyError, ValueError, ArithmeticError):
                problems.append(_("%(value)s is not an amount.") % {"value": get[name][:20]})
    return filters, problems


def _table_context(request):
    filters, problems = _filters(request)
    after = request.GET.get("after", "")
    rows, next_after = selectors.payouts_page(
        brand=request.brand, filters=filters, after=int(after) if after.isdecimal() else None
    )
    query = request.GET.copy()
    query.pop("after", None)
    return {
        "brand": request.brand,
        "payouts": rows,
        "next_after": next_after,
        "filters": filters,
        "filter_problems": problems,
        "query": query.urlencode(),
        "statuses": PayoutStatus.choices,
        "schemes": PayoutScheme.choices,
        "campaigns": Campaign.objects.filter(brand=request.brand).order_by("name").values_list("pk", "name"),
    }


def _context(request, **extra):
    brand = request.brand
    return {
        "brand": brand,
        "membership": request.membership,
        **dict(zip(("tiles", "drift"), selectors.dashboard_numbers(brand=brand), strict=True)),
        "exceptions": selectors.exceptions_open(brand=brand),
        "resolved": selectors.exceptions_resolved(brand=brand),
        "deposits": selectors.deposits_evidence(brand=brand),
        "charts": selectors.campaign_spend(brand=brand),
        "deposit_reference": brand_deposit_reference(brand),
        "can_compare": request.membership.role in roles.FUND,
        **_table_context(request),
        **extra,
    }


@brand_member_required()
@require_GET
def reconciliation_page(request):
    if request.htmx and request.GET.get("part") == "table":
        return render(request, "payouts/reconciliation/page.html#table", _table_context(request))
    if request.htmx and request.GET.get("part") == "live":
        return render(request, "payouts/reconciliation/page.html#live", _context(request))
    return render(request, "payouts/reconciliation/page.html", _context(request))


@brand_member_required()
@require_GET
def payouts_export(request):
    filters, _problems = _filters(request)
    rows = selectors.payouts_export_rows(brand=request.brand, filters=filters)

    class Echo:
        def write(self, value):
            return value

    writer = csv.writer(Echo())
    header = [
        "id",
        "end_to_end_id",
        "created_at",
        "status",
        "reason_code",
        "rail",
        "amount",
        "currency",
        "account",
        "settled_at",
    ]

    def lines():
        yield writer.writerow(header)
        for pk, e2e, created, *rest, settled in rows:
            yield writer.writerow([pk, e2e, created.isoformat(), *rest, settled or ""])

    response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="payouts-{request.brand.slug}.csv"'
    return response


@brand_member_required(roles.FUND)
@require_POST
def statement_compare(request):
    """The brand's own statement against the platform's: read, compared, shown, and forgotten."""
    upload = request.FILES.get("statement")
    problem = None
    compared = []
    if upload is None:
        problem = _("Choose a camt.053 or camt.054 file of your bank account.")
    elif upload.size > settings.STATEMENT_UPLOAD_MAX_BYTES:
        problem = _("The file is too large to compare here (at most %(mb)s MB).") % {
            "mb": settings.STATEMENT_UPLOAD_MAX_BYTES // 2**20
        }
    else:
        try:
            compared = selectors.statement_compare(brand=request.brand, parsed=camt_read(upload.read()))
        except SchemaError as refused:
            problem = str(refused)
    context = {
        "brand": request.brand,
        "compared": compared,
        "compare_problem": problem,
        "compared_file": upload.name if upload else "",
    }
    if request.htmx:
        return render(request, "payouts/reconciliation/_compare.html", context)
    return render(request, "payouts/reconciliation/page.html", _context(request, **context))


def brand_pages():
    """The reconciliation pages, under a brand's prefix (payouts.urls)."""
    return [
        path("reconciliation/", reconciliation_page, name="reconciliation"),
        path("reconciliation/payouts.csv", payouts_export, name="reconciliation_csv"),
        path("reconciliation/statements/", statement_compare, name="statement_compare"),
    ]
