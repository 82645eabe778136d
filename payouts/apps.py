from django.apps import AppConfig


class PayoutsConfig(AppConfig):
    name = "payouts"

    def ready(self):
        # deferred: ready() runs once every app's models are loaded
        from joyback.queue import standing_work_register
        from payouts.models import TransferEvent
        from payouts.payees.services import SUBMISSION_MAX_ATTEMPTS, payee_submissions_process
        from payouts.providers import providers_register
        from payouts.selectors import payee_submissions_unfinished
        from payouts.submission.webhooks import TRANSFER_EVENT_MAX_ATTEMPTS, transfer_events_process

        providers_register()

        standing_work_register(
            name="bank details",
            claim_and_process=payee_submissions_process,
            unfinished=payee_submissions_unfinished(),
            max_attempts=SUBMISSION_MAX_ATTEMPTS,
            arrived_field="created_at",
        )
        # deferred: ready() runs once every app's models are loaded
        from payouts.pipeline import payouts_due_process, payouts_gather, payouts_senders_stop
        from verification.models import Participant
        from verification.services.rewards import PAYOUTS_DUE

        standing_work_register(
            name=PAYOUTS_DUE,
            claim_and_process=payouts_due_process,
            unfinished=Participant.objects.filter(payout_due_at__isnull=False),
            max_attempts=None,
            arrived_field="payout_due_at",
            gather=payouts_gather,
            stop=payouts_senders_stop,
        )
        standing_work_register(
            name="payment provider webhooks",
            claim_and_process=transfer_events_process,
            unfinished=TransferEvent.objects.filter(processed_at__isnull=True),
            max_attempts=TRANSFER_EVENT_MAX_ATTEMPTS,
            arrived_field="received_at",
        )
        # deferred: ready() runs once every app's models are loaded
        from payouts.funding.services import VIRTUAL_ACCOUNT_MAX_ATTEMPTS, virtual_accounts_open
        from payouts.models import VirtualAccount

        standing_work_register(
            name="virtual accounts",
            claim_and_process=virtual_accounts_open,
            unfinished=VirtualAccount.objects.filter(status="requested"),
            max_attempts=VIRTUAL_ACCOUNT_MAX_ATTEMPTS,
            arrived_field="requested_at",
        )
