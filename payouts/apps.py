from django.apps import AppConfig


class PayoutsConfig(AppConfig):
    # Its standing work (bank details, payouts due, the provider's webhooks, virtual accounts) is
    # declared with every other kind in joyback.background.
    name = "payouts"
