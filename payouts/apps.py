from django.apps import AppConfig


class PayoutsConfig(AppConfig):
    # Its standing work (bank details, payouts due, the provider's webhooks, virtual accounts) is
    # declared with every other kind in joyback.background.
    name = "payouts"

    def ready(self):
        # deferred: ready() runs once every app's models are loaded
        from payouts.providers import providers_register

        providers_register()
