from django.apps import AppConfig


class VerificationConfig(AppConfig):
    name = "verification"

    def ready(self):
        from joyback.queue import standing_work_register
        from verification.inbox import inbound_events_process
        from verification.services import provider_events_process

        standing_work_register(name="provider webhook events", claim_and_process=provider_events_process)
        standing_work_register(name="API events", claim_and_process=inbound_events_process)
