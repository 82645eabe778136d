from django.apps import AppConfig


class PayoutsConfig(AppConfig):
    name = "payouts"

    def ready(self):
        from joyback.queue import standing_work_register
        from payouts.models import TransferEvent
        from payouts.payees.services import SUBMISSION_MAX_ATTEMPTS, payee_submissions_process
        from payouts.selectors import payee_submissions_unfinished
        from payouts.submission.webhooks import TRANSFER_EVENT_MAX_ATTEMPTS, transfer_events_process

        standing_work_register(
            name="bank details",
            claim_and_process=payee_submissions_process,
            unfinished=payee_submissions_unfinished(),
            max_attempts=SUBMISSION_MAX_ATTEMPTS,
            arrived_field="created_at",
        )
        standing_work_register(
            name="payment provider webhooks",
            claim_and_process=transfer_events_process,
            unfinished=TransferEvent.objects.filter(processed_at__isnull=True),
            max_attempts=TRANSFER_EVENT_MAX_ATTEMPTS,
            arrived_field="received_at",
        )
