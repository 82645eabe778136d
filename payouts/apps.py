from django.apps import AppConfig


class PayoutsConfig(AppConfig):
    name = "payouts"

    def ready(self):
        from joyback.queue import standing_work_register
        from payouts.services import payee_submissions_process

        standing_work_register(name="bank details", claim_and_process=payee_submissions_process)
