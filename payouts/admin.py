import json

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from campaigns.models import Brand
from joyback.admin import ReasonActionForm, StandingWorkAdmin, action_reason, action_record, admin_money
from payouts import privacy, reconciliation, services
from payouts import reconciliation_selectors as recon_selectors
from payouts.iso20022.types import SchemaError
from payouts.models import (
    ExceptionResolution,
    ExceptionStatus,
    PayeeAccount,
    PayeeSubmission,
    PaymentBatch,
    Payout,
    PayoutAlert,
    PayoutEvent,
    ProviderDeposit,
    ReconciliationException,
    ResolutionAction,
    SandboxBankAccount,
    SandboxBankPayment,
    Statement,
    StatementImport,
    StatementImportStatus,
    TransferEvent,
    VirtualAccount,
)
from verification.admin import ParticipantAdmin
from verification.models import Participant

STAFF_UPLOAD_MAX_BYTES = 300 * 1024 * 1024


@admin.register(PayeeSubmission)
class PayeeSubmissionAdmin(StandingWorkAdmin):
    """Bank details waiting for the standing worker, without the details: unprocessed with its
    attempts used up is what the worker gave up on (its log says why)."""

    list_display = ["id", "participant", "created_at", "processed_at", "attempts", "claimed_until"]
    fields = ["participant", "created_at", "processed_at", "attempts", "claimed_until"]
    list_select_related = ["participant"]


@admin.register(TransferEvent)
class TransferEventAdmin(StandingWorkAdmin):
    """The payment provider's signed transfer webhooks, as stored, and what each did to its payout."""

    list_display = ["id", "provider", "event_id", "received_at", "processed_at", "outcome", "attempts"]
    list_filter = ["provider", "outcome"]
    search_fields = ["event_id"]
    fields = ["provider", "event_id", "payload", "received_at", "processed_at", "outcome", "attempts"]


@admin.register(PayeeAccount)
class PayeeAccountAdmin(admin.ModelAdmin):
    """Only masks: the encrypted details never reach a page, not even the admin's."""

    list_display = [
        "id",
        "participant",
        "rail",
        "account_masked",
        "bank_name",
        "country",
        "currency",
        "created_at",
    ]
    list_filter = ["rail", "country", "currency"]
    fields = [
        "participant",
        "rail",
        "account_masked",
        "bank_name",
        "country",
        "currency",
        "consent_at",
        "consent_version",
        "created_at",
        "replaced_at",
    ]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False


class PayoutEventInline(admin.TabularInline):
    model = PayoutEvent
    fields = ["at", "from_status", "to_status", "reason_code", "detail", "actor"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


def _each(modeladmin, request, payouts, act, done: str):
    """Run one service per payout, recording who and why; a refusal is shown, never a 500."""
    reason = action_reason(modeladmin, request)
    if not reason:
        return
    count = 0
    for payout in payouts:
        try:
            act(payout)
        except services.PayoutRefused as refused:
            messages.error(request, f"{payout.end_to_end_id}: {refused.message}")
            continue
        action_record(modeladmin, request, payout, action=f"Payout {done}", reason=reason)
        count += 1
    if count:
        messages.success(request, f"{count} payout(s) {done}.")


@admin.register(Payout)
class PayoutAdmin(admin.ModelAdmin):
    """Payouts change only through their services: the actions below, never the form."""

    list_display = [
        "end_to_end_id",
        "brand",
        "amount_display",
        "scheme",
        "status",
        "reason_code",
        "waits_because",
        "created_at",
    ]
    list_filter = ["status", "scheme", "currency", "manual"]
    search_fields = ["end_to_end_id", "psp_reference"]
    readonly_fields = ["amount_display", *(f.name for f in Payout._meta.fields if f.name != "amount")]
    inlines = [PayoutEventInline]
    actions = ["approve", "cancel", "retry", "status_check"]
    action_form = ReasonActionForm

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="Waits for approval because")
    def waits_because(self, payout):
        if payout.status != "awaiting_approval":
            return ""
        return " ".join(payout.hold_texts) or "The amount is above the single-payout approval threshold."

    @admin.display(description="Amount", ordering="amount")
    def amount_display(self, payout):
        return admin_money(payout.amount, payout.currency)

    @admin.action(description="Approve (maker-checker)")
    def approve(self, request, queryset):
        _each(
            self,
            request,
            queryset,
            lambda p: services.payout_approve(payout=p, actor=request.user),
            "approved",
        )

    @admin.action(description="Cancel (only before it is sent)")
    def cancel(self, request, queryset):
        _each(
            self,
            request,
            queryset,
            lambda p: services.payout_cancel(payout=p, actor=request.user),
            "cancelled",
        )

    @admin.action(description="Pay again (rejected or returned, details fixed)")
    def retry(self, request, queryset):
        _each(
            self,
            request,
            queryset,
            lambda p: services.payout_retry(payout=p, actor=request.user),
            "paid again",
        )

    @admin.action(description="Ask the bank for the status now")
    def status_check(self, request, queryset):
        # Only asks: the bank's answer, not the admin, moves the payout; no reason needed.
        for payout in queryset:
            try:
                services.payout_status_check(payout_id=payout.pk)
            except services.PayoutRefused as refused:
                messages.error(request, f"{payout.end_to_end_id}: {refused.message}")
        messages.success(request, "The bank was asked.")


@admin.register(PaymentBatch)
class PaymentBatchAdmin(admin.ModelAdmin):
    list_display = [
        "msg_id",
        "currency",
        "instant",
        "number_of_transactions",
        "control_sum_display",
        "created_at",
        "sent_at",
    ]
    readonly_fields = [
        "msg_id",
        "currency",
        "instant",
        "number_of_transactions",
        "control_sum",
        "sha256",
        "sent_at",
    ]
    exclude = ["xml"]

    def has_add_permission(self, request):
        return False

    @admin.display(description="Control sum", ordering="control_sum")
    def control_sum_display(self, batch):
        return admin_money(batch.control_sum, batch.currency)


@admin.register(SandboxBankAccount)
class SandboxBankAccountAdmin(admin.ModelAdmin):
    """Testers choose here what the sandbox bank does with an account (see the README's magic IBANs)."""

    list_display = ["account", "outcome", "vop_result", "holder_name"]
    list_editable = ["outcome", "vop_result"]


@admin.register(SandboxBankPayment)
class SandboxBankPaymentAdmin(admin.ModelAdmin):
    list_display = [
        "end_to_end_id",
        "scheme",
        "amount_display",
        "status",
        "reason_code",
        "received_at",
        "returned_at",
    ]
    list_filter = ["status", "scheme", "outcome"]
    search_fields = ["end_to_end_id", "bank_reference"]
    readonly_fields = [f.name for f in SandboxBankPayment._meta.fields]
    actions = ["return_now"]

    def has_add_permission(self, request):
        return False

    @admin.display(description="Amount", ordering="amount")
    def amount_display(self, payment):
        return admin_money(payment.amount, payment.currency)

    @admin.action(description="Return it now (AC04, account closed)")
    def return_now(self, request, queryset):
        from payouts.sandbox.bank import payment_return

        for payment in queryset:
            payment_return(payment=payment, reason_code="AC04")
        messages.success(request, "The bank will report the returns on its next feed read.")


@admin.register(PayoutAlert)
class PayoutAlertAdmin(admin.ModelAdmin):
    """Velocity alerts on brands' manual payouts, for platform staff to look into."""

    list_display = ["created_at", "brand", "kind", "detail"]
    list_filter = ["kind"]
    readonly_fields = ["brand", "kind", "window_start", "detail", "created_at"]


# The bank channel: statements staff upload (booked once a second person approves), the chain of
# statements per account, and the exceptions and alerts only platform staff resolve.


def _may_see(request, *codenames) -> bool:
    return any(request.user.has_perm(f"payouts.{codename}") for codename in codenames)


def _bank_alerts_warn(request) -> None:
    """Every bank page says so while the ledger's bank and the bank disagree."""
    for problem in recon_selectors.bank_alert_problems()[:5]:
        messages.warning(request, problem)
    if recon_selectors.payouts_paused():
        messages.error(request, _("Payouts are paused until staff clear the bank drift alert."))


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
        _bank_alerts_warn(request)
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
                    job = reconciliation.statement_import_create(
                        data=upload.read(),
                        filename=upload.name,
                        channel=reconciliation.Channel.STAFF,
                        uploaded_by=request.user,
                    )
                except (SchemaError, reconciliation.ReconciliationRefused) as refused:
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

    def decide_view(self, request, import_id: int):
        get_object_or_404(StatementImport.objects.defer("data"), pk=import_id)
        try:
            if request.POST.get("decision") == "approve":
                job = reconciliation.statement_import_approve(import_id=import_id, approver=request.user)
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
                reconciliation.statement_import_decline(
                    import_id=import_id, actor=request.user, note=request.POST.get("note", "")[:500]
                )
                messages.success(request, _("Declined: nothing from this file is booked."))
        except reconciliation.ReconciliationRefused as refused:
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


# Participants live in verification; the privacy actions need the payout data, so payouts (the app
# to its right) extends that admin here rather than verification reaching for payouts.
admin.site.unregister(Participant)


@admin.register(Participant)
class ParticipantPrivacyAdmin(ParticipantAdmin):
    actions = ["data_export", "data_erase"]

    @admin.action(description="Download their data (JSON, one person)")
    def data_export(self, request, queryset):
        if queryset.count() != 1:
            self.message_user(request, "Choose exactly one person to download their data.", messages.ERROR)
            return None
        participant = queryset.get()
        data = privacy.participant_export(participant=participant)
        self.log_change(request, participant, "Data exported on the person's request")
        response = HttpResponse(json.dumps(data, indent=2, ensure_ascii=False, default=str))
        response["Content-Type"] = "application/json"
        response["Content-Disposition"] = f'attachment; filename="participant-{participant.pk}.json"'
        return response

    @admin.action(description="Erase their personal data (keeps the records the law requires)")
    def data_erase(self, request, queryset):
        for participant in queryset:
            try:
                privacy.participant_erase(participant=participant, staff=request.user)
            except privacy.PrivacyRefused as refused:
                self.message_user(request, f"{participant}: {refused.message}", messages.ERROR)
                continue
            self.log_change(request, participant, "Personal data erased on the person's request")
            self.message_user(request, f"{participant}: personal data erased.", messages.SUCCESS)

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def changelist_view(self, request, extra_context=None):
        _bank_alerts_warn(request)
        return super().changelist_view(request, extra_context)


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
        "amount",
        "currency",
        "status",
        "proposed_action",
        "proposed_by",
        "created_at",
    ]
    list_filter = ["status", "reason", "currency"]
    readonly_fields = [f.name for f in ReconciliationException._meta.fields]
    inlines = [ExceptionResolutionInline]
    change_form_template = "admin/payouts/reconciliationexception/change_form.html"

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("brand", "line", "payout", "statement", "proposed_by")
        )

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
        _bank_alerts_warn(request)
        return super().changelist_view(request, extra_context)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = {
            **(extra_context or {}),
            "actions_choices": ResolutionAction.choices,
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
            done = reconciliation.exception_resolve(
                exception=exception,
                action=request.POST.get("action", ""),
                actor=request.user,
                payout=payout,
                brand=brand,
                note=request.POST.get("note", "")[:500],
            )
        except reconciliation.ReconciliationRefused as refused:
            messages.error(request, refused.message)
        else:
            if done.status == ExceptionStatus.OPEN:
                messages.warning(
                    request, _("Proposed: a second staff member must approve the same resolution.")
                )
            else:
                messages.success(request, _("Exception resolved."))
        return redirect(reverse("admin:payouts_reconciliationexception_change", args=[exception_id]))


# Funding through the payment provider (payouts/funding/): read-only, as the provider reported it.


@admin.register(VirtualAccount)
class VirtualAccountAdmin(StandingWorkAdmin):
    """Each brand's virtual account at the provider; one still requested with its attempts used up
    is what the worker gave up on (its error says why)."""

    list_display = ["id", "brand", "currency", "status", "iban", "balance_account_id", "attempts", "error"]
    list_filter = ["status", "currency"]
    search_fields = ["iban", "balance_account_id", "brand__name"]
    list_select_related = ["brand"]


@admin.register(ProviderDeposit)
class ProviderDepositAdmin(admin.ModelAdmin):
    list_display = ["id", "brand", "transfer_id", "amount", "currency", "status", "payer_name", "created_at"]
    list_filter = ["status", "currency"]
    search_fields = ["transfer_id", "brand__name"]
    list_select_related = ["brand"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
