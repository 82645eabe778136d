from django.contrib import admin, messages

from joyback.admin import (
    ProductMadeAdmin,
    ReasonActionForm,
    StandingWorkAdmin,
    action_reason,
    action_record,
    admin_money,
)
from verification.models import (
    ActionClaim,
    ConsentRecord,
    Identity,
    LicenceGrant,
    Participant,
    ProviderEvent,
    ReachTopUp,
    ReferralClick,
    ReferralCode,
    SparkAdsCode,
    TikTokPost,
    VideoMetric,
)
from verification.services.refusals import ClaimRefused
from verification.services.review import claim_review


class IdentityInline(admin.TabularInline):
    model = Identity
    extra = 0
    fields = ["provider", "subject", "display_name", "verified_at"]
    readonly_fields = fields


@admin.register(Participant)
class ParticipantAdmin(ProductMadeAdmin):
    list_display = ["id", "brand", "created_at"]
    list_select_related = ["brand"]
    exclude = ["token"]  # the private status link is the person's, not the admin's
    inlines = [IdentityInline]


DONE = {"approve": "approved", "reject": "rejected"}


def _review(modeladmin, request, claims, decision: str) -> None:
    """The review queue's decision, from the admin: through the same service, with who and why."""
    reason = action_reason(modeladmin, request)
    if not reason:
        return
    done = 0
    for claim in claims:
        try:
            claim_review(claim=claim, decided_by=request.user, decision=decision, reason=reason)
        except ClaimRefused as refused:
            messages.error(request, f"Claim #{claim.pk}: {refused.message}")
            continue
        action_record(modeladmin, request, claim, action=f"Claim {DONE[decision]}", reason=reason)
        done += 1
    if done:
        messages.success(request, f"{done} claim(s) {DONE[decision]}.")


@admin.register(ActionClaim)
class ActionClaimAdmin(admin.ModelAdmin):
    """Claims are made by the product (a verified action) and decided by the review service: no "Add",
    and the status changes only through the actions below, never by editing the field."""

    list_display = [
        "id",
        "campaign",
        "rule",
        "identity",
        "status",
        "reason",
        "amount_display",
        "created_at",
    ]
    list_filter = ["status", "rule__trigger"]
    list_select_related = ["campaign", "rule", "identity"]
    exclude = ["amount"]
    readonly_fields = ["amount_display", *(f.name for f in ActionClaim._meta.fields if f.name != "amount")]
    actions = ["approve", "reject"]
    action_form = ReasonActionForm

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="Amount", ordering="amount")
    def amount_display(self, claim):
        return admin_money(claim.amount, claim.currency)

    @admin.action(description="Approve (pays the held reward)", permissions=["change"])
    def approve(self, request, queryset):
        _review(self, request, queryset, "approve")

    @admin.action(description="Reject (releases or takes back the reward)", permissions=["change"])
    def reject(self, request, queryset):
        _review(self, request, queryset, "reject")


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


class ReadOnlyAdmin(ProductMadeAdmin):
    """Records the product writes through its services: shown, never edited here."""

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(ReachTopUp)
class ReachTopUpAdmin(ReadOnlyAdmin):
    list_display = ["claim", "level", "amount", "views", "ledger_transaction_id", "created_at"]


@admin.register(VideoMetric)
class VideoMetricAdmin(ReadOnlyAdmin):
    list_display = ["claim", "at", "found", "views", "likes", "comments", "outcome", "paid_after"]


@admin.register(LicenceGrant)
class LicenceGrantAdmin(ReadOnlyAdmin):
    list_display = ["claim", "terms", "participant", "language", "granted_at", "revoked_at"]
    list_select_related = ["terms__campaign"]


@admin.register(SparkAdsCode)
class SparkAdsCodeAdmin(ReadOnlyAdmin):
    list_display = ["claim", "valid_days", "authorised_at", "expires_at", "expired_at"]
    exclude = ["code"]  # the brand's to use; the admin sees when it is valid, not the code


@admin.register(ReferralCode)
class ReferralCodeAdmin(ReadOnlyAdmin):
    list_display = ["code", "campaign", "participant", "identity", "created_at"]
    list_select_related = ["campaign", "identity"]
    search_fields = ["code"]


@admin.register(ReferralClick)
class ReferralClickAdmin(ReadOnlyAdmin):
    list_display = ["public_id", "code", "created_at"]
    exclude = ["device", "client_ip"]  # a browser's and an address's traces: compared, never browsed


@admin.register(ConsentRecord)
class ConsentRecordAdmin(ProductMadeAdmin):
    """The consent ledger as a regulator reads it: every consent and withdrawal, the words shown,
    the brand, channel, time and proof. Append-only: nothing here changes or deletes a row."""

    list_display = ["id", "brand", "participant", "channel", "action", "source", "at", "proof"]
    list_filter = ["channel", "action", "source"]
    list_select_related = ["brand"]
    search_fields = ["proof", "identity__subject"]
    readonly_fields = [field.name for field in ConsentRecord._meta.fields]

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
