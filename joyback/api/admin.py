from django.contrib import admin

from joyback.admin import StandingWorkAdmin
from joyback.api.models import ApiKey, InboundEvent, WebhookDelivery, WebhookEndpoint, WebhookEvent


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["prefix", "name", "brand_id", "scopes", "last_used_at", "revoked_at"]
    exclude = ["secret_hash"]
    readonly_fields = ["prefix", "brand_id", "last_used_at", "replaced_by"]


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    list_display = ["url", "brand_id", "enabled", "created_at"]
    exclude = ["secret", "previous_secret"]


@admin.register(WebhookEvent)
class WebhookEventAdmin(admin.ModelAdmin):
    list_display = ["id", "type", "brand_id", "created_at"]
    list_filter = ["type"]


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = ["event", "endpoint", "status", "attempts", "last_status_code", "next_attempt_at"]
    list_filter = ["status"]


@admin.register(InboundEvent)
class InboundEventAdmin(StandingWorkAdmin):
    """What brands reported; "received" with attempts used up is what the standing worker gave up on."""

    list_display = ["id", "type", "brand_id", "status", "created_at", "processed_at", "attempts"]
    list_filter = ["status", "type"]
