from django.apps import AppConfig


class PayoutsConfig(AppConfig):
    # Its standing work (bank details, payouts due, the provider's webhooks, virtual accounts) is
    # declared with every other kind in joyback.background.
    name = "payouts"

    def ready(self):
        # deferred: ready() runs once every app's models are loaded
        from joyback.users.four_eyes import staff_grant_applier_register
        from joyback.users.models import AccessChangeKind
        from payouts.funding.custody import custody_move_grant_apply
        from payouts.providers import providers_register

        providers_register()
        staff_grant_applier_register(AccessChangeKind.CUSTODY_MOVE, custody_move_grant_apply)
