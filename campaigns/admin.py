from django.contrib import admin

from campaigns.models import ActionRule, Brand, Campaign, Membership


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Brand)
class BrandAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "default_currency", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


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
