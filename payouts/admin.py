import json

from django.contrib import admin, messages
from django.http import HttpResponse

from joyback.admin import ReasonActionForm, StandingWorkAdmin, action_reason, action_record, admin_money
from payouts import privacy
from payouts.manual.services import payout_approve, payout_cancel, payout_retry
from payouts.models import (
    FeeTransfer,
    PayeeAccount,
    PayeeChange,
    PayeeSubmission,
    PaymentBatch,
    Payout,
    PayoutAlert,
    PayoutEvent,
    ProviderDeposit,
    ProviderOnboarding,
    SandboxBankAccount,
    SandboxBankPayment,
    TransferEvent,
    VirtualAccount,
)

# The bank channel's admin registers itself on import; Django looks only for payouts.admin.
from payouts.providers.test_mode_bank import payment_return
from payouts.reconciliation import admin as reconciliation_admin  # noqa: F401
from payouts.reconciliation.admin import bank_alerts_warn
from payouts.submission.states import PayoutRefused
from payouts.submission.submit import payout_status_check
from payouts.taxreports import admin as taxreports_admin  # noqa: F401
from verification.admin import ParticipantAdmin
from verification.models import Participant


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


@admin.register(PayeeChange)
class PayeeChangeAdmin(admin.ModelAdmin):
    """Who changed a person's bank details, when, on what proof: masked, append-only (the database
    refuses edits), so staff can answer "it was not me" from here."""

    list_display = ["at", "participant", "proof", "changed", "account_before", "account_after"]
    list_filter = ["proof"]
    fields = [
        "participant",
        "at",
        "proof",
        "changed",
        "account_before",
        "account_after",
        "contact_before",
        "contact_after",
        "previous",
        "payee",
    ]
    readonly_fields = fields
    list_select_related = ["participant"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
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
        except PayoutRefused as refused:
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

    @admin.action(description="Approve (maker-checker)", permissions=["change"])
    def approve(self, request, queryset):
        _each(
            self,
            request,
            queryset,
            lambda p: payout_approve(payout=p, actor=request.user),
            "approved",
        )

    @admin.action(description="Cancel (only before it is sent)", permissions=["change"])
    def cancel(self, request, queryset):
        _each(
            self,
            request,
            queryset,
            lambda p: payout_cancel(payout=p, actor=request.user),
            "cancelled",
        )

    @admin.action(description="Pay again (rejected or returned, details fixed)", permissions=["change"])
    def retry(self, request, queryset):
        _each(
            self,
            request,
            queryset,
            lambda p: payout_retry(payout=p, actor=request.user),
            "paid again",
        )

    @admin.action(description="Ask the bank for the status now")
    def status_check(self, request, queryset):
        # Only asks: the bank's answer, not the admin, moves the payout; no reason needed.
        for payout in queryset:
            try:
                payout_status_check(payout_id=payout.pk)
            except PayoutRefused as refused:
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
        for payment in queryset:
            payment_return(payment=payment, reason_code="AC04")
        messages.success(request, "The bank will report the returns on its next feed read.")


@admin.register(PayoutAlert)
class PayoutAlertAdmin(admin.ModelAdmin):
    """Velocity alerts on brands' manual payouts, for platform staff to look into."""

    list_display = ["created_at", "brand", "kind", "detail"]
    list_filter = ["kind"]
    readonly_fields = ["brand", "kind", "window_start", "detail", "created_at"]


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
        bank_alerts_warn(request)
        return super().changelist_view(request, extra_context)


# Funding through the payment provider (payouts/funding/): read-only, as the provider reported it.


@admin.register(VirtualAccount)
class VirtualAccountAdmin(StandingWorkAdmin):
    """Each brand's virtual account at the provider; one still requested with its attempts used up
    is what the worker gave up on (its error says why)."""

    list_display = [
        "id",
        "brand",
        "currency",
        "status",
        "iban",
        "balance_account_id",
        "account_holder_id",
        "provider_balance",
        "ledger_balance",
        "attempts",
        "error",
    ]
    list_filter = ["status", "currency"]
    search_fields = ["iban", "balance_account_id", "brand__name"]
    list_select_related = ["brand"]


@admin.register(ProviderOnboarding)
class ProviderOnboardingAdmin(admin.ModelAdmin):
    """Each brand at the provider: its legal entity and account holder, what the provider allows and
    still asks; read-only, as the provider's signed webhooks reported it."""

    list_display = ["id", "brand", "status", "allowed", "legal_entity_id", "account_holder_id", "updated_at"]
    list_filter = ["status", "allowed"]
    search_fields = ["legal_entity_id", "account_holder_id", "brand__name"]
    list_select_related = ["brand"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


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


@admin.register(FeeTransfer)
class FeeTransferAdmin(admin.ModelAdmin):
    """The platform's fees moving from each brand's balance account to the platform's, a batch at a
    time, booked in the ledger when the provider says booked; a refused one is asked for again after
    a backoff that doubles per refusal (its reason says why, its next attempt when), and from the
    third refusal it is an open reconciliation exception too."""

    list_display = [
        "reference",
        "brand",
        "money",
        "status",
        "provider_status",
        "refusals",
        "reason",
        "next_attempt_at",
        "booked_at",
        "created_at",
    ]
    list_filter = ["status", "currency"]
    search_fields = ["reference", "provider_transfer_id", "brand__name"]
    list_select_related = ["brand"]

    @admin.display(description="amount")
    def money(self, obj):
        return admin_money(obj.amount, obj.currency)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
