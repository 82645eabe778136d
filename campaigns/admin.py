from django.contrib import admin, messages
from django.shortcuts import redirect

from campaigns import roles
from campaigns.models import (
    ActionRule,
    Brand,
    BrandVerification,
    Campaign,
    FeeCharge,
    FeePlan,
    Invoice,
    InvoiceLine,
    LicenceTerms,
    Limit,
    Membership,
)
from campaigns.selectors import brand_verification_missing
from campaigns.services.brands import (
    brand_verification_revoke,
    brand_verify,
    member_add,
    membership_grant_value,
    membership_remove_record,
)
from campaigns.services.fees import FeePlanRefused, fee_plan_change_request
from campaigns.services.limits import LimitRefused, limit_change_request
from campaigns.services.refusals import CampaignError
from joyback.admin import ReadOnly, admin_money
from joyback.users.four_eyes import staff_grant_request
from joyback.users.models import AccessChangeKind


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


def _membership_save(request, membership: Membership) -> None:
    """Through member_add, so who gave whom which role is recorded (joyback.users.four_eyes); a row
    moved to another person or brand is the old membership removed and a new one given. A role that
    moves money (owner, finance) one staff member gives waits for a second staff member to confirm
    it (a StaffGrant), as a money permission does: else one staff member could make an accomplice
    the second approver of a brand's payouts."""
    stored = Membership.objects.filter(pk=membership.pk).first() if membership.pk else None
    unchanged = stored is not None and (stored.user_id, stored.brand_id, stored.role) == (
        membership.user_id,
        membership.brand_id,
        membership.role,
    )
    if membership.role in roles.FUND and not unchanged:
        staff_grant_request(
            actor=request.user,
            subject=membership.user,
            kind=AccessChangeKind.MEMBERSHIP,
            value=membership_grant_value(brand=membership.brand, role=membership.role),
        )
        messages.warning(
            request,
            f"{membership.user} as {membership.role} of {membership.brand} waits for a second staff "
            "member to confirm it (Staff grants).",
        )
        membership.pk = stored.pk if stored is not None else None
        return
    if stored is not None and (stored.user_id, stored.brand_id) != (membership.user_id, membership.brand_id):
        membership_remove_record(membership=stored, actor=request.user)
        stored.delete()
    saved = member_add(brand=membership.brand, user=membership.user, role=membership.role, actor=request.user)
    membership.pk = saved.pk


class BrandVerificationInline(admin.TabularInline):
    """Every verification decision, as staff saw the brand then; never edited."""

    model = BrandVerification
    fields = ["at", "action", "actor", "legal_name", "registration_number", "country", "owner_email", "note"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Brand)
class BrandAdmin(admin.ModelAdmin):
    """Staff verify brands here (the action): funding and payouts open once they did."""

    list_display = [
        "name",
        "slug",
        "livemode",
        "legal_name",
        "country",
        "verified_at",
        "verified_by",
        "created_at",
    ]
    # Test twins (livemode off) hold a brand's test data; they are never verified by staff.
    list_filter = ["livemode", ("verified_at", admin.EmptyFieldListFilter), "country"]
    search_fields = ["name", "slug", "legal_name", "registration_number"]
    prepopulated_fields = {"slug": ["name"]}
    readonly_fields = ["verified_at", "verified_by", "still_missing", "livemode", "live_brand"]
    inlines = [MembershipInline, BrandVerificationInline]
    actions = ["verify"]

    def save_formset(self, request, form, formset, change):
        if formset.model is not Membership:
            return super().save_formset(request, form, formset, change)
        # Through member_add, so who gave whom which role is recorded (joyback.users.four_eyes).
        memberships = formset.save(commit=False)
        for removed in formset.deleted_objects:
            membership_remove_record(membership=removed, actor=request.user)
            removed.delete()
        for membership in memberships:
            _membership_save(request, membership)

    @admin.display(description="Missing for verification")
    def still_missing(self, brand):
        if not brand.pk:
            return ""
        return ", ".join(brand_verification_missing(brand=brand)) or "Nothing: ready to verify"

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if (
            change
            and obj.verified_at
            and {"legal_name", "registration_number", "country"} & set(form.changed_data)
        ):
            # Staff verified the details as they were: changed, they need verifying again.
            brand_verification_revoke(
                brand=obj, actor=request.user, note="Legal details changed in the admin"
            )
            messages.warning(request, f"{obj.name}: the legal details changed, so it needs verifying again.")

    @admin.action(description="Verify the selected brands (funding and payouts open)")
    def verify(self, request, queryset):
        done = 0
        for brand in queryset:
            try:
                brand_verify(brand=brand, actor=request.user)
                done += 1
            except CampaignError as refused:
                messages.error(request, str(refused))
        if done:
            messages.success(request, f"{done} brand(s) verified.")


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "brand", "role", "created_at"]
    list_filter = ["role"]
    search_fields = ["user__email", "brand__name"]
    autocomplete_fields = ["user", "brand"]

    def save_model(self, request, obj, form, change):
        _membership_save(request, obj)

    def log_addition(self, request, obj, message):
        if obj.pk is not None:  # a role that waits for a second staff member was not added yet
            super().log_addition(request, obj, message)

    def response_add(self, request, obj, post_url_continue=None):
        if obj.pk is None:
            return redirect("admin:users_staffgrant_changelist")
        return super().response_add(request, obj, post_url_continue)

    def response_change(self, request, obj):
        if not Membership.objects.filter(pk=obj.pk, role=obj.role).exists():
            return redirect("admin:users_staffgrant_changelist")
        return super().response_change(request, obj)

    def delete_model(self, request, obj):
        membership_remove_record(membership=obj, actor=request.user)
        super().delete_model(request, obj)

    def delete_queryset(self, request, queryset):
        for membership in queryset.select_related("user", "brand"):
            self.delete_model(request, membership)


class ActionRuleInline(admin.TabularInline):
    model = ActionRule
    fk_name = "campaign"
    extra = 0
    exclude = ["brand"]  # the campaign's, set by CampaignAdmin.save_formset


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ["name", "brand", "package", "status", "currency", "created_at"]
    list_filter = ["status", "package", "currency"]
    search_fields = ["name", "slug", "brand__name"]
    list_select_related = ["brand"]
    inlines = [ActionRuleInline]

    def save_formset(self, request, form, formset, change):
        # A rule takes its campaign's brand, as rule_save gives it.
        for rule_form in formset.forms:
            rule_form.instance.brand_id = form.instance.brand_id
        super().save_formset(request, form, formset, change)


@admin.register(LicenceTerms)
class LicenceTermsAdmin(admin.ModelAdmin):
    """Versions of a campaign's licence: grants name them, so they are never edited or removed."""

    list_display = ["campaign", "version", "organic_reuse", "paid_ads", "duration_days", "created_at"]
    list_select_related = ["campaign"]

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Limit)
class LimitAdmin(admin.ModelAdmin):
    """Money limits and fraud thresholds per brand (or the platform's) and currency. Saving asks for
    the change; a second staff member confirms it under Staff grants, and only then is it in force."""

    list_display = ["kind", "brand", "currency", "value", "changed_by", "approved_by", "changed_at"]
    list_filter = ["kind", "currency"]
    autocomplete_fields = ["brand"]
    fields = ["kind", "brand", "currency", "value"]

    def get_readonly_fields(self, request, obj=None):
        return ["kind", "brand", "currency"] if obj is not None else []

    def has_delete_permission(self, request, obj=None):
        return False  # set the platform's value instead: a deletion would skip the second person

    def save_model(self, request, obj, form, change):
        try:
            limit_change_request(
                actor=request.user, kind=obj.kind, currency=obj.currency, brand=obj.brand, value=obj.value
            )
        except LimitRefused as refused:
            messages.error(request, str(refused))
        else:
            messages.warning(
                request,
                f"{obj.get_kind_display()} {obj.currency} for {obj.brand or 'the platform'}: {obj.value} "
                "waits for a second staff member to confirm it (Staff grants); the limit in force stays.",
            )

    def save_related(self, request, form, formsets, change):
        pass  # nothing was saved

    def log_addition(self, request, obj, message):
        pass  # the request is recorded as a StaffGrant and in AccessChange

    def log_change(self, request, obj, message):
        pass

    def response_add(self, request, obj, post_url_continue=None):
        return redirect("admin:campaigns_limit_changelist")

    def response_change(self, request, obj):
        return redirect("admin:campaigns_limit_changelist")


@admin.register(FeePlan)
class FeePlanAdmin(admin.ModelAdmin):
    """The platform's fee per brand (or the platform's default) and currency. Saving asks for the
    change; a second staff member confirms it under Staff grants, and only then is it in force.
    Test data is the free trial and has no plan."""

    list_display = [
        "brand",
        "currency",
        "per_action",
        "payout_bps",
        "changed_by",
        "approved_by",
        "changed_at",
    ]
    list_filter = ["currency"]
    autocomplete_fields = ["brand"]
    fields = ["brand", "currency", "per_action", "payout_bps"]

    def get_readonly_fields(self, request, obj=None):
        return ["brand", "currency"] if obj is not None else []

    def has_delete_permission(self, request, obj=None):
        return False  # set the platform's plan instead: a deletion would skip the second person

    def save_model(self, request, obj, form, change):
        try:
            fee_plan_change_request(
                actor=request.user,
                brand=obj.brand,
                currency=obj.currency,
                per_action=obj.per_action,
                payout_bps=obj.payout_bps,
            )
        except FeePlanRefused as refused:
            messages.error(request, str(refused))
        else:
            messages.warning(
                request,
                f"Fee plan {obj.currency} for {obj.brand or 'the platform'}: {obj.per_action} per action and "
                f"{obj.payout_bps} bps waits for a second staff member to confirm it (Staff grants); the "
                "plan in force stays.",
            )

    def save_related(self, request, form, formsets, change):
        pass  # nothing was saved

    def log_addition(self, request, obj, message):
        pass  # the request is recorded as a StaffGrant and in AccessChange

    def log_change(self, request, obj, message):
        pass

    def response_add(self, request, obj, post_url_continue=None):
        return redirect("admin:campaigns_feeplan_changelist")

    def response_change(self, request, obj):
        return redirect("admin:campaigns_feeplan_changelist")


class _ReadOnly(ReadOnly, admin.ModelAdmin):
    """Money already booked or invoiced: shown, never changed here."""


@admin.register(FeeCharge)
class FeeChargeAdmin(_ReadOnly):
    list_display = ["pk", "brand", "campaign", "claim_id", "reward", "fee", "transfer_reference", "invoice"]
    list_display += ["created_at"]
    list_filter = ["currency"]
    list_select_related = ["brand", "campaign", "invoice"]

    @admin.display(description="reward")
    def reward(self, obj):
        return admin_money(obj.reward_amount, obj.currency)

    @admin.display(description="fee")
    def fee(self, obj):
        return admin_money(obj.fee, obj.currency)


class InvoiceLineInline(admin.TabularInline):
    model = InvoiceLine
    extra = 0
    can_delete = False
    readonly_fields = ["campaign_name", "actions", "rewards", "action_fees", "payout_fees"]
    exclude = ["campaign"]

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Invoice)
class InvoiceAdmin(_ReadOnly):
    list_display = [
        "number",
        "brand",
        "period_start",
        "net_amount",
        "vat_amount",
        "total_amount",
        "vat_treatment",
    ]
    list_filter = ["vat_treatment", "currency"]
    list_select_related = ["brand"]
    inlines = [InvoiceLineInline]

    @admin.display(description="net")
    def net_amount(self, obj):
        return admin_money(obj.net, obj.currency)

    @admin.display(description="VAT")
    def vat_amount(self, obj):
        return admin_money(obj.vat, obj.currency)

    @admin.display(description="total")
    def total_amount(self, obj):
        return admin_money(obj.total, obj.currency)
