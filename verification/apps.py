from django.apps import AppConfig


class VerificationConfig(AppConfig):
    name = "verification"

    def ready(self):
        # deferred: ready() runs once every app's models are loaded
        import verification.connectors  # noqa: F401  (registers the shops' delivery processors)
        from joyback.api.selectors import inbound_events_unfinished
        from joyback.queue import standing_work_register
        from verification.inbox import inbound_events_process
        from verification.selectors import provider_events_unfinished
        from verification.services.provider_events import EVENT_MAX_ATTEMPTS, provider_events_process

        standing_work_register(
            name="provider webhook events",
            claim_and_process=provider_events_process,
            unfinished=provider_events_unfinished(),
            max_attempts=EVENT_MAX_ATTEMPTS,
            arrived_field="received_at",
        )
        standing_work_register(
            name="API events",
            claim_and_process=inbound_events_process,
            unfinished=inbound_events_unfinished(),
            max_attempts=EVENT_MAX_ATTEMPTS,
            arrived_field="created_at",
        )
