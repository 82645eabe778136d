from django.contrib import admin

from joyback.admin import StandingWorkAdmin
from verification.models import ActionClaim, Identity, Participant, ProviderEvent, TikTokPost


class IdentityInline(admin.TabularInline):
    model = Identity
    extra = 0
    fields = ["provider", "subject", "display_name", "verified_at"]
    readonly_fields = fields


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
    list_display = ["id", "brand", "created_at"]
    list_select_related = ["brand"]
    exclude = ["token"]  # the private status link is the person's, not the admin's
    inlines = [IdentityInline]


@admin.register(ActionClaim)
class ActionClaimAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "campaign",
        "rule",
        "identity",
        "status",
        "reason",
        "amount",
        "currency",
        "created_at",
    ]
    list_filter = ["status", "rule__trigger"]
    list_select_related = ["campaign", "rule", "identity"]
    readonly_fields = ["ledger_transaction_id", "amount", "currency", "created_at", "decided_at"]


@admin.register(ProviderEvent)
class ProviderEventAdmin(StandingWorkAdmin):
    """Provider events as they came; unprocessed with its attempts used up is what the standing
    worker gave up on (its log says why)."""

    list_display = ["provider", "event_id", "received_at", "processed_at", "outcome", "attempts"]
    list_filter = ["provider", "outcome"]
    search_fields = ["event_id"]


@admin.register(TikTokPost)
class TikTokPostAdmin(admin.ModelAdmin):
    """Videos posted through JoyBack, read-only: what was sent is the disclosure's evidence."""

    list_display = ["id", "campaign", "identity", "status", "failure", "publish_id", "post_id", "created_at"]
    list_filter = ["status", "failure"]
    list_select_related = ["campaign", "identity"]
    search_fields = ["publish_id", "post_id"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
