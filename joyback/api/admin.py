from django.contrib import admin

from joyback.admin import ProductMadeAdmin, StandingWorkAdmin
from joyback.api.models import ApiKey, InboundEvent, WebhookDelivery, WebhookEndpoint, WebhookEvent


@admin.register(ApiKey)
class ApiKeyAdmin(ProductMadeAdmin):
    list_display = ["prefix", "name", "brand_id", "scopes", "last_used_at", "revoked_at"]
    exclude = ["secret_hash"]
    readonly_fields = ["prefix", "brand_id", "last_used_at", "replaced_by"]


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(ProductMadeAdmin):
    list_display = ["url", "brand_id", "enabled", "created_at"]
    exclude = ["secret", "previous_secret"]
    # The address was checked against private networks when the brand saved it: not editable here.
    readonly_fields = ["url", "brand_id", "created_at"]


@admin.register(WebhookEvent)
class WebhookEventAdmin(ProductMadeAdmin):
    list_display = ["id", "type", "brand_id", "created_at"]
    list_filter = ["type"]


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ProductMadeAdmin):
    list_display = ["event", "endpoint", "status", "attempts", "last_status_code", "next_attempt_at"]
    list_filter = ["status"]


@admin.register(InboundEvent)
class InboundEventAdmin(StandingWorkAdmin):
    """What brands reported; "received" with attempts used up is what the standing worker gave up on."""

    list_display = ["id", "type", "brand_id", "status", "created_at", "processed_at", "attempts"]
    list_filter = ["status", "type"]
