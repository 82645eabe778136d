"""The brand's reconciliation dashboard, its HTMX fragments, the CSV export and the statement API."""

import csv
import datetime

from django.conf import settings
from django.contrib import messages
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import path
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.parsers import BaseParser
from rest_framework.response import Response

from campaigns import roles
from campaigns.access import brand_member_required
from campaigns.models import Brand, Campaign
from joyback.api.framework import ApiError, ApiView
from joyback.money import MoneyError, from_major
from payouts import reconciliation
from payouts import reconciliation_selectors as selectors
from payouts.iso20022.types import SchemaError
from payouts.models import Payout, PayoutScheme, PayoutStatus, ResolutionAction


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
        "can_resolve": request.membership.role in roles.FUND,
        **dict(zip(("tiles", "drift"), selectors.dashboard_numbers(brand=brand), strict=True)),
        "exceptions": selectors.exceptions_open(brand=brand),
        "resolved": selectors.exceptions_resolved(brand=brand),
        "imports": selectors.statement_imports(brand=brand),
        "charts": selectors.campaign_spend(brand=brand),
        "deposit_reference": reconciliation.brand_deposit_reference(brand),
        "sandbox": settings.SANDBOX,
        "actions": ResolutionAction.choices,
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
def statement_upload(request):
    upload = request.FILES.get("statement")
    if upload is None:
        messages.error(request, _("Choose a camt.053 or camt.054 file to upload."))
        return redirect("payouts:reconciliation", request.brand.slug)
    if upload.size > settings.STATEMENT_UPLOAD_MAX_BYTES:
        messages.error(request, _("The file is too large."))
        return redirect("payouts:reconciliation", request.brand.slug)
    try:
        job = reconciliation.statement_import_create(
            data=upload.read(), filename=upload.name, brand=request.brand, uploaded_by=request.user
        )
    except SchemaError as refused:
        messages.error(request, str(refused))
        return redirect("payouts:reconciliation", request.brand.slug)
    if job.status == "failed":
        messages.error(request, job.error)
    elif job.status == "done":
        messages.success(
            request,
            _("%(name)s imported: %(new)s new lines, %(matched)s matched, %(exceptions)s exceptions.")
            % {
                "name": job.filename,
                "new": job.new_lines,
                "matched": job.matched,
                "exceptions": job.exceptions,
            },
        )
    else:
        messages.info(request, _("%(name)s is being imported in the background.") % {"name": job.filename})
    return redirect("payouts:reconciliation", request.brand.slug)


@brand_member_required()
@require_GET
def statement_import_status(request, statement_id: int):
    job = selectors.statement_import_get_for_brand(brand=request.brand, import_id=statement_id)
    if job is None:
        raise Http404("No such import")
    return render(request, "payouts/reconciliation/_import.html", {"job": job, "brand": request.brand})


@brand_member_required(roles.FUND)
@require_POST
def exception_resolve(request, exception_id: int):
    exception = selectors.exception_get_for_brand(brand=request.brand, exception_id=exception_id)
    if exception is None:
        raise Http404("No such exception")
    payout = None
    wanted = request.POST.get("payout", "").strip()
    if wanted:
        payouts = Payout.objects.filter(brand=request.brand)
        payout = (
            payouts.filter(pk=int(wanted)).first()
            if wanted.isdecimal()
            else payouts.filter(end_to_end_id=wanted.upper()).first()
        )
        if payout is None:
            messages.error(request, _("No payout of this brand is %(ref)s.") % {"ref": wanted[:40]})
            return redirect("payouts:reconciliation", request.brand.slug)
    try:
        reconciliation.exception_resolve(
            exception=exception,
            action=request.POST.get("action", ""),
            actor=request.user,
            payout=payout,
            note=request.POST.get("note", "")[:500],
        )
    except reconciliation.ReconciliationRefused as refused:
        messages.error(request, refused.message)
    else:
        messages.success(request, _("Exception resolved."))
    if request.htmx:
        return render(request, "payouts/reconciliation/page.html#live", _context(request))
    return redirect("payouts:reconciliation", request.brand.slug)


@brand_member_required(roles.FUND)
@require_POST
def sandbox_import(request):
    if not settings.SANDBOX:
        raise Http404("Only in the sandbox")
    jobs = reconciliation.sandbox_statements_import(uploaded_by=request.user)
    messages.success(request, _("%(count)s sandbox bank messages imported.") % {"count": len(jobs)})
    return redirect("payouts:reconciliation", request.brand.slug)


def brand_pages():
    """The reconciliation pages, under a brand's prefix (payouts.urls)."""
    return [
        path("reconciliation/", reconciliation_page, name="reconciliation"),
        path("reconciliation/payouts.csv", payouts_export, name="reconciliation_csv"),
        path("reconciliation/statements/", statement_upload, name="statement_upload"),
        path(
            "reconciliation/statements/<int:statement_id>/", statement_import_status, name="statement_import"
        ),
        path(
            "reconciliation/exceptions/<int:exception_id>/resolve/",
            exception_resolve,
            name="exception_resolve",
        ),
        path("reconciliation/sandbox-import/", sandbox_import, name="sandbox_import"),
    ]


# The API: POST /api/v1/statements with the XML file as the body.


class XmlBodyParser(BaseParser):
    media_type = "*/*"

    def parse(self, stream, media_type=None, parser_context=None):
        return stream.read(settings.STATEMENT_UPLOAD_MAX_BYTES + 1)


class StatementImportOutput(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    message = serializers.CharField()
    total = serializers.IntegerField()
    new_lines = serializers.IntegerField()
    known_lines = serializers.IntegerField()
    matched = serializers.IntegerField()
    exceptions = serializers.IntegerField()
    error = serializers.CharField()
    error_line = serializers.IntegerField(allow_null=True)


class StatementImportApi(ApiView):
    """Post a camt.053 or camt.054 file (the raw XML as the body); large files import in the
    background: poll GET /api/v1/statements/<id>."""

    scopes = {"POST": "payouts"}
    parser_classes = [XmlBodyParser]

    @extend_schema(operation_id="statements_import", request=bytes, responses=StatementImportOutput)
    def post(self, request):
        data = request.data if isinstance(request.data, bytes) else b""
        if len(data) > settings.STATEMENT_UPLOAD_MAX_BYTES:
            raise ApiError("statement_too_large", _("The file is too large."), status_code=413)
        brand = Brand.objects.get(pk=request.auth.brand_id)
        try:
            job = reconciliation.statement_import_create(
                data=data, filename=request.headers.get("X-Filename", "api.xml"), brand=brand, source="api"
            )
        except SchemaError as refused:
            raise ApiError("statement_invalid", str(refused), field="body", status_code=422) from None
        if job.status == "failed":
            raise ApiError("statement_invalid", job.error, field="body", status_code=422)
        return Response(StatementImportOutput(job).data, status=201 if job.status == "done" else 202)


class StatementImportStatusApi(ApiView):
    scopes = {"GET": "payouts"}

    @extend_schema(operation_id="statements_get", responses=StatementImportOutput)
    def get(self, request, import_id: int):
        brand = Brand.objects.get(pk=request.auth.brand_id)
        job = selectors.statement_import_get_for_brand(brand=brand, import_id=import_id)
        if job is None:
            raise Http404
        return Response(StatementImportOutput(job).data)


urlpatterns = [
    path("statements", StatementImportApi.as_view(), name="api_statements"),
    path("statements/<int:import_id>", StatementImportStatusApi.as_view(), name="api_statement"),
]
