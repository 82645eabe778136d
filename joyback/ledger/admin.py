"""The ledger in admin is for reading: every change goes through the services' write path."""

from django.contrib import admin

from joyback.ledger.models import Account, Entry, Hold, Transaction


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class EntryInline(admin.TabularInline):
    model = Entry
    fields = ["account", "amount", "currency"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Account)
class AccountAdmin(ReadOnlyAdmin):
    list_display = ["id", "name", "kind", "currency", "brand_id", "balance", "held", "no_overdraft"]
    list_filter = ["kind", "currency", "no_overdraft"]
    search_fields = ["name", "subject"]


@admin.register(Transaction)
class TransactionAdmin(ReadOnlyAdmin):
    list_display = ["id", "reason", "reference", "idempotency_key", "reverses", "posted_at"]
    list_filter = ["reason"]
    search_fields = ["reference", "idempotency_key", "description"]
    inlines = [EntryInline]
    date_hierarchy = "posted_at"


@admin.register(Entry)
class EntryAdmin(ReadOnlyAdmin):
    list_display = ["id", "transaction", "account", "amount", "currency"]
    list_filter = ["currency"]
    list_select_related = ["transaction", "account"]


@admin.register(Hold)
class HoldAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "account",
        "amount",
        "status",
        "committed_amount",
        "reference",
        "created_at",
    ]
    list_filter = ["status"]
    search_fields = ["reference", "idempotency_key"]
