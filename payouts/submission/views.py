"""The provider's transfer webhooks: verified and stored here, applied by the worker."""

from django.http import HttpResponse
from django.views.decorators.http import require_POST

from joyback.machine import machine_endpoint
from payouts.submission.webhooks import TransferWebhookRefused, transfer_webhook_receive


@machine_endpoint
@require_POST
def adyen_webhook(request):
    """Adyen's balance platform transfer webhooks: verified, stored, answered; applied by the worker."""
    try:
        transfer_webhook_receive(body=request.body, headers=request.headers)
    except TransferWebhookRefused as refused:
        return HttpResponse(refused.message, status=refused.status, content_type="text/plain")
    return HttpResponse("[accepted]", content_type="text/plain")
