"""The ledger in admin is for reading: every change goes through the services' write path."""

from django.contrib import admin

from joyback.admin import ReadOnly, admin_money
from joyback.ledger.models import Account, Entry, Hold, Transaction


class ReadOnlyAdmin(ReadOnly, admin.ModelAdmin):
    pass


class EntryInline(admin.TabularInline):
    model = Entry
    fields = ["account", "amount_display"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description="Amount", ordering="amount")
    def amount_display(self, entry):
        return admin_money(entry.amount, entry.currency)


@admin.register(Account)
class AccountAdmin(ReadOnlyAdmin):
    list_display = ["id", "name", "kind", "brand_id", "balance_display", "held_display", "no_overdraft"]
    list_filter = ["kind", "currency", "no_overdraft"]
    search_fields = ["name", "subject"]

    @admin.display(description="Balance", ordering="balance")
    def balance_display(self, account):
        return admin_money(account.balance, account.currency)

    @admin.display(description="Held", ordering="held")
    def held_display(self, account):
        return admin_money(account.held, account.currency)


@admin.register(Transaction)
class TransactionAdmin(ReadOnlyAdmin):
    list_display = ["id", "reason", "reference", "idempotency_key", "reverses", "posted_at"]
    list_filter = ["reason"]
    search_fields = ["reference", "idempotency_key", "description"]
    inlines = [EntryInline]
    date_hierarchy = "posted_at"


@admin.register(Entry)
class EntryAdmin(ReadOnlyAdmin):
    list_display = ["id", "transaction", "account", "amount_display"]
    list_filter = ["currency"]
    list_select_related = ["transaction", "account"]

    @admin.display(description="Amount", ordering="amount")
    def amount_display(self, entry):
        return admin_money(entry.amount, entry.currency)


@admin.register(Hold)
class HoldAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "account",
        "amount_display",
        "status",
        "committed_display",
        "reference",
        "created_at",
    ]
    list_filter = ["status"]
    search_fields = ["reference", "idempotency_key"]
    list_select_related = ["account"]

    @admin.display(description="Amount", ordering="amount")
    def amount_display(self, hold):
        return admin_money(hold.amount, hold.account.currency)

    @admin.display(description="Committed", ordering="committed_amount")
    def committed_display(self, hold):
        return admin_money(hold.committed_amount, hold.account.currency)
