from django.contrib import admin

from payouts.models import PayeeAccount


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
