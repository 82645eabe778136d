"""The bank channel in the admin: statements staff upload (booked once a second person approves),
the chain of statements per account, and the exceptions and alerts only platform staff resolve."""

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from campaigns.models import Brand
from joyback.admin import admin_money
from payouts.iso20022.camt import camt_read
from payouts.iso20022.types import SchemaError
from payouts.models import ExceptionResolution, Payout, ReconciliationException, Statement, StatementImport
from payouts.models.reconciliation import ExceptionStatus, ResolutionAction, StatementImportStatus
from payouts.reconciliation.bank_health import bank_alert_problems, platform_moves_paused
from payouts.reconciliation.exceptions import exception_resolve
from payouts.reconciliation.rules import ReconciliationRefused
from payouts.reconciliation.statement_import import (
    Channel,
    statement_import_approve,
    statement_import_create,
    statement_import_decline,
)

STAFF_UPLOAD_MAX_BYTES = 300 * 1024 * 1024
PREVIEW_LINES = 500


def statement_preview(data: bytes) -> dict:
    """A file awaiting approval as its second person reads it; {"error": ...} when it cannot be read
    now (a large file is read by the import itself)."""
    try:
        read = camt_read(data)
    except SchemaError as refused:
        return {"error": getattr(refused, "message", None) or str(refused)}
    statements, shown = [], 0
    for block in read.statements:
        lines = []
        for line in block.lines[: max(PREVIEW_LINES - shown, 0)]:
            lines.append(
                {
                    "direction": _("in") if line.credit else _("out"),
                    "amount": admin_money(line.amount, line.currency),
                    "booking_date": line.booking_date,
                    "counterparty": line.counterparty,
                    "reference": line.reference,
                    "end_to_end_id": line.end_to_end_id,
                    "status": line.entry_status,
                    "reversal": line.reversal,
                }
            )
        shown += len(lines)
        statements.append(
            {
                "statement_id": block.statement_id,
                "account": block.account,
                "currency": block.currency,
                "opening": admin_money(block.opening_balance, block.currency),
                "closing": admin_money(block.closing_balance, block.currency),
                "closing_date": block.closing_date,
                "booked_total": admin_money(block.booked_total, block.currency),
                "lines": lines,
                "more": len(block.lines) - len(lines),
            }
        )
    return {"message": read.message, "msg_id": read.msg_id, "statements": statements}


def _may_see(request, *codenames) -> bool:
    return any(request.user.has_perm(f"payouts.{codename}") for codename in codenames)


def bank_alerts_warn(request) -> None:
    """Every bank page says so while the ledger's bank and the bank disagree."""
    for problem in bank_alert_problems()[:5]:
        messages.warning(request, problem)
    if platform_moves_paused():
        messages.error(
            request,
            _(
                "Moves from the platform's account are paused until staff clear the bank drift alert. "
                "Brands' payouts go on from their own accounts."
            ),
        )


@admin.register(StatementImport)
class StatementImportAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "filename",
        "source",
        "status",
        "message",
        "total",
        "uploaded_by",
        "approved_by",
        "created_at",
    ]
    list_display_links = ["id", "filename"]
    list_filter = ["status", "source"]
    search_fields = ["filename", "sha256"]
    exclude = ["data"]
    readonly_fields = [f.name for f in StatementImport._meta.fields if f.name != "data"]
    change_form_template = "admin/payouts/statementimport/change_form.html"
    change_list_template = "admin/payouts/statementimport/change_list.html"

    def get_queryset(self, request):
        return super().get_queryset(request).defer("data").select_related("uploaded_by", "approved_by")

    def has_view_permission(self, request, obj=None):
        return _may_see(request, "view_statementimport", "statement_upload", "statement_approve")

    def has_add_permission(self, request):
        return False  # staff upload through "Upload a statement", which waits for a second person

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_urls(self):
        return [
            path(
                "upload/", self.admin_site.admin_view(self.upload_view), name="payouts_statementimport_upload"
            ),
            path(
                "<int:import_id>/decide/",
                self.admin_site.admin_view(require_POST(self.decide_view)),
                name="payouts_statementimport_decide",
            ),
            *super().get_urls(),
        ]

    def changelist_view(self, request, extra_context=None):
        bank_alerts_warn(request)
        return super().changelist_view(request, extra_context)

    def upload_view(self, request):
        if not request.user.has_perm("payouts.statement_upload"):
            raise PermissionDenied
        if request.method == "POST":
            upload = request.FILES.get("statement")
            if upload is None:
                messages.error(request, _("Choose a camt.053 or camt.054 file to upload."))
            elif upload.size > STAFF_UPLOAD_MAX_BYTES:
                messages.error(request, _("The file is too large."))
            else:
                try:
                    job = statement_import_create(
                        data=upload.read(),
                        filename=upload.name,
                        channel=Channel.STAFF,
                        uploaded_by=request.user,
                    )
                except (SchemaError, ReconciliationRefused) as refused:
                    messages.error(request, getattr(refused, "message", None) or str(refused))
                else:
                    messages.success(
                        request,
                        _("%(name)s is waiting for a second person's approval; nothing is booked until then.")
                        % {"name": job.filename},
                    )
                    return redirect("admin:payouts_statementimport_change", job.pk)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": _("Upload a bank statement"),
        }
        return TemplateResponse(request, "admin/payouts/statementimport/upload.html", context)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        """The second person sees what they approve: each account with its balances and every
        line (who sent or received what, with which words), read from the file, nothing booked."""
        job = StatementImport.objects.filter(pk=object_id).first()
        preview = None
        if job is not None and job.status == StatementImportStatus.AWAITING:
            preview = statement_preview(bytes(job.data))
        return super().change_view(
            request, object_id, form_url, {**(extra_context or {}), "preview": preview}
        )

    def decide_view(self, request, import_id: int):
        get_object_or_404(StatementImport.objects.defer("data"), pk=import_id)
        try:
            if request.POST.get("decision") == "approve":
                job = statement_import_approve(import_id=import_id, approver=request.user)
                messages.success(
                    request,
                    _("Approved and imported: %(matched)s matched, %(exceptions)s exceptions.")
                    % {"matched": job.matched, "exceptions": job.exceptions}
                    if job.status == StatementImportStatus.DONE
                    else _("Approved: %(status)s.") % {"status": job.get_status_display()},
                )
                if job.status == StatementImportStatus.FAILED:
                    messages.error(request, job.error)
            else:
                statement_import_decline(
                    import_id=import_id, actor=request.user, note=request.POST.get("note", "")[:500]
                )
                messages.success(request, _("Declined: nothing from this file is booked."))
        except ReconciliationRefused as refused:
            messages.error(request, refused.message)
        return redirect("admin:payouts_statementimport_change", import_id)


@admin.register(Statement)
class StatementAdmin(admin.ModelAdmin):
    """The chain of statements per bank account: sequence, opening and closing balances."""

    list_display = [
        "account",
        "sequence",
        "statement_id",
        "message",
        "opening_balance",
        "closing_balance",
        "closing_date",
    ]
    list_filter = ["message", "account"]
    search_fields = ["statement_id", "msg_id"]
    readonly_fields = [f.name for f in Statement._meta.fields]
    ordering = ["account", "-sequence", "-pk"]

    def has_view_permission(self, request, obj=None):
        return _may_see(request, "view_statement", "statement_upload", "statement_approve")

    def has_add_permission(self, request):
        return False


class ExceptionResolutionInline(admin.TabularInline):
    model = ExceptionResolution
    fields = ["at", "action", "actor", "approved_by", "payout", "ledger_transaction_id", "note"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(ReconciliationException)
class ReconciliationExceptionAdmin(admin.ModelAdmin):
    """What no statement line or payout explains, and alerts about the bank account: resolved here,
    by platform staff only, with a reason; a money-moving resolution above the second-approval
    amount is done when a second person approves the same thing."""

    list_display = [
        "id",
        "reason",
        "brand",
        "amount_display",
        "status",
        "proposed_action",
        "proposed_by",
        "created_at",
    ]
    list_filter = ["status", "reason", "currency"]
    readonly_fields = [
        "amount_display",
        "detail_shown",
        *(f.name for f in ReconciliationException._meta.fields if f.name not in ("amount", "detail")),
    ]
    exclude = ["amount", "detail"]
    inlines = [ExceptionResolutionInline]
    change_form_template = "admin/payouts/reconciliationexception/change_form.html"

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("brand", "line", "payout", "statement", "proposed_by")
        )

    @admin.display(description="Amount", ordering="amount")
    def amount_display(self, exception):
        return admin_money(exception.amount, exception.currency)

    @admin.display(description="Detail")
    def detail_shown(self, exception):
        return exception.detail_shown

    def has_view_permission(self, request, obj=None):
        return _may_see(request, "view_reconciliationexception", "exception_resolve")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_urls(self):
        return [
            path(
                "<int:exception_id>/resolve/",
                self.admin_site.admin_view(require_POST(self.resolve_view)),
                name="payouts_reconciliationexception_resolve",
            ),
            *super().get_urls(),
        ]

    def changelist_view(self, request, extra_context=None):
        bank_alerts_warn(request)
        return super().changelist_view(request, extra_context)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        exception = ReconciliationException.objects.select_related("line").filter(pk=object_id).first()
        line = exception.line if exception is not None else None
        extra_context = {
            **(extra_context or {}),
            # The bank's own words about the money: who sent it, how much, with which text.
            "bank_line": None
            if line is None
            else {
                "direction": _("Money in") if line.credit else _("Money out"),
                "amount": admin_money(line.amount, line.currency),
                "counterparty": line.counterparty,
                "reference": line.reference,
                "booking_date": line.booking_date,
                "end_to_end_id": line.end_to_end_id,
                "return_reason": line.return_reason,
            },
            # Booking a line as a brand's deposit is refused (the platform keeps no brand's money).
            "actions_choices": [c for c in ResolutionAction.choices if c[0] != ResolutionAction.DEPOSIT],
            "can_resolve": request.user.has_perm("payouts.exception_resolve"),
            "open_status": ExceptionStatus.OPEN,
        }
        return super().change_view(request, object_id, form_url, extra_context)

    def resolve_view(self, request, exception_id: int):
        exception = get_object_or_404(ReconciliationException, pk=exception_id)
        payout = None
        wanted = request.POST.get("payout", "").strip()
        if wanted:
            payout = (
                Payout.objects.filter(pk=int(wanted)).first()
                if wanted.isdecimal()
                else Payout.objects.filter(end_to_end_id=wanted.upper()).first()
            )
            if payout is None:
                messages.error(request, _("No payout is %(ref)s.") % {"ref": wanted[:40]})
                return redirect("admin:payouts_reconciliationexception_change", exception_id)
        brand = None
        wanted_brand = request.POST.get("brand", "").strip()
        if wanted_brand:
            brand = Brand.objects.filter(slug=wanted_brand.lower()[:50]).first()
            if brand is None:
                messages.error(request, _("No brand is %(slug)s.") % {"slug": wanted_brand[:50]})
                return redirect("admin:payouts_reconciliationexception_change", exception_id)
        try:
            done = exception_resolve(
                exception=exception,
                action=request.POST.get("action", ""),
                actor=request.user,
                payout=payout,
                brand=brand,
                note=request.POST.get("note", "")[:500],
            )
        except ReconciliationRefused as refused:
            messages.error(request, refused.message)
        else:
            if done.status == ExceptionStatus.OPEN:
                messages.warning(
                    request, _("Proposed: a second staff member must approve the same resolution.")
                )
            else:
                messages.success(request, _("Exception resolved."))
        return redirect(reverse("admin:payouts_reconciliationexception_change", args=[exception_id]))
