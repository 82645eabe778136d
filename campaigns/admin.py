from django.contrib import admin, messages

from campaigns.models import ActionRule, Brand, BrandVerification, Campaign, LicenceTerms, Membership
from campaigns.selectors import brand_verification_missing
from campaigns.services.brands import brand_verification_revoke, brand_verify
from campaigns.services.refusals import CampaignError


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


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


class ActionRuleInline(admin.TabularInline):
    model = ActionRule
    fk_name = "campaign"
    extra = 0


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ["name", "brand", "package", "status", "currency", "created_at"]
    list_filter = ["status", "package", "currency"]
    search_fields = ["name", "slug", "brand__name"]
    list_select_related = ["brand"]
    inlines = [ActionRuleInline]


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
