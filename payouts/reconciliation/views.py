"""The brand's reconciliation dashboard, its HTMX fragments, its payouts (the payouts table, with the
bank's evidence) and "compare with my bank statement". Nothing here books money: statements arrive
through the bank's channel (payouts.reconciliation) and exceptions are resolved by platform staff
(payouts.reconciliation.admin)."""

from django.conf import settings
from django.shortcuts import render
from django.urls import path
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from campaigns import roles
from campaigns.access import brand_member_required
from joyback.tables import table_render
from payouts.iso20022.camt import camt_read
from payouts.iso20022.types import SchemaError
from payouts.payout_table import payout_table_csv, payouts_table_context
from payouts.reconciliation import selectors


def _payouts_table(request) -> dict:
    """The brand's payouts table (payouts.payout_table: its filters, pages and CSV), each payout
    with the platform's statement lines that paid it or brought it back."""
    table = payouts_table_context(request, url_name="payouts:reconciliation")
    page = table["page"]
    page.object_list = list(page.object_list)
    selectors.payouts_evidence(page.object_list)
    return {"bank_evidence": True, **table}


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
        "can_compare": request.membership.role in roles.FUND,
        **extra,
    }


@brand_member_required()
@require_GET
def reconciliation_page(request):
    if request.htmx and request.GET.get("part") == "live":
        return render(request, "payouts/reconciliation/page.html#live", _context(request))
    if request.htmx:  # the payouts table's filters
        context = {"brand": request.brand, **_payouts_table(request)}
        return table_render(request, "payouts/payout_table.html", context)
    return render(request, "payouts/reconciliation/page.html", _context(request, **_payouts_table(request)))


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
    return render(
        request, "payouts/reconciliation/page.html", _context(request, **_payouts_table(request), **context)
    )


def brand_pages():
    """The reconciliation pages, under a brand's prefix (payouts.urls)."""
    return [
        path("reconciliation/", reconciliation_page, name="reconciliation"),
        # The payouts table's CSV, at the address the reconciliation page always linked.
        path("reconciliation/payouts.csv", payout_table_csv, name="reconciliation_csv"),
        path("reconciliation/statements/", statement_compare, name="statement_compare"),
    ]
